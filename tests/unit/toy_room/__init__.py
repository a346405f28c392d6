"""A check gpulabel does not ship, written as CONTRIBUTING.md's "Adding a check" says: one folder (its rules and
its definition), copied into ``src/gpulabel/checks/`` by ``tests/unit/test_adding_a_check.py`` with one line
added to the registry."""

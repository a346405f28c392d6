"""One build in the repository's tree at a time, across pytest-xdist workers (scripts/test.sh runs four).

``python -m build REPO`` (tests/package/test_wheel.py) and ``pip install REPO``
(tests/cluster/test_dependency_floors.py) both run setuptools' ``egg_info`` in the source tree, which
rewrites ``src/gpulabel.egg-info/`` (``SOURCES.txt`` among it) in place; two at once can read each
other's half-written manifest. An exclusive ``flock`` on a file named after the tree keeps them apart.
"""

from __future__ import annotations

import fcntl
import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def in_tree_build(repo: Path) -> Iterator[None]:
    """Hold the tree's build lock for the ``with`` block (blocks until the other build is done)."""
    digest = hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"gpulabel-in-tree-build-{digest}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

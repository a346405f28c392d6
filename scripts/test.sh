#!/usr/bin/env bash
# The whole test suite, control plane included: setup, lint, type-check, build
# labcluster, then every test (unit tests on snapshots and tests on labcluster).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/install-test-deps.sh
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/lint-imports --no-cache  # the layers' import contract (pyproject.toml)
labcluster/build  # cached: seconds when warm; a cold Go cache compiles Kubernetes (~20 min on 2 cores)
set +e
.venv/bin/pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
    echo "test: pytest collected no tests" >&2
    exit 1
fi
exit "$code"

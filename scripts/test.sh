#!/usr/bin/env bash
# The whole test suite, control plane included: setup, lint, type-check, build labcluster, the GPU
# Operator, helm, prometheus and krew and build and smoke-test the container image (scripts/build-tools.sh,
# at once), then every test (unit tests on snapshots, the wheel and the Helm chart, the browser, tests on
# labcluster) on four pytest workers. CONTRIBUTING.md ("A cold CI") has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/install-test-deps.sh
.venv/bin/ruff check src tests bench tools
.venv/bin/ruff format --check src tests bench tools
.venv/bin/mypy
.venv/bin/lint-imports --no-cache  # the layers' import contract (pyproject.toml)
bash scripts/build-tools.sh  # labcluster, the GPU Operator, helm, prometheus, krew and the image, in three lanes at once; each cached
set +e
export GPULABEL_REQUIRE_CLUSTER=1  # labcluster was built above: a cluster test must run, never skip
# Four workers (pytest-xdist; --dist loadfile keeps a file's tests on one worker, in order): most of
# the cluster tests' time is waiting on a control plane (the slowest wait out a minute on purpose), so
# the waits overlap each other and the unit tests' CPU. Each worker starts its own session clusters.
.venv/bin/pytest -n "${GPULABEL_TEST_WORKERS:-4}" --durations=30 "$@"  # the 30 slowest tests at the end
code=$?
set -e
if [ "$code" -eq 5 ]; then
    echo "test: pytest collected no tests" >&2
    exit 1
fi
exit "$code"

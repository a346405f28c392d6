#!/usr/bin/env bash
# The whole test suite, control plane included: setup, lint, type-check, build labcluster, the GPU
# Operator, helm, prometheus, krew, Karpenter and Kueue and build and smoke-test the container image (scripts/build-tools.sh,
# at once), then every test (unit tests on snapshots, the wheel and the Helm chart, the browser, tests on
# labcluster) on pytest-xdist workers. CONTRIBUTING.md ("A cold CI") has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/install-test-deps.sh
.venv/bin/ruff check src tests bench tools
.venv/bin/ruff format --check src tests bench tools
.venv/bin/mypy
.venv/bin/lint-imports --no-cache  # the layers' import contract (pyproject.toml)
bash scripts/build-tools.sh  # labcluster, the GPU Operator, helm, prometheus, krew, Karpenter, Kueue and the image, in three lanes at once; each cached
export GPULABEL_REQUIRE_CLUSTER=1  # labcluster was built above: a cluster test must run, never skip
# pytest in two phases: the tests that use the CPU (unit tests on snapshots, the wheel, the browser) on
# two pytest-xdist workers, one per core (--dist loadfile keeps a file's tests on one worker, in order);
# then the cluster tests, mostly waiting on control planes, on GPULABEL_CLUSTER_WORKERS workers (default
# 2; 0 runs them in this one process), each with its own session clusters: a worker runs an ascending
# subset of the files, so each file waits out what it deletes and keeps its nodes its own (CONTRIBUTING.md
# "A cold CI"). --durations: where the time goes.
codes=()
set +e
.venv/bin/pytest -n 2 -m 'not cluster' --durations=15 "$@"
codes+=($?)
.venv/bin/pytest -n "${GPULABEL_CLUSTER_WORKERS:-2}" -m cluster --durations=15 "$@"
codes+=($?)
set -e
if [ "${codes[0]}" -eq 5 ] && [ "${codes[1]}" -eq 5 ]; then
    echo "test: pytest collected no tests" >&2
    exit 1
fi
for code in "${codes[@]}"; do # 5: that phase had nothing to run (a path given to test.sh)
    if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then
        exit "$code"
    fi
done

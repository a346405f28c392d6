#!/usr/bin/env bash
# The whole test suite, control plane included: setup, lint, type-check, build
# labcluster and helm, build and smoke-test the container image, then every test (unit tests on
# snapshots, the wheel and the Helm chart, tests on labcluster).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/install-test-deps.sh
.venv/bin/ruff check src tests bench tools
.venv/bin/ruff format --check src tests bench tools
.venv/bin/mypy
.venv/bin/lint-imports --no-cache  # the layers' import contract (pyproject.toml)
labcluster/build  # cached: seconds when warm; a cold Go cache compiles Kubernetes (~20 min on 2 cores)
labcluster/gpu-operator/build  # cached; the real NVIDIA GPU Operator, a cold cache: 282-507 s here
tools/helm/build  # cached like labcluster; a cold Go cache: ~5 min of CPU (tests/package, tests/cluster/test_chart_cluster.py)
tools/prometheus/build  # cached like helm; prometheus + promtool for the alert rules and the monitor test; a cold Go cache: 273 s here (docs/install.md)
tools/krew/build  # cached like helm; krew for the plugin-install test (tests/cluster/test_krew_cluster.py); a cold Go cache: 183 s wall, 52 s CPU
bash scripts/build-image.sh  # the container image, smoke-tested inside; ~1.5 min warm, ~5 min with a new base
set +e
export GPULABEL_REQUIRE_CLUSTER=1  # labcluster was built above: a cluster test must run, never skip
.venv/bin/pytest --durations=30 "$@"  # the 30 slowest tests at the end: where the CI time goes (issue 31)
code=$?
set -e
if [ "$code" -eq 5 ]; then
    echo "test: pytest collected no tests" >&2
    exit 1
fi
exit "$code"

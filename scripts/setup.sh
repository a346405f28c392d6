#!/usr/bin/env bash
# Create .venv/ at the repository root and install gpulabel with its dev tools.
# Idempotent: a second run only re-checks the install. Versions are pinned by constraints.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "setup: gpulabel needs Python >= 3.11 ($PY is $("$PY" -V 2>&1))" >&2; exit 2; }
    "$PY" -m venv .venv
fi
stamp=.venv/.gpulabel-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
    touch "$stamp"
fi

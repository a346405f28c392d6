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
# The stamp holds a digest of what the install depends on (not a time: a merge or checkout can leave
# an older mtime on a changed file).
stamp=.venv/.gpulabel-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
    echo "$want" >"$stamp"
fi
# The editable install reads src/ through a path entry (.venv's __editable__.gpulabel-*.pth), so its
# bytecode is src/gpulabel/__pycache__; machines that set PYTHONDONTWRITEBYTECODE never write it and pay
# for compiling every module at each start (gpulabel --help: 0.23-0.26 s instead of under 0.1 s).
# compileall writes it whatever that variable says, and recompiles only what changed since.
.venv/bin/python -m compileall -q src/gpulabel

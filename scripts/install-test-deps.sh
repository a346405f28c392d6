#!/usr/bin/env bash
# Test dependencies that are not Python packages: headless Chromium (Debian package chromium,
# /usr/bin/chromium) for tests/browser. Idempotent: does nothing when Chromium is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-deps: /usr/bin/chromium is missing and this machine has no apt-get; install Chromium by hand" >&2
    exit 2
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 \
        || { echo "install-test-deps: installing chromium needs root (or sudo)" >&2; exit 2; }
    as_root=(sudo)
fi
echo "install-test-deps: installing chromium with apt-get" >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
test -x /usr/bin/chromium || { echo "install-test-deps: apt-get installed chromium but /usr/bin/chromium is missing" >&2; exit 2; }

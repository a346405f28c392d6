#!/usr/bin/env bash
# What scripts/build-image.sh needs that is not a Python package: podman (builds with
# --isolation chroot, no OCI runtime needed) and mmdebstrap (the base image from Debian's
# packages). Idempotent: does nothing when both are there. Waits for a dpkg lock held by
# another apt-get. Exit 2, with one line, when they cannot be installed here.
set -euo pipefail
if command -v podman >/dev/null 2>&1 && command -v mmdebstrap >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-image-deps: podman and mmdebstrap are missing and this machine has no apt-get" >&2
    exit 2
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 \
        || { echo "install-image-deps: installing podman and mmdebstrap needs root (or sudo)" >&2; exit 2; }
    as_root=(sudo)
fi
apt() {
    # another apt-get (another worker, unattended upgrades) may hold the lock: wait, then retry
    local attempt
    for attempt in 1 2 3 4 5 6; do
        if "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 -qq "$@"; then
            return 0
        fi
        echo "install-image-deps: apt-get $1 failed (attempt $attempt), retrying in 20 s" >&2
        sleep 20
    done
    return 1
}
echo "install-image-deps: installing podman and mmdebstrap with apt-get" >&2
apt update
apt install -y --no-install-recommends podman mmdebstrap >/dev/null
command -v podman >/dev/null && command -v mmdebstrap >/dev/null \
    || { echo "install-image-deps: apt-get ran but podman or mmdebstrap is still missing" >&2; exit 2; }

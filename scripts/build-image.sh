#!/usr/bin/env bash
# Build the gpulabel container image, smoke-test it, and write dist/gpulabel-<version>.oci.tar.
#
#   1. base: a Debian root filesystem made by mmdebstrap from Debian's packages (release
#      $DEBIAN_RELEASE: python3 3.11, python3-venv; no compiler), imported with podman as
#      localhost/gpulabel-base:$DEBIAN_RELEASE and reused for $BASE_MAX_AGE_DAYS days;
#   2. sdist and wheel (python -m build, also copied to dist/) and every dependency wheel pinned by constraints.txt,
#      downloaded on the host, so the image build itself is offline;
#   3. podman build --isolation chroot (RUN steps without an OCI runtime) of deploy/Containerfile;
#   4. smoke test without a container runtime: podman image mount, then chroot into the image as
#      its configured user, entrypoint and environment: --help, `check --snapshot` on both bundled
#      examples (exact output and exit code of the same source run outside the image),
#      `sync --help`, `kubectl-gpulabel --help`; no compiler and no pip in the image;
#   5. podman save --format oci-archive.
#
# Needs root (podman's rootful storage, chroot). Installs podman and mmdebstrap through
# scripts/install-image-deps.sh. When this machine cannot build images it says so in one line
# ("build-image: this machine cannot build images: ...") and exits 3.
# Usage: scripts/build-image.sh [--rebuild-base]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

DEBIAN_RELEASE=bookworm # python3 3.11 (gpulabel needs >= 3.11)
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
BASE_MAX_AGE_DAYS=${BASE_MAX_AGE_DAYS:-7}
base_image=localhost/gpulabel-base:$DEBIAN_RELEASE
rebuild_base=0
[ "${1:-}" = "--rebuild-base" ] && rebuild_base=1

say() { echo "build-image: $*" >&2; }
cannot() {
    echo "build-image: this machine cannot build images: $*" >&2
    exit 3
}
t0=$(date +%s)
phase_start=$t0
phase() { # name of the phase that just ended
    local now
    now=$(date +%s)
    timings+=("$1 $((now - phase_start))s")
    phase_start=$now
}
timings=()

[ "$(id -u)" -eq 0 ] || cannot "it needs root (podman's rootful storage and chroot for the smoke test)"
if ! bash scripts/install-image-deps.sh; then
    cannot "podman and mmdebstrap are missing and could not be installed (scripts/install-image-deps.sh)"
fi
if ! info_err=$(podman info 2>&1 >/dev/null); then
    cannot "podman info failed: $(printf '%s\n' "$info_err" | grep -v '^\s*$' | tail -1)"
fi
bash scripts/setup.sh # the repository's venv: python -m build, pip download, the reference output

work=$(mktemp -d /tmp/gpulabel-image.XXXXXX)
mounted=""
cleanup() {
    if [ -n "$mounted" ]; then podman image unmount "$mounted" >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# 1. the base image
base_fresh() {
    local created
    created=$(podman image inspect --format '{{.Created.Unix}}' "$base_image" 2>/dev/null) || return 1
    [ $(($(date +%s) - created)) -lt $((BASE_MAX_AGE_DAYS * 86400)) ]
}
if [ "$rebuild_base" -eq 1 ] || ! base_fresh; then
    say "making $base_image with mmdebstrap ($DEBIAN_RELEASE, from Debian's packages)"
    # no documentation but the copyright files; the apt lists and caches are left out by mmdebstrap
    mmdebstrap --quiet --variant=essential --include=python3,python3-venv \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        "$DEBIAN_RELEASE" "$work/rootfs.tar" \
        "deb $DEBIAN_MIRROR $DEBIAN_RELEASE main" \
        "deb $DEBIAN_MIRROR $DEBIAN_RELEASE-updates main" \
        "deb $DEBIAN_SECURITY_MIRROR $DEBIAN_RELEASE-security main"
    previous_base=$(podman image inspect --format '{{.Id}}' "$base_image" 2>/dev/null || true)
    podman import --quiet --change 'CMD ["/bin/sh"]' "$work/rootfs.tar" "$base_image" >/dev/null
    if [ -n "$previous_base" ]; then podman rmi "$previous_base" >/dev/null 2>&1 || true; fi
    rm -f "$work/rootfs.tar"
else
    say "reusing $base_image (younger than $BASE_MAX_AGE_DAYS days; --rebuild-base to remake it)"
fi
phase base

# 2. the wheel and its pinned dependencies, as the image's Python (cp311, this machine's arch) needs them
ctx=$work/context
mkdir -p "$ctx/wheels" "$ctx/examples" dist
# sdist first, the wheel from the unpacked sdist: a stale setuptools build/ directory cannot leak in
.venv/bin/python -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { tail -20 "$work/build.log" >&2; say "python -m build failed"; exit 1; }
wheel=$(ls "$work"/dist/gpulabel-*.whl)
version=$(basename "$wheel" | cut -d- -f2)
cp "$wheel" "$ctx/wheels/"
cp "$wheel" "$work"/dist/gpulabel-*.tar.gz dist/
arch=$(uname -m)
platforms=(--platform any --platform "manylinux2014_$arch") # the image's glibc is 2.36: manylinux_2_17..36
for minor in $(seq 17 36); do platforms+=(--platform "manylinux_2_${minor}_$arch"); done
.venv/bin/pip download --quiet --disable-pip-version-check --dest "$ctx/wheels" -c constraints.txt \
    --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 --abi abi3 --abi none \
    "${platforms[@]}" "$wheel"
cp examples/*.yaml "$ctx/examples/"
cp deploy/Containerfile "$ctx/Containerfile"
phase wheels

# 3. the image
image=localhost/gpulabel:$version
say "podman build $image"
previous=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
podman build --quiet --layers=false --isolation chroot --build-arg "BASE=$base_image" --build-arg "VERSION=$version" \
    --tag "$image" "$ctx" >/dev/null
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect --format '{{.Id}}' "$image")" ]; then
    podman rmi "$previous" >/dev/null 2>&1 || true # the image this build replaced
fi
phase build

# 4. smoke test inside the image: its own user, entrypoint and environment, no container runtime
mounted=$image
mnt=$(podman image mount "$image")
user=$(podman image inspect --format '{{.Config.User}}' "$image")
entrypoint=$(podman image inspect --format '{{range .Config.Entrypoint}}{{.}} {{end}}' "$image")
mapfile -t image_env < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | grep -v '^$')
[ "$user" = "65532:65532" ] || { say "smoke test: image user is '$user', expected 65532:65532"; exit 1; }
in_image() { # run the image's entrypoint with these arguments, as the image's user
    chroot --userspec="$user" --groups="" "$mnt" env -i "${image_env[@]}" HOME=/nonexistent $entrypoint "$@"
}
fail() {
    say "smoke test failed: $*"
    exit 1
}
out=$(in_image --help) || fail "gpulabel --help exited $?"
grep -q '^usage: gpulabel' <<<"$out" || fail "gpulabel --help printed no usage line"
out=$(in_image --version) || fail "gpulabel --version exited $?"
[ "$out" = "gpulabel $version" ] || fail "gpulabel --version printed '$out', expected 'gpulabel $version'"
for example in lab-cluster drifted-lab; do
    set +e
    want=$(.venv/bin/gpulabel check --snapshot "examples/$example.yaml" 2>&1)
    want_code=$?
    got=$(in_image check --snapshot "/usr/share/gpulabel/examples/$example.yaml" 2>&1)
    got_code=$?
    set -e
    if [ "$got" != "$want" ] || [ "$got_code" -ne "$want_code" ]; then
        diff <(echo "$want") <(echo "$got") >&2 || true
        fail "check --snapshot $example.yaml: exit $got_code in the image, $want_code outside; output above (- outside, + image)"
    fi
done
[ "$want_code" -eq 1 ] || fail "check on the drifted lab exited $want_code, expected 1 (findings)"
out=$(in_image sync --help) || fail "gpulabel sync --help exited $?"
grep -q -- '--leader-elect' <<<"$out" || fail "gpulabel sync --help does not mention --leader-elect"
out=$(chroot --userspec="$user" --groups="" "$mnt" env -i "${image_env[@]}" kubectl-gpulabel --help) \
    || fail "kubectl-gpulabel --help exited $?"
for tool in cc gcc c++ g++ clang make pip pip3; do
    found=$(chroot "$mnt" /bin/sh -c "PATH=/opt/gpulabel/bin:/usr/local/bin:/usr/bin:/bin command -v $tool" || true)
    [ -z "$found" ] || fail "the image contains $found"
done
writable=$(find "$mnt/opt/gpulabel" ! -type l \( -uid 65532 -o -perm -o+w \) -print -quit)
[ -z "$writable" ] || fail "the image's user can write ${writable#"$mnt"}"
podman image unmount "$image" >/dev/null
mounted=""
phase smoke-test

# 5. the archive
archive=dist/gpulabel-$version.oci.tar
rm -f "$archive"
podman save --quiet --format oci-archive --output "$archive" "$image"
phase save

size=$(podman image inspect --format '{{.Size}}' "$image")
say "built $image: image $((size / 1000000)) MB, $archive $(($(stat -c %s "$archive") / 1000000)) MB;" \
    "$(($(date +%s) - t0)) s (${timings[*]}); smoke test passed"

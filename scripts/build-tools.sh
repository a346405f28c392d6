#!/usr/bin/env bash
# Build what the tests run, in three lanes at once (what scripts/test.sh calls):
#   A. labcluster/build: Kubernetes, the longest build (its own priority);
#   B. labcluster/gpu-operator/build, tools/prometheus/build, tools/krew/build, then
#      labcluster/karpenter/build (Karpenter's kwok provider, issue 45), one after the other at
#      `nice -n 5`: the module downloads of B and C all start at once up front, and their compiles
#      take the CPU that A leaves (A's downloads, its package loading, its link);
#   C. scripts/build-image.sh (the container image: mostly Debian downloads and podman), then
#      tools/helm/build, then labcluster/kueue/build (Kueue's manager, issue 49), at `nice -n 5`.
#      Helm sits here because B was the long lane of a cold run (2026-12-02: A 1,346 s, B 1,741 s
#      with helm, C 913 s); the quiet cold run had the three lanes even (A 718 s, B 841 s, C 829 s),
#      so Karpenter (290 s CPU) and Kueue (459 s CPU) go one to each of B and C. CONTRIBUTING.md,
#      "A cold CI".
# Every build script is cached on its own (a no-op when its output is fresh), so a warm run takes
# seconds. Each lane's output goes to a log; a failed step prints the tail of its log and makes this
# script exit non-zero after the other lanes have finished. Ends with one line of seconds per step.
# CONTRIBUTING.md ("A cold CI") has the figures. Usage: scripts/build-tools.sh
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d /tmp/gpulabel-build.XXXXXX)
trap 'rm -rf "$logs"' EXIT
if ! command -v go >/dev/null 2>&1; then
    export PATH="/usr/local/go/bin:$PATH"
fi
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

# step NAME CMD...: run CMD with its output in $logs/NAME.log; record its seconds and exit code
step() {
    local name=$1 start rc=0
    shift
    start=$(date +%s)
    "$@" >"$logs/$name.log" 2>&1 || rc=$?
    echo "$name $(($(date +%s) - start))s" >"$logs/$name.time"
    echo "$rc" >"$logs/$name.rc"
    return "$rc"
}

# The Go module downloads of B and C (helm), all at once (network, not CPU); a no-op for a module whose build is fresh
# or whose modules are in the module cache already.
prefetch() {
    local dir pids=()
    for dir in labcluster/gpu-operator tools/helm tools/prometheus tools/krew labcluster/karpenter labcluster/kueue; do
        (cd "$dir" && go mod download) &
        pids+=($!)
    done
    local pid rc=0
    for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
    return "$rc"
}

lane_b() {
    step go-mod-download prefetch || true # a failed download fails again, with its reason, in its build
    step gpu-operator labcluster/gpu-operator/build || return
    step prometheus tools/prometheus/build || return
    step krew tools/krew/build || return
    step karpenter labcluster/karpenter/build
}

lane_c() {
    step image bash scripts/build-image.sh
    step helm tools/helm/build # after the image whatever its outcome: its own log says why it failed
    step kueue labcluster/kueue/build
}

start=$(date +%s)
step labcluster labcluster/build &
a=$!
nice -n 5 bash -c "$(declare -f step prefetch lane_b); logs=$logs; lane_b" &
b=$!
nice -n 5 bash -c "$(declare -f step lane_c); logs=$logs; lane_c" &
c=$!
code=0
for pid in $a $b $c; do wait "$pid" || code=1; done

for name in labcluster go-mod-download gpu-operator helm prometheus krew karpenter kueue image; do
    rc=$(cat "$logs/$name.rc" 2>/dev/null || echo "")
    [ -n "$rc" ] || continue
    if [ "$rc" -ne 0 ] && [ "$name" != go-mod-download ]; then
        echo "build-tools: $name failed (exit $rc); the end of its log:" >&2
        tail -40 "$logs/$name.log" >&2
        code=1
    else
        grep -h '^labcluster/build: built\|^labcluster/gpu-operator/build: built\|^labcluster/karpenter/build: built\|^labcluster/kueue/build: built\|^tools/.*/build: built\|^build-image: built' \
            "$logs/$name.log" >&2 || true
    fi
done
echo "build-tools: $(cat "$logs"/*.time | tr '\n' ' ')in $(($(date +%s) - start))s (lanes at once)" >&2
if [ "$code" -ne 0 ]; then
    echo "build-tools: a build failed (above)" >&2
fi
exit "$code"

#!/usr/bin/env bash
# Measure what CI's Go builds cost on a cold machine, without touching this machine's Go caches:
# every step runs with one private, empty GOCACHE and GOMODCACHE (shared by the steps, as on a fresh
# CI machine) under `nice -n 19`. Per step it records the module downloads (`go mod download` of the
# modules the step's packages need) and then the build script itself (`--force`), each with wall
# time and CPU time (user + sys of the process and its children, /usr/bin/time).
# CPU seconds are the steady figure on a shared machine; the wall time depends on the load.
#
# Usage: scripts/cold-build-times.sh [TREE] [OUT.tsv]
#   TREE: a checkout whose build scripts to measure (default: this repository); its bin/ directories
#   are written. OUT: the table (default: /tmp/cold-build-times.<pid>.tsv). STEPS="labcluster helm"
#   measures only those steps; STEPS=karpenter measures labcluster/karpenter/build alone. The private caches are removed afterwards (KEEP_CACHES=1 keeps them).
set -euo pipefail
tree="$(cd "${1:-$(dirname "$0")/..}" && pwd)"
out="${2:-/tmp/cold-build-times.$$.tsv}"
steps="${STEPS:-labcluster gpu-operator helm prometheus krew karpenter kueue}"
export PATH="/usr/local/go/bin:$PATH"
export GOTOOLCHAIN=local CGO_ENABLED=0
GOCACHE="$(mktemp -d /tmp/coldgo-cache.XXXXXX)"
GOMODCACHE="$(mktemp -d /tmp/coldgo-mod.XXXXXX)"
export GOCACHE GOMODCACHE
export GOFLAGS="-buildvcs=false -modcacherw" # -modcacherw: the private module cache can be removed
if [[ "${KEEP_CACHES:-0}" != 1 ]]; then
	trap 'rm -rf "$GOCACHE" "$GOMODCACHE"' EXIT
fi

dir_of() {
	case "$1" in
	labcluster) echo "$tree/labcluster" ;;
	gpu-operator | karpenter) echo "$tree/labcluster/$1" ;;
	kueue) echo "$tree/labcluster/kueue" ;;
	*) echo "$tree/tools/$1" ;;
	esac
}
script_of() {
	case "$1" in
	labcluster | gpu-operator | kueue | karpenter) echo "$(dir_of "$1")/build" ;;
	*) echo "$tree/tools/$1/build" ;;
	esac
}

# time CMD...: append "wall cpu" (seconds) of CMD and its children to $times
timed() {
	local log rc=0
	log="$(mktemp)"
	nice -n 19 /usr/bin/time -f '%e %U %S' -o "$log" "$@" >/dev/null 2>"$log.err" || rc=$?
	if [[ "$rc" -ne 0 ]]; then
		cat "$log.err" >&2
		echo "cold-build-times: $* failed (exit $rc)" >&2
		exit 1
	fi
	read -r wall user sys <"$log"
	rm -f "$log" "$log.err"
	times="$wall $(awk "BEGIN{print $user + $sys}")"
}

printf 'step\tdownload_wall_s\tdownload_cpu_s\tbuild_wall_s\tbuild_cpu_s\tload_before\n' >"$out"
for step in $steps; do
	cd "$(dir_of "$step")"
	load="$(cut -d' ' -f1 /proc/loadavg)"
	# the modules this step's build reads (`go mod download` with no argument fetches the whole graph)
	timed go mod download
	download="$times"
	echo "cold-build-times: $step: go mod download $download (wall s, CPU s); building" >&2
	timed "$(script_of "$step")" --force
	printf '%s\t%s\t%s\t%s\n' "$step" "${download// /$'\t'}" "${times// /$'\t'}" "$load" | tee -a "$out" >&2
done
echo "cold-build-times: $out (GOCACHE $(du -sh "$GOCACHE" | cut -f1), GOMODCACHE $(du -sh "$GOMODCACHE" | cut -f1))" >&2

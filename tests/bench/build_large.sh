#!/bin/sh
# build_large.sh: a library past the 2 GB reach of one x86-64 shared object builds,
# verifies, loads and runs. Prints figures; not part of ninja test (about 9 min of build
# and 4 of run at the default --copies=3000 on 2 cores: run nothing else beside it).
#
# Usage: tests/bench/build_large.sh [--copies N] [--keep]
#   --copies N  copies of every variant (default 3000: 2,097,000 functions, which configure
#               splits over 4 library objects of at most 1,000 copies each; README "Past 2
#               GB of code")
#   --keep      keep the build directory (printed) instead of deleting it
# Steps: tests/bench/build_speed.sh --modes obj --c-copies 0 (configure && ninja from
# scratch: wall, CPU, peak RSS, phases, clone report, text and file bytes per function, the
# leaf's ready time in ms from exec to listening); then, in that build, each library object
# with its .text bytes (`size -A`), verify's summary from manifest.json, and `frontload run
# --quick` (the whole job: mock, leaf, driver, search for the max QPS under the p95 SLA),
# printing its summary and result.json's status, final window and the leaf's ready_ms.
# Exit status: 0 when the build verified and the run completed with its final window
# passing, 1 otherwise (the figures measured so far are still printed), 2 on bad usage.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
copies=3000
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--copies) copies=${2:-}; shift 2 ;;
	--copies=*) copies=${1#*=}; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "build_large.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case $copies in '' | *[!0-9]*) echo "build_large.sh: --copies must be a number" >&2; exit 2 ;; esac

out=$(mktemp /tmp/frontload-build-large.XXXXXX)
sh "$src/tests/bench/build_speed.sh" --copies "$copies" --modes obj --c-copies 0 --keep | tee "$out"
root=$(sed -n 's/^kept: //p' "$out")
rm -f "$out"
b=$root/b-obj
[ -d "$b" ] || { echo "build_large.sh: no build directory from build_speed.sh" >&2; exit 1; }
jq_() { python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

echo
echo "== library objects (configure: $(jq_ "$b/config.json" "m['lib_parts']") part(s))"
for f in "$b"/libfrontload-extract.so "$b"/libfrontload-extract-[0-9]*.so; do
	[ -e "$f" ] || continue
	text=$(size -A "$f" | awk '$1 == ".text" { print $2 }')
	echo "  $(basename "$f"): file $(($(stat -c %s "$f") / 1000000)) MB, .text ${text:-0} bytes"
done
ok=$(jq_ "$b/manifest.json" "m['verify']['ok']")
echo "  verify: ok $ok, $(jq_ "$b/manifest.json" "m['verify']['functions']") functions, $(jq_ "$b/manifest.json" "m['verify']['unique']") unique, text $(jq_ "$b/manifest.json" "m['verify']['text_bytes']") bytes"

echo
echo "== frontload run --quick on it"
rc=0
(cd "$b" && ./frontload run --quick --out "$b/run" >"$b/run.out" 2>"$b/run.log") || rc=$?
sed 's/^/  /' "$b/run.out"
pass=0
if [ -f "$b/run/result.json" ]; then
	echo "  exit $rc; status $(jq_ "$b/run/result.json" "m['status']"), converged $(jq_ "$b/run/result.json" "m['converged']"), sla_bound_qps $(jq_ "$b/run/result.json" "m['sla_bound_qps']"), final_pass $(jq_ "$b/run/result.json" "m['final_pass']"), leaf ready $(jq_ "$b/run/result.json" "m['instances'][0]['leaf_stats'].get('ready_ms')") ms"
	[ "$(jq_ "$b/run/result.json" "m['status']")" = complete ] &&
		[ "$(jq_ "$b/run/result.json" "m['final_pass']")" = True ] && pass=1
else
	echo "  exit $rc; no result.json (see $b/run.log)"
fi
if [ "$keep" = 1 ]; then echo "kept: $root"; else rm -rf "$root"; fi
[ "$ok" = True ] && [ "$pass" = 1 ]

#!/bin/sh
# build_speed.sh: how fast frontload builds, measured on this machine. Prints figures; asserts
# nothing. Usage: tests/bench/build_speed.sh [--copies N] [--modes LIST] [--c-copies M] [--keep]
#   --copies N    copies for the full builds (default 1000: 699,000 functions)
#   --modes LIST  clone modes to build from scratch, comma-separated (default obj,asm): each is
#                 `configure --clone=MODE && ninja` in a fresh directory, timed whole
#   --c-copies M  copies for the compile-every-copy-from-C build (default 20; its per-function
#                 cost is multiplied out for N and labelled as a projection; 0 skips it)
#   --keep        keep the build directories (printed) instead of deleting them
# For each mode it prints the wall time, CPU (user + sys, from /usr/bin/time) and peak RSS of
# ninja, the phase table of tests/bench/ninja_phases.sh (edges, edge-seconds, wall span),
# the clone report (copies written as machine code, as assembly, compiled from C), text and
# library file bytes per function, and the leaf's ready time with that library (ms from exec
# to listening: the leaf's own startup line, without fanout). Needs the packages of .ci/run.
# About 5 min (obj) + 18 min (asm) at --copies=1000 on 2 cores; run nothing else beside it.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
copies=1000
modes=obj,asm
ccopies=20
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--copies) copies=$2; shift 2 ;;
	--copies=*) copies=${1#*=}; shift ;;
	--modes) modes=$2; shift 2 ;;
	--modes=*) modes=${1#*=}; shift ;;
	--c-copies) ccopies=$2; shift 2 ;;
	--c-copies=*) ccopies=${1#*=}; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,16p' "$0"; exit 0 ;;
	*) echo "build_speed.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case $copies in '' | *[!0-9]*) echo "build_speed.sh: --copies must be a number" >&2; exit 2 ;; esac
case $ccopies in '' | *[!0-9]*) echo "build_speed.sh: --c-copies must be a number" >&2; exit 2 ;; esac
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }
jq_() { python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
root=$(mktemp -d /tmp/frontload-bench.XXXXXX)
nfn=$((699 * copies))
echo "machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "compiler: $(cc --version | head -n 1); --copies=$copies ($nfn functions)"

# The leaf's ready time with a build's library: exec to listening, from its startup line.
leaf_ready() {
	b=$1
	"$b/frontload-leaf" --mock none --port 0 --port-file "$b/bench.port" >"$b/bench-leaf.out" 2>&1 &
	pid=$!
	i=0
	while [ ! -s "$b/bench.port" ] && [ $i -lt 600 ] && kill -0 $pid 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	kill $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	r=$(sed -n 's/^  ready: *\([0-9]*\) ms.*/\1/p' "$b/bench-leaf.out")
	echo "${r:-not measured (no ready line: see $b/bench-leaf.out)}"
	rm -f "$b/bench.port"
}

for mode in $(echo "$modes" | tr ',' ' '); do
	b=$root/b-$mode
	mkdir -p "$b"
	t0=$(now)
	(cd "$b" && "$src/configure" --copies="$copies" --clone="$mode" >configure.log) ||
		{ cat "$b/configure.log"; exit 1; }
	(cd "$b" && /usr/bin/time -f '%U %S %M' -o time.txt ninja >ninja.log 2>&1) ||
		{ tail -n 20 "$b/ninja.log"; exit 1; }
	t1=$(now)
	read -r user sys rss <"$b/time.txt"
	m=$b/manifest.json
	echo
	echo "== --clone=$mode: configure && ninja $(secs "$t0" "$t1") s wall, $(echo "$user + $sys" | bc) s CPU (user $user, sys $sys), peak RSS $((rss / 1024)) MB"
	sh "$src/tests/bench/ninja_phases.sh" "$b" | sed 's/^/  /'
	if [ "$mode" != none ]; then
		echo "  copies: $(jq_ "$m" "m['clone_report']['copies_cloned']") cloned (of them $(jq_ "$m" "m['clone_report'].get('copies_to_object', 0)") written as machine code), $(jq_ "$m" "m['clone_report']['copies_from_c']") compiled from C; variants fitted $(jq_ "$m" "m['clone_report']['variants_fitted']") of $(jq_ "$m" "m['clone_report']['variants']")"
		echo "  assembly text written: $(jq_ "$m" "m['clone_report']['asm_bytes']//1000000") MB"
	fi
	echo "  functions $(jq_ "$m" "m['verify']['functions']"), unique $(jq_ "$m" "m['verify']['unique']"), text $(jq_ "$m" "m['verify']['text_bytes']//1000000") MB, $(jq_ "$m" "m['verify']['text_bytes']//m['verify']['functions']") B/function"
	# the head and, past 1,000 copies (configure --lib-parts), its parts
	so=$(stat -c %s "$b"/libfrontload-extract.so "$b"/libfrontload-extract-[0-9]*.so 2>/dev/null |
		awk '{ s += $1 } END { printf "%.0f\n", s }')
	echo "  library files $((so / 1000000)) MB, $((so / nfn)) B/function"
	echo "  leaf ready: $(leaf_ready "$b") ms after exec"
done

if [ "$ccopies" -gt 0 ]; then
	# Every copy from C, at a smaller scale: per-function compile cost.
	b=$root/b-c
	mkdir -p "$b"
	(cd "$b" && "$src/configure" --copies="$ccopies" --clone=none >/dev/null && ninja frontload-gen gen/manifest.gen.json >/dev/null)
	t0=$(now)
	(cd "$b" && ninja libfrontload-extract.so >/dev/null)
	t1=$(now)
	c=$(secs "$t0" "$t1")
	n=$((699 * ccopies))
	per=$(echo "scale=2; $c * $(nproc) * 1000 / $n" | bc)
	echo
	echo "C build (--clone=none --copies=$ccopies): $n functions compiled and linked in $c s wall: $per ms CPU per function"
	echo "  projection for --copies=$copies: $(echo "scale=0; $per * $nfn / $(nproc) / 60000" | bc) min wall on $(nproc) cores (not measured)"
fi
if [ "$keep" = 1 ]; then echo "kept: $root"; else rm -rf "$root"; fi

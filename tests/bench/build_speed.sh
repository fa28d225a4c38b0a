#!/bin/sh
# build_speed.sh: how fast frontload builds, measured on this machine. Prints figures; asserts
# nothing. Usage: tests/bench/build_speed.sh [--copies N] [--c-copies M] [--keep]
#   --copies N    copies for the full asm-clone build (default 1000: ~700K functions)
#   --c-copies M  copies for the compile-every-copy-from-C build (default 20; the per-function
#                 cost it measures is multiplied out for N, and labelled as a projection)
#   --keep        keep the build directories (printed) instead of deleting them
# Needs the packages of .ci/run. Takes ~20 min at --copies=1000 on 2 cores.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
copies=1000
ccopies=20
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--copies) copies=$2; shift 2 ;;
	--copies=*) copies=${1#*=}; shift ;;
	--c-copies) ccopies=$2; shift 2 ;;
	--c-copies=*) ccopies=${1#*=}; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,9p' "$0"; exit 0 ;;
	*) echo "build_speed.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }
jq_() { python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
root=$(mktemp -d /tmp/frontload-bench.XXXXXX)
echo "machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "compiler: $(cc --version | head -n 1)"

# 1. Generator alone: C text for every copy (what --clone=none compiles).
mkdir -p "$root/b-asm"
(cd "$root/b-asm" && "$src/configure" --copies="$copies" >/dev/null && ninja frontload-gen >/dev/null)
t0=$(now)
"$root/b-asm/frontload-gen" generate --patterns "$src/patterns" --templates "$src/templates" \
	--out "$root/gen-c" --copies "$copies" --mode c --shards 64 --no-check --quiet
t1=$(now)
bytes=$(du -sb "$root/gen-c" | cut -f1)
nfn=$((699 * copies))
g=$(secs "$t0" "$t1")
echo "generator: $nfn functions as C in $g s: $(echo "$nfn / $g" | bc) functions/s, $(echo "$bytes / $g / 1000000" | bc) MB/s ($(echo "$bytes / 1000000" | bc) MB)"
rm -rf "$root/gen-c"

# 2. Full build with assembly cloning (the default).
t0=$(now)
(cd "$root/b-asm" && ninja >"$root/asm.log" 2>&1) || { tail -n 20 "$root/asm.log"; exit 1; }
t1=$(now)
m=$root/b-asm/manifest.json
echo "asm-clone build (--copies=$copies): $(secs "$t0" "$t1") s wall for ninja after configure"
echo "  functions $(jq_ "$m" "m['verify']['functions']"), unique $(jq_ "$m" "m['verify']['unique']"), text $(jq_ "$m" "m['verify']['text_bytes']//1000000") MB, $(jq_ "$m" "m['verify']['text_bytes']//m['verify']['functions']") B/function"
echo "  cloned $(jq_ "$m" "m['clone_report']['copies_cloned']") copies, compiled from C $(jq_ "$m" "m['clone_report']['copies_from_c']"); variants fitted $(jq_ "$m" "m['clone_report']['variants_fitted']") of $(jq_ "$m" "m['clone_report']['variants']")"
echo "  library $(du -m "$root/b-asm/libfrontload-extract.so" | cut -f1) MB"

# 3. Every copy from C, at a smaller scale: per-function compile cost.
mkdir -p "$root/b-c"
(cd "$root/b-c" && "$src/configure" --copies="$ccopies" --clone=none >/dev/null && ninja frontload-gen gen/manifest.gen.json >/dev/null)
t0=$(now)
(cd "$root/b-c" && ninja libfrontload-extract.so >/dev/null)
t1=$(now)
c=$(secs "$t0" "$t1")
n=$((699 * ccopies))
per=$(echo "scale=2; $c * $(nproc) * 1000 / $n" | bc)
m=$root/b-c/manifest.json
(cd "$root/b-c" && ninja manifest.json >/dev/null)
echo "C build (--clone=none --copies=$ccopies): $n functions compiled and linked in $c s wall: $per ms CPU per function"
echo "  text $(jq_ "$m" "m['verify']['text_bytes']//m['verify']['functions']") B/function"
echo "  projection for --copies=$copies: $(echo "scale=0; $per * $nfn / $(nproc) / 60000" | bc) min wall on $(nproc) cores (not measured)"
if [ "$keep" = 1 ]; then echo "kept: $root"; else rm -rf "$root"; fi

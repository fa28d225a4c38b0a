#!/bin/sh
# clone_check.sh: how well the assembly cloner handles some patterns, for pattern authors.
# Usage: tests/bench/clone_check.sh FRONTLOAD_GEN IDS [COPIES]
#   FRONTLOAD_GEN  a built frontload-gen; IDS  pattern ids, e.g. P09,P10; COPIES  (default 50)
# Generates the probes of those patterns, compiles them as the build does, clones COPIES
# copies of every variant, and prints the clone report: variants whose probes do not line
# up (with the first reason) and copies that had to be compiled from C, per pattern.
set -eu
gen=$1
ids=$2
copies=${3:-50}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d /tmp/frontload-clone-check.XXXXXX)
trap 'rm -rf "$out"' EXIT
flags="--patterns $src/patterns --templates $src/templates --out $out --copies $copies --only $ids --quiet"
"$gen" generate $flags --mode asm --no-check
for c in "$out"/probes/*.c; do
	echo "cc -std=gnu11 -O2 -fno-tree-vectorize -fPIC -fvisibility=hidden -I$src/templates -S $c -o ${c%.c}.s"
done | xargs -P "$(nproc)" -I{} sh -c '{}'
"$gen" clone $flags --probes-s "$out/probes" --shards 1 --part 0 --parts 1 --fallback 1
python3 - "$out/clone_00.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("variants fitted %d of %d; copies cloned %d, from C %d (value outside what the probes cover %d)" % (
    r["variants_fitted"], r["variants"], r["copies_cloned"], r["copies_from_c"], r["copies_from_c_unsafe_value"]))
print("copies from C by pattern:", r["copies_from_c_by_pattern"])
for v in r["variants_not_fitted"]:
    print("  not fitted: %s v%d: %s" % (v["pattern"], v["variant"], v["reason"][:160]))
PY

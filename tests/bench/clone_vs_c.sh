#!/bin/sh
# clone_vs_c.sh: every clone of a built library against its twin compiled from C, per
# variant, at the build's full size (the check `ninja test` runs covers every copy only at
# a small --copies; see tests/test_library.c, test 4).
#
# Usage: tests/bench/clone_vs_c.sh BUILD_DIR [COVER [RANDOM]]
#   BUILD_DIR  a configured and built tree (ninja all): its libfrontload-extract.so,
#              manifest.json, config.json, build.ninja (compiler and flags) and
#              tests/clone-vs-c
#   COVER      frontload-gen --sample-cover level: edges (default: copy 0 of every variant,
#              each constant's smallest and largest value and both sides of every
#              value-class edge), ends or variants
#   RANDOM     copies drawn at random on top (default 0)
# Generates those copies as C with the build's seed and config, compiles them with the
# build's compiler and generated-code flags (all cores), links them with the build's
# helpers, and runs tests/clone-vs-c: one line per variant (fitted or not, copies checked,
# copies that differed, the first difference), then the total. Exit status: clone-vs-c's
# (0 only when no copy differed and every variant had a copy checked).
# At --copies=1000 the edges cover is 90,135 of 699,000 copies: about 41 CPU-minutes of
# compiling from C (27.5 ms per function), then a few minutes of checking.
set -eu
build=$(cd "${1:?usage: clone_vs_c.sh BUILD_DIR [COVER [RANDOM]]}" && pwd)
cover=${2:-edges}
random=${3:-0}
ninja_var() { sed -n "s/^$1 = //p" "$build/build.ninja" | head -n 1; }
src=$(ninja_var srcdir)
cc=$(ninja_var cc)
gencflags=$(ninja_var gencflags)
ldflags=$(ninja_var ldflags)
copies=$(sed -n 's/^  "copies": \([0-9]*\),$/\1/p' "$build/config.json")
seed=$(sed -n 's/^  "seed": \([0-9]*\),$/\1/p' "$build/config.json")
functions=$(sed -n 's/^  "functions": \([0-9]*\)$/\1/p' "$build/config.json")
for f in libfrontload-extract.so manifest.json obj/helpers.o tests/clone-vs-c frontload-gen; do
	[ -e "$build/$f" ] || { echo "clone_vs_c.sh: $build/$f not built (run ninja there)" >&2; exit 2; }
done
out=$(mktemp -d /tmp/frontload-clone-vs-c.XXXXXX)
trap 'rm -rf "$out"' EXIT INT TERM
t0=$(date +%s)
shards=$((functions / 300 + 2 * $(nproc)))
sample=
[ "$random" -gt 0 ] && sample="--sample $random"
env ASAN_OPTIONS=detect_leaks=0 "$build/frontload-gen" generate --patterns "$src/patterns" \
	--templates "$src/templates" --out "$out/gen" --copies "$copies" --seed "$seed" \
	--config "$build/config.json" --mode c --shards "$shards" --sample-cover "$cover" $sample \
	--no-check --quiet
n=$(cat "$out"/gen/shards/*.c | grep -c '^	{fl_P[0-9]*_v[0-9]*_c[0-9]*, ' || true)
t1=$(date +%s)
echo "clone_vs_c: $n of $functions copies (--sample-cover $cover${sample:+, $sample}) in $shards shards, generated in $((t1 - t0)) s"
mkdir -p "$out/obj"
for c in "$out"/gen/registry.c "$out"/gen/shards/*.c; do
	echo "$c"
done | xargs -P "$(nproc)" -I{} sh -c \
	"$cc $gencflags -I$src/templates -c {} -o $out/obj/\$(basename {} .c).o"
"$cc" -shared $ldflags -o "$out/libsample.so" "$out"/obj/*.o "$build/obj/helpers.o"
t2=$(date +%s)
echo "clone_vs_c: compiled from C in $((t2 - t1)) s"
rc=0
"$build/tests/clone-vs-c" "$build/libfrontload-extract.so" "$out/libsample.so" \
	"$build/manifest.json" || rc=$?
echo "clone_vs_c: checked in $(($(date +%s) - t2)) s; exit $rc"
exit "$rc"

#!/bin/sh
# golden.sh: the generator's golden output, one file per pattern: copy 0 of variant 0 as
# frontload-gen writes it at seed 1 (--mode c, no #line). It shows what a .tpl becomes and
# catches any change in generated code.
#
#   golden.sh check     compare a fresh generation with tests/golden/ (ninja test runs this
#                       through tests/integration/golden.sh); prints a diff on a mismatch
#   golden.sh refresh   rewrite tests/golden/ (in the build directory: `ninja golden`)
#
# FL_SRCDIR names the source tree, FL_BUILDDIR the build directory holding frontload-gen.
# Copy 0's constants do not depend on --copies or --only (generator/expand.c keys each
# draw on seed, pattern, variant and copy), so these are the functions of a real build.
set -u
mode=${1:-}
case $mode in check | refresh) ;; *) echo "usage: golden.sh check|refresh" >&2; exit 2 ;; esac
src=$(cd "${FL_SRCDIR:?FL_SRCDIR must name the source tree}" && pwd) || exit 1
build=$(cd "${FL_BUILDDIR:-.}" && pwd) || exit 1
gen=$build/frontload-gen
golden=$src/tests/golden
[ -x "$gen" ] || { echo "golden.sh: $gen not built" >&2; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# LeakSanitizer off: the generator leaves its model to exit() (build.ninja.in, genenv).
ASAN_OPTIONS=detect_leaks=0 "$gen" generate --patterns "$src/patterns" \
	--templates "$src/templates" --out "$T/gen" --copies 1 --seed 1 --mode c --shards 1 \
	--no-check --no-line --quiet || { echo "golden.sh: generation failed" >&2; exit 1; }
mkdir -p "$T/new"
for tpl in "$src"/patterns/P[0-9][0-9]_*.tpl; do
	name=$(basename "$tpl" .tpl)
	id=${name%%_*}
	out=$T/new/$name.c
	{
		echo "// Golden: patterns/$name.tpl, variant 0, copy 0, as frontload-gen writes it with"
		echo "// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with \`ninja golden\`."
		echo '#include "fl_extract.h"'
		echo
		awk -v fn="fl_${id}_v000_c00000(" 'index($0, "static FL_EXTRACTOR void " fn) == 1 { on = 1 }
			on { print } on && /^}$/ { exit }' "$T/gen/shards/shard_0000.c"
	} >"$out"
	grep -q '^}$' "$out" || { echo "golden.sh: no fl_${id}_v000_c00000 in the generated shard" >&2; exit 1; }
done

if [ "$mode" = refresh ]; then
	rm -f "$golden"/P[0-9][0-9]_*.c
	cp "$T"/new/*.c "$golden"/
	echo "golden.sh: wrote $(ls "$T"/new | wc -l) files into $golden"
	exit 0
fi
n=0
bad=0
for f in "$T"/new/*.c "$golden"/P[0-9][0-9]_*.c; do
	b=$(basename "$f")
	[ -f "$T/new/$b" ] && [ -f "$golden/$b" ] || { echo "only one side has $b"; bad=1; continue; }
	case $f in "$golden"/*) continue ;; esac
	n=$((n + 1))
	diff -u "$golden/$b" "$f" || bad=1
done
if [ "$bad" != 0 ]; then
	echo "generated code differs from tests/golden/ (intended? run \`ninja golden\` and commit)"
	exit 1
fi
echo "$n patterns match tests/golden/ (copy 0 of variant 0, seed 1)"

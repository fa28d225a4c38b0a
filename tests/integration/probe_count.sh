#!/bin/sh
# probe_count.sh: the probes per variant come from one place (generator/probes.h) and the
# build, frontload-gen --help, configure --help and README say the same number.
set -u
src=$(cd "${FL_SRCDIR:?FL_SRCDIR must name the source tree}" && pwd) || exit 1
build=$(cd "${FL_BUILDDIR:-.}" && pwd) || exit 1
fail() { echo "FAIL: $*"; exit 1; }

n=$(sed -n 's/^#define FL_NPROBES[ 	]\{1,\}\([0-9]\{1,\}\).*/\1/p' "$src/generator/probes.h")
[ -n "$n" ] || fail "no FL_NPROBES in generator/probes.h"
"$build/frontload-gen" --help 2>&1 | grep -q "asm: write $n probes per variant" ||
	fail "frontload-gen --help does not say $n probes per variant"
"$src/configure" --help | grep -q "compile each variant $n times" ||
	fail "configure --help does not say $n probes"
grep -q "($n per variant)" "$src/README.md" || fail "README's build picture does not say $n per variant"
grep -q "compile each variant $n times" "$src/README.md" || fail "README's --clone row does not say $n"
# With --clone=obj or asm the build compiles exactly n probes of every variant.
if grep -q '"clone": "\(obj\|asm\)"' "$build/config.json"; then
	got=$(grep -c '^build gen/probes/P01_v000_p[0-9]*\.s: probe_s' "$build/build.ninja")
	[ "$got" = "$n" ] || fail "build.ninja compiles $got probes of P01 variant 0, probes.h says $n"
	echo "$n probes per variant in probes.h, build.ninja, --help texts and README"
else
	echo "$n probes per variant in probes.h, --help texts and README (build is --clone=none)"
fi

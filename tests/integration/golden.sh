#!/bin/sh
# golden.sh: the generator's output still matches the committed golden files
# (tests/golden/golden.sh check), and the check does catch a change.
set -u
src=$(cd "${FL_SRCDIR:?FL_SRCDIR must name the source tree}" && pwd) || exit 1
build=$(cd "${FL_BUILDDIR:-.}" && pwd) || exit 1
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

FL_SRCDIR=$src FL_BUILDDIR=$build sh "$src/tests/golden/golden.sh" check >"$T/ok" 2>&1 ||
	fail "$(tail -n 20 "$T/ok")"

# The same check on a copy of the tree whose P03 golden file lost a constant must fail
# and show the line.
mkdir -p "$T/src/tests" || fail "mkdir"
cp -r "$src/patterns" "$src/templates" "$T/src/" && cp -r "$src/tests/golden" "$T/src/tests/" ||
	fail "copy the tree"
sed -i '0,/FL_GATE(ctx, [0-9]*)/s//FL_GATE(ctx, 12345)/' "$T/src/tests/golden/"P03_*.c
if FL_SRCDIR=$T/src FL_BUILDDIR=$build sh "$src/tests/golden/golden.sh" check >"$T/bad" 2>&1; then
	fail "a changed golden file was not noticed"
fi
grep -q '^-	FL_GATE(ctx, 12345);' "$T/bad" || fail "no diff line for the change: $(head -n 5 "$T/bad")"
tail -n 1 "$T/ok"

#!/bin/sh
# configure_bad_flags.sh: configure refuses bad options before writing anything.
#
# configure is POSIX sh, so its option handling is not fuzzed (tests/fuzz covers the C
# programs' option tables); this checks it the same way: each bad command line must exit
# non-zero with one "configure: error:" line naming what is wrong, and leave no
# build.ninja or config.json behind.
set -u
: "${FL_SRCDIR:?FL_SRCDIR must name the source tree}"
src=$(cd "$FL_SRCDIR" && pwd) || exit 1
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

n=0
# bad EXPECT ARGS...: configure ARGS in a fresh directory fails and says EXPECT.
bad() {
	b_expect=$1
	shift
	d=$T/cfg$n
	n=$((n + 1))
	mkdir -p "$d" || fail "mkdir $d"
	if (cd "$d" && "$src/configure" "$@") >"$d/out" 2>&1; then
		fail "configure $* succeeded"
	fi
	grep -q "^configure: error: .*$b_expect" "$d/out" ||
		fail "configure $*: no error naming $b_expect: $(tail -n 1 "$d/out")"
	[ ! -e "$d/build.ninja" ] && [ ! -e "$d/config.json" ] ||
		fail "configure $* wrote build files"
}

bad "'--bogus'" --bogus
bad "--copies" --copies=abc
bad "--copies" --copies=0
bad "--copies" --copies=100000
bad "'--copies'" --copies
bad "--clone" --clone=maybe
bad "sanitizer 'nope'" --enable-sanitizers=nope
bad "'extra'" --copies=2 extra
bad "--lib-parts" --lib-parts=0
bad "--pgo needs --clone=obj or asm" --pgo --clone=none
bad "--pgo cannot be combined with --enable-sanitizers" --pgo --enable-sanitizers
bad "--lib-parts" --lib-parts=17
bad "--lib-parts=3: more than the 2 clone parts" --copies=1 --lib-parts=3
bad "--copies=20000 needs 20 library parts" --copies=20000
bad "a part would hold about 3000 copies" --copies=3000 --lib-parts=1
echo "configure refused $n bad command lines, each with its error and no build files"

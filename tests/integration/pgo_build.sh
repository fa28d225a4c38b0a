#!/bin/sh
# pgo_build.sh: configure --pgo builds a generated library laid out by a training profile.
#
# In a fresh directory, configure --copies=1 --pgo with this build's compiler and build the
# library and the leaf. Checks: the training run served its requests and wrote a profile
# for every variant and for every object of the request path (generator/pgo_rt.awk); every
# probe got its variant's (gen/probes/*.gcda) and every request-path object its own
# (obj/rt/*.gcda); the probes' code is not what gcc makes without the profile (for most of
# P09's variants, whose branches the profile biases), nor is the ranker's (dlrm.o); the
# library's build info says pgo; and a second ninja has no work (the training does not
# rerun). With clang: configure --pgo refuses it, naming gcc. Sanitizer builds skip (77):
# --pgo refuses sanitizers, and the plain build runs this check. What the profile does to
# the instruction mix is measured by tests/bench/pgo_mix.sh, not asserted here.
set -u
src=$(cd "${FL_SRCDIR:?FL_SRCDIR must name the source tree}" && pwd) || exit 1
build=$(cd "${FL_BUILDDIR:-.}" && pwd) || exit 1
fail() { echo "FAIL: $*"; exit 1; }
cc=$(sed -n 's/^  "cc": "\(.*\)",$/\1/p' "$build/config.json")
[ -n "$cc" ] || fail "no cc in $build/config.json"
if [ -n "${FL_SANITIZERS:-}" ]; then
	echo "sanitizer build ($FL_SANITIZERS): --pgo refuses sanitizers; the plain build runs this check"
	exit 77
fi
T=$(mktemp -d /tmp/frontload-pgo.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

if "$cc" -dM -E - </dev/null 2>/dev/null | grep -q '__clang__'; then
	if (cd "$T" && "$src/configure" --copies=1 --pgo --cc="$cc") >"$T/out" 2>&1; then
		fail "configure --pgo --cc=$cc (clang) succeeded"
	fi
	grep -q '^configure: error: --pgo needs gcc' "$T/out" ||
		fail "configure --pgo with clang: no error naming gcc: $(tail -n 1 "$T/out")"
	echo "configure --pgo refuses $cc (clang), naming gcc"
	exit 0
fi

(cd "$T" && "$src/configure" --copies=1 --pgo --cc="$cc") >"$T/configure.log" 2>&1 ||
	fail "configure --copies=1 --pgo: $(tail -n 1 "$T/configure.log")"
(cd "$T" && ninja libfrontload-extract.so frontload-leaf) >"$T/ninja.log" 2>&1 ||
	fail "ninja libfrontload-extract.so frontload-leaf: $(grep -m 1 -A 3 FAILED "$T/ninja.log")"

nvar=$(ls "$T"/gen/probes/*_p0.c | wc -l)
nprobes=$(sed -n 's/^#define FL_NPROBES[ 	]\{1,\}\([0-9]\{1,\}\).*/\1/p' "$src/generator/probes.h")
grep -q "^pgo.sh: $nvar variant profiles from 1000 training requests" "$T/gen/profile.stamp" ||
	fail "the training wrote no profile for each of the $nvar variants: $(cat "$T/gen/profile.stamp")"
served=$(jq -r '.requests' "$T/gen/train/train.json" 2>/dev/null)
[ "$served" = 1000 ] || fail "the training run's JSON says $served requests, not 1000"
ngcda=$(ls "$T"/gen/probes/*.gcda | wc -l)
[ "$ngcda" = $((nvar * nprobes)) ] ||
	fail "$ngcda probe profiles in gen/probes, want $nvar variants x $nprobes probes"

# The profile reached the probes' code: compile P09's first probes again without it.
gencflags=$(sed -n 's/^gencflags = \(.*\) -fprofile-use .*/\1/p' "$T/build.ninja")
[ -n "$gencflags" ] || fail "build.ninja's gencflags carry no -fprofile-use"
n=0
differ=0
for c in "$T"/gen/probes/P09_v*_p0.c; do
	s=${c%.c}.s
	(cd "$T" && $cc $gencflags -I"$src/templates" -S "$c" -o "$T/plain.s") ||
		fail "compiling $c without the profile"
	n=$((n + 1))
	cmp -s "$s" "$T/plain.s" || differ=$((differ + 1))
done
[ "$n" -gt 0 ] && [ $((2 * differ)) -ge "$n" ] ||
	fail "only $differ of $n P09 probes differ from their compile without the profile"

# The request path: one profile per object frontload-simreq links, each beside its object.
nrt=$(grep -c '^build obj/train/rt/[^ ]*\.o: cc_train_rt ' "$T/build.ninja")
[ "$nrt" -gt 0 ] || fail "build.ninja instruments no request-path object (generator/pgo_rt.awk)"
grep -q "^pgo.sh: $nrt request-path object profiles from 1000 training requests" "$T/gen/profile-rt.stamp" ||
	fail "the training wrote no profile for each of the $nrt request-path objects: $(cat "$T/gen/profile-rt.stamp")"
nrtg=$(ls "$T"/obj/rt/*.gcda | wc -l)
[ "$nrtg" = "$nrt" ] || fail "$nrtg request-path profiles in obj/rt, want $nrt"
# and reached the ranker's code: dlrm.o compiled again without it
cmd=$(cd "$T" && ninja -t commands obj/rt/dlrm.o | tail -n 1)
case $cmd in *" -fprofile-use "*) ;; *) fail "obj/rt/dlrm.o is not compiled with -fprofile-use: $cmd" ;; esac
plain=$(printf '%s\n' "$cmd" | sed 's/ -fprofile-use / /; s/ -fprofile-partial-training / /; s| -o obj/rt/dlrm\.o| -o obj/plain_dlrm.o|; s| -MF obj/rt/dlrm\.o\.d| -MF obj/plain_dlrm.o.d|')
(cd "$T" && eval "$plain") || fail "compiling dlrm.c without the profile: $plain"
objcopy -O binary -j .text "$T/obj/rt/dlrm.o" "$T/dlrm.pgo" && objcopy -O binary -j .text "$T/obj/plain_dlrm.o" "$T/dlrm.plain" ||
	fail "objcopy of dlrm.o's .text"
cmp -s "$T/dlrm.pgo" "$T/dlrm.plain" && fail "obj/rt/dlrm.o's code is the same with and without the profile"

grep -q '\\"pgo\\":true' "$T/gen/registry.c" || fail "the library's build info does not say pgo"
(cd "$T" && ninja -n libfrontload-extract.so frontload-leaf) | grep -q "no work to do" ||
	fail "a second ninja has work: $(cd "$T" && ninja -n libfrontload-extract.so frontload-leaf | head -n 2)"
echo "--pgo at --copies=1: $nvar variant profiles from 1000 training requests, $ngcda probe profiles, $differ of $n P09 probes laid out differently; $nrt request-path profiles, dlrm.o laid out differently; nothing to rebuild"

#!/bin/sh
# pgo_mix.sh: what a feedback-directed build (gcc -fprofile-generate / -fprofile-use) does
# to the instruction mix of the generated library and of the request path, measured.
# Prints figures; asserts nothing.
# Usage: tests/bench/pgo_mix.sh [--copies N] [--requests N] [--keep DIR]   (~12 min at 2)
#
# Production services are built with profile feedback (and BOLT), which lays the hot path
# out to fall through; production's "basic block > 18 instructions" (DCPerf PR 705, LBR)
# describes such code, and frontload's generated library, built -O2 without a profile,
# takes a branch every ~13 instructions. This script builds the same small library twice
# with --clone=none (every copy compiled from C, its profile attached by gcc directly):
#   plain  ./configure --copies=N --clone=none
#   pgo    the same with --cflags=-fprofile-generate, a training run of frontload-simreq
#          (--requests requests, seed 2 and corpus seed 2: not the measured stream; --pgo
#          always trains on 1000), then
#          rebuilt with --cflags="-fprofile-use -fprofile-partial-training"
# and then the default way of building twice, ./configure --copies=N (--clone=obj) and
# ./configure --copies=N --pgo (the profile given to the probes copies are cloned from, and
# the request path's own objects built with it), and measures each with
# `frontload-measure validate --harness --simulate` (callgrind, seed 1): the extractor
# calls alone (--stage extract: the generated library) and the whole in-process request
# path (generated library, the leaf's request code and the libraries it calls, which are
# not rebuilt). It prints each build's wall time, what a
# profile adds to the build, and the copies each cloned build compiled from C. Units:
# instructions per taken branch; shares in % of instructions; L1i MPKI in misses per
# kilo-instruction (zen4 model, validate --harness --help).
# Needs: gcc, ninja, valgrind, jq and the build dependencies of README.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
copies=2
requests=1000
keep=
while [ $# -gt 0 ]; do
	case $1 in
	--copies) copies=${2:?--copies needs N}; shift 2 ;;
	--requests) requests=${2:?--requests needs N}; shift 2 ;;
	--keep) keep=${2:?--keep needs DIR}; shift 2 ;;
	-h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "pgo_mix.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
case $copies in ''|*[!0-9]*|0) echo "pgo_mix.sh: --copies must be a positive integer, not '$copies'" >&2; exit 2 ;; esac
case $requests in ''|*[!0-9]*|0) echo "pgo_mix.sh: --requests must be a positive integer, not '$requests'" >&2; exit 2 ;; esac
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	tmp=$(cd "$keep" && pwd)
else
	tmp=$(mktemp -d /tmp/pgo-mix.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
fi

now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { print a - b }'; }
build() { # dir, configure flags...: configure and build; prints the wall seconds
	d=$1; shift
	mkdir -p "$d"
	t0=$(now)
	(cd "$d" && "$src/configure" --copies="$copies" "$@" >/dev/null &&
		ninja >ninja.log 2>&1) || { echo "pgo_mix.sh: build in $d failed (see $d/ninja.log)" >&2; exit 1; }
	since "$t0"
}
measure() { # dir, name, [--stage extract]
	d=$1; n=$2; shift 2
	"$d/frontload-measure" validate --harness --simulate "$@" --json "$tmp/$n.json" \
		>"$tmp/$n.txt" 2>&1 || true  # a miss of a target exits non-zero; the JSON holds the figures
	jq -r --arg n "$n" '.mix as $m | "\($n | .[0:30] + " " * (30 - length))  \($m.instructions)  \($m.insns_per_taken_branch * 10 | round / 10)  \($m.cond_branch_pct * 10 | round / 10)  \($m.cond_taken_rate * 1000 | round / 10)  \($m.mem_pct * 10 | round / 10)  \(.metrics.l1i_mpki * 100 | round / 100)"' \
		"$tmp/$n.json" || echo "$n: no figures (see $tmp/$n.txt)"
}

echo "pgo_mix.sh: --copies=$copies, $(cc --version | head -n1), training run $requests requests"
tp=$(build "$tmp/plain" --clone=none)
tg=$(build "$tmp/pgo" --clone=none --cflags="-fprofile-generate -fprofile-update=atomic")
t0=$(now)
"$tmp/pgo/frontload-simreq" --warmup 5 --requests "$requests" --seed 2 --corpus-seed 2 \
	>"$tmp/train.json" 2>"$tmp/train.log" || { echo "pgo_mix.sh: training run failed (see $tmp/train.log)" >&2; exit 1; }
tt=$(since "$t0")
tu=$(build "$tmp/pgo" --clone=none --cflags="-fprofile-use -fprofile-partial-training -Wno-missing-profile")
to=$(build "$tmp/obj")
tq=$(build "$tmp/obj-pgo" --pgo)
printf 'build wall time (s): --clone=none plain %.1f; with a profile: instrumented %.1f + training %.1f + profile-use %.1f\n' \
	"$tp" "$tg" "$tt" "$tu"
printf 'build wall time (s): --clone=obj plain %.1f, --pgo %.1f\n' "$to" "$tq"
fromc() { jq -s 'map(.copies_from_c) | add' "$1"/gen/clone_*.json; }
echo "copies compiled from C (no template took them): --clone=obj $(fromc "$tmp/obj"), --pgo $(fromc "$tmp/obj-pgo")"
echo "window                          instructions  i/tb  cond%  cond-taken%  ld+st%  L1i-MPKI"
measure "$tmp/plain" "plain, generated library" --stage extract
measure "$tmp/pgo" "pgo, generated library" --stage extract
measure "$tmp/obj" "obj, generated library" --stage extract
measure "$tmp/obj-pgo" "obj --pgo, generated library" --stage extract
measure "$tmp/plain" "plain, request path"
measure "$tmp/pgo" "pgo, request path"
measure "$tmp/obj" "obj, request path"
measure "$tmp/obj-pgo" "obj --pgo, request path"
echo "(validate --harness --simulate, seed 1; JSON and text in $tmp$( [ -n "$keep" ] || echo ', removed on exit'))"

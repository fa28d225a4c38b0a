#!/bin/sh
# validate_quick.sh: frontload-measure validate --simulate --quick gives plausible figures.
#
# Runs the simulated path (valgrind callgrind) on the build's library at a small footprint
# (--quick: active copies 2, 1 warmup + 2 requests) and checks the JSON report: every rate
# and mix field is a number, every target has a verdict, IPC is unmeasurable on the
# simulated path, the exit status is 0 or 3 (targets met or missed). Then ranges a broken
# pipeline cannot meet: L1i MPKI within a factor 2 of the reference run and instructions
# per request within 25% of it (factor 2 with another compiler; validate_quick.ref: how
# it was made, with what knobs),
# stage CPU shares summing to 100% +- 0.5, the rep string correction consistent
# (instructions = Ir - Ir removed), mix shares within 0..100. Last, frontload-simreq
# --stage extract natively: what --pmu counts is stage 3 alone (counted_window_cpu_ns is
# the stage's CPU time), and --pmu without counters says why with no number; with a
# thread CPU clock that stands still (LD_PRELOAD) every stage share is null, not 0.
# Env: FL_BUILDDIR (binaries), FL_SRCDIR. Exit 0/1, 77 to skip (no valgrind); the last
# line is a one-line summary (or the skip reason).
set -u
: "${FL_SRCDIR:?FL_SRCDIR must name the source tree}"
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
B=$(cd "$FL_BUILDDIR" && pwd) || exit 1
M=$B/frontload-measure
S=$B/frontload-simreq
fail() { echo "FAIL: $*"; exit 1; }
for f in "$M" "$S" "$B/libfrontload-extract.so"; do
	[ -e "$f" ] || fail "$f not built"
done
command -v jq >/dev/null 2>&1 || fail "jq not installed"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not installed (the simulated path needs it)"
	exit 77
fi
T=$(mktemp -d /tmp/fl-vq.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
t0=$(date +%s)
. "$FL_SRCDIR/tests/integration/validate_quick.ref"

timeout 170 "$M" validate --harness --simulate --quick --cpu zen4 --lib "$B/libfrontload-extract.so" \
	--targets "$FL_SRCDIR/results/targets/production.json" --json "$T/v.json" \
	>"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "validate exited $rc: $(tail -n 3 "$T/err")"
[ -s "$T/v.json" ] || fail "no JSON written"

isnum() { # jq-path
	jq -e "($1 | type) == \"number\"" "$T/v.json" >/dev/null 2>&1 ||
		fail "$1 is not a number: $(jq -c "$1" "$T/v.json" 2>&1)"
}
# within LO HI VALUE MSG: LO <= VALUE <= HI
within() {
	awk "BEGIN { exit !($1 <= $3 && $3 <= $2) }" || fail "$4: $3 outside $1..$2"
}
for k in l1i_mpki ll_code_mpki cond_branch_mpki indirect_branch_mpki; do
	isnum ".rates.$k"
done
for k in cond_branch_pct cond_taken_rate call_ret_pct load_pct store_pct mem_pct \
	scalar_fp_pct vector_pct div_pct insns_per_taken_branch classified_share \
	instructions rep_ir_removed rep_ir_removed_pct rep_executions; do
	isnum ".mix.$k"
done
for k in l1i_mpki scalar_fp_pct cond_branch_pct call_ret_pct mem_pct div_pct \
	insns_per_taken_branch extract_cpu_pct; do
	isnum ".metrics.$k"
done
jq -e '.path == "simulated"' "$T/v.json" >/dev/null || fail "path is not simulated"
n=$(jq '.targets | length' "$T/v.json")
[ "$n" -ge 10 ] || fail "only $n targets in the report"
bad=$(jq '[.targets[] | select(.verdict != "pass" and .verdict != "fail" and
	.verdict != "unmeasurable")] | length' "$T/v.json")
[ "$bad" = 0 ] || fail "$bad targets without a verdict"
jq -e '.targets[] | select(.metric == "ipc") | .verdict == "unmeasurable" and
	(.why | length > 0)' "$T/v.json" >/dev/null || fail "IPC is not unmeasurable with a reason"
jq -e '.targets[] | select(.metric == "l1i_mpki") | .verdict != "unmeasurable"' \
	"$T/v.json" >/dev/null || fail "L1i MPKI was not measured"
share=$(jq '.mix.classified_share' "$T/v.json")
within 0.9 1.0 "$share" "share of instructions classified by objdump"
grep -q 'L1i MPKI' "$T/out" || fail "no table on stdout"

# Plausibility against the reference run (same knobs: validate --quick).
mpki=$(jq '.metrics.l1i_mpki' "$T/v.json")
within "$(awk "BEGIN { print $REF_L1I_MPKI / 2 }")" "$(awk "BEGIN { print $REF_L1I_MPKI * 2 }")" \
	"$mpki" "L1i MPKI against the reference $REF_L1I_MPKI (factor 2)"
req=$(jq '.simulation.simreq.requests' "$T/v.json")
ipr=$(jq ".mix.instructions / $req" "$T/v.json")
lo=0.75 hi=1.25 band=25%
if [ "$(jq -r .build.cc_version "$T/v.json")" != "$REF_CC_VERSION" ]; then
	lo=0.5 hi=2 band="factor 2: another compiler than the reference's"
fi
within "$(awk "BEGIN { print $REF_INSNS_PER_REQUEST * $lo }")" \
	"$(awk "BEGIN { print $REF_INSNS_PER_REQUEST * $hi }")" "$ipr" \
	"instructions per request against the reference $REF_INSNS_PER_REQUEST ($band)"
calls=$(jq '.simulation.simreq.extract_calls_per_request' "$T/v.json")
[ "$calls" = "$REF_EXTRACT_CALLS_PER_REQUEST" ] ||
	fail "extractor calls per request $calls, the reference's knobs give $REF_EXTRACT_CALLS_PER_REQUEST"
sum=$(jq '[.stages_cpu_pct[]] | add' "$T/v.json")
within 99.5 100.5 "$sum" "stage CPU shares' sum (%)"
jq -e '.mix.instructions == .mix.ir - .mix.rep_ir_removed and .mix.rep_ir_removed >= 0 and
	.mix.rep_executions <= .mix.rep_ir' "$T/v.json" >/dev/null ||
	fail "rep correction inconsistent: $(jq -c '.mix | {ir, instructions, rep_ir, rep_ir_removed, rep_executions}' "$T/v.json")"
# The uncorrected view counts every removed iteration again: as many instructions as
# valgrind's Ir, MPKI lower by the same factor, instructions per taken branch higher.
jq -e '.mix.uncorrected as $u | $u.instructions == .mix.ir and
	$u.mem_pct >= .mix.mem_pct - 1e-9 and $u.insns_per_taken_branch >= .mix.insns_per_taken_branch and
	(($u.l1i_mpki * .mix.ir) - (.rates.l1i_mpki * .mix.instructions) | fabs) <= 1e-6 * $u.l1i_mpki * .mix.ir' \
	"$T/v.json" >/dev/null ||
	fail "uncorrected mix inconsistent: $(jq -c '.mix.uncorrected' "$T/v.json")"
jq -e '[.mix | .cond_branch_pct, .jump_pct, .indirect_jump_pct, .call_pct,
	.indirect_call_pct, .ret_pct] | add <= 100' "$T/v.json" >/dev/null ||
	fail "control-flow shares add up to more than 100%"
jq -e '[.mix | to_entries[] | select(.key | endswith("_pct")) | .value |
	select(. < 0 or . > 100)] | length == 0' "$T/v.json" >/dev/null ||
	fail "a mix share is outside 0..100"

# --stage extract natively: the counted window is stage 3 alone, whatever the host has.
"$S" --lib "$B/libfrontload-extract.so" --active-copies 2 --warmup 1 --requests 3 \
	--stage extract --pmu --quiet --json "$T/s.json" 2>"$T/s.err" ||
	fail "simreq --stage extract --pmu failed: $(tail -n 2 "$T/s.err")"
jq -e '.counted_window == "stage 3 (extract) of each measured request" and
	.counted_window_cpu_ns == .stages.extract.cpu_ns and .counted_window_cpu_ns > 0 and
	.counted_window_cpu_ns < .window_cpu_ns' "$T/s.json" >/dev/null ||
	fail "--stage extract did not count stage 3 alone: $(jq -c '{counted_window, counted_window_cpu_ns, e: .stages.extract.cpu_ns, window_cpu_ns}' "$T/s.json")"
jq -e '(.pmu.supported == false and (.pmu.why | length > 0) and .instructions == null) or
	(.pmu.supported == true and .instructions > 0)' "$T/s.json" >/dev/null ||
	fail "--pmu: neither counts nor a reason: $(jq -c .pmu "$T/s.json")"
ssum=$(jq '[.stages[].cpu_share] | add' "$T/s.json")
within 0.995 1.005 "$ssum" "simreq stage shares' sum"

# No CPU time measured (a thread CPU clock that stands still, by LD_PRELOAD): every stage
# share is null, not 0.
cat >"$T/still.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	if (id == CLOCK_THREAD_CPUTIME_ID) {
		ts->tv_sec = 1;
		ts->tv_nsec = 0;
		return 0;
	}
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	return real(id, ts);
}
C
"${CC:-cc}" -shared -fPIC -o "$T/still.so" "$T/still.c" -ldl ||
	fail "cannot build the still-clock preload"
LD_PRELOAD="$T/still.so" "$S" --lib "$B/libfrontload-extract.so" --active-copies 2 \
	--warmup 0 --requests 1 --quiet --json "$T/z.json" 2>"$T/z.err" ||
	fail "simreq with a still clock failed: $(tail -n 2 "$T/z.err")"
jq -e '.window_cpu_ns == 0 and .extract_cpu_share == null and
	([.stages[].cpu_share] | all(. == null))' "$T/z.json" >/dev/null ||
	fail "no CPU measured, yet shares: $(jq -c '{extract_cpu_share, s: [.stages[].cpu_share]}' "$T/z.json")"

mpki=$(jq '.metrics.l1i_mpki * 100 | round / 100' "$T/v.json")
rem=$(jq '.mix.rep_ir_removed_pct * 1000 | round / 1000' "$T/v.json")
sum=$(jq -r '.summary | "\(.pass) pass, \(.fail) fail, \(.unmeasurable) unmeasurable"' "$T/v.json")
echo "validate --harness --simulate --quick: L1i MPKI $mpki (ref $REF_L1I_MPKI), $(printf %.0f "$ipr") insns/request, rep correction -$rem% Ir, $sum (exit $rc), $(($(date +%s) - t0)) s"

#!/bin/sh
# validate_quick.sh: frontload-measure validate --simulate --quick runs and its JSON is complete.
#
# Runs the simulated path (valgrind callgrind) on the build's library at a small footprint
# (--quick: active copies 2, 1 warmup + 2 requests) and checks the JSON report: L1i MPKI,
# LL code and branch MPKI and every instruction-mix field are numbers, every target has a
# verdict (pass, fail or unmeasurable), IPC is unmeasurable on the simulated path, and the
# exit status is 0 or 3 (targets met or missed: whether they pass is not tested here).
# Env: FL_BUILDDIR (binaries), FL_SRCDIR. Exit 0/1; the last line is a one-line summary.
set -u
: "${FL_SRCDIR:?FL_SRCDIR must name the source tree}"
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
B=$(cd "$FL_BUILDDIR" && pwd) || exit 1
M=$B/frontload-measure
fail() { echo "FAIL: $*"; exit 1; }
for f in "$M" "$B/frontload-simreq" "$B/libfrontload-extract.so"; do
	[ -e "$f" ] || fail "$f not built"
done
command -v valgrind >/dev/null 2>&1 || fail "valgrind not installed (the simulated path needs it)"
command -v jq >/dev/null 2>&1 || fail "jq not installed"
T=$(mktemp -d /tmp/fl-vq.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
t0=$(date +%s)

timeout 170 "$M" validate --simulate --quick --cpu zen4 --lib "$B/libfrontload-extract.so" \
	--targets "$FL_SRCDIR/results/targets/production.json" --json "$T/v.json" \
	>"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "validate exited $rc: $(tail -n 3 "$T/err")"
[ -s "$T/v.json" ] || fail "no JSON written"

isnum() { # jq-path
	jq -e "($1 | type) == \"number\"" "$T/v.json" >/dev/null 2>&1 ||
		fail "$1 is not a number: $(jq -c "$1" "$T/v.json" 2>&1)"
}
for k in l1i_mpki ll_code_mpki cond_branch_mpki indirect_branch_mpki; do
	isnum ".rates.$k"
done
for k in cond_branch_pct cond_taken_rate call_ret_pct load_pct store_pct mem_pct \
	scalar_fp_pct vector_pct div_pct insns_per_taken_branch classified_share; do
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
awk "BEGIN { exit !($share > 0.9) }" || fail "only $share of Ir classified by objdump"
grep -q 'L1i MPKI' "$T/out" || fail "no table on stdout"

mpki=$(jq '.metrics.l1i_mpki * 100 | round / 100' "$T/v.json")
sum=$(jq -r '.summary | "\(.pass) pass, \(.fail) fail, \(.unmeasurable) unmeasurable"' "$T/v.json")
echo "validate --simulate --quick: L1i MPKI $mpki, $sum (exit $rc), $(($(date +%s) - t0)) s"

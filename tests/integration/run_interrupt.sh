#!/bin/sh
# run_interrupt.sh: `frontload run` stopped by SIGINT in the middle of a step keeps what
# it measured and prints no figure for the step it cut short.
#
# Runs `frontload run --quick --max-qps 32 --out DIR` and sends SIGINT once the second
# step has started (its "step 2 ... in flight at most" line: a capacity probe, or the
# first bracket step when the first probe already saturated a busy host). Checks:
#   - exit status 130 (SIGINT) within 60 s, no process of the run left behind;
#   - DIR/result.json: status "interrupted", converged false, sla_bound_qps null, and the
#     completed first step kept in steps[] with its measured achieved_qps;
#   - the progress line of the cut step says "interrupted (cut short" and carries no
#     figure: no "achieved", no "nan" anywhere in the log.
. "$(dirname "$0")/common.inc"

RUN=$B/frontload
[ -x "$RUN" ] || fail "$RUN not built (ninja frontload)"

O=$T/run
t0=$(date +%s)
(cd "$T" && exec "$RUN" run --quick --max-qps 32 --out "$O") >"$T/run.out" 2>"$T/run.log" &
rpid=$!
FL_PIDS="$FL_PIDS $rpid"
FL_SERVERS="$FL_SERVERS run"
until grep -q "step 2 [a-z]* .*in flight at most" "$T/run.log" 2>/dev/null; do
	running "$rpid" || fail "frontload run ended before its second step: $(tail -n 3 "$T/run.log")"
	[ $(($(date +%s) - t0)) -lt 60 ] || fail "no second step within 60 s"
	sleep 0.1
done
sleep 0.5
kill -INT "$rpid"
wait_run "$rpid" "$t0" 60 "frontload run after SIGINT"
assert_eq "$rc" 130 "exit status after SIGINT"

R=$O/result.json
[ -s "$R" ] || fail "no $R after SIGINT"
assert_eq "$(get "$R" status)" interrupted "result status"
assert_eq "$(get "$R" converged)" false "converged"
assert_eq "$(get "$R" sla_bound_qps)" null "sla_bound_qps"
jq -e '(.steps[0].achieved_qps | type) == "number"' "$R" >/dev/null ||
	fail "first (complete) step not kept: $(jq -c '.steps[0]' "$R")"
cut=$(grep "step 2 [a-z]* " "$T/run.log" | tail -n 1)
case $cut in
*"interrupted (cut short"*) ;;
*) fail "the cut step's line does not say it was cut short: $cut" ;;
esac
case $cut in
*achieved*) fail "the cut step's line prints figures: $cut" ;;
esac
! grep -qi 'nan' "$T/run.log" || fail "a NaN was printed: $(grep -i nan "$T/run.log" | head -n 1)"
sleep 0.5
for n in frontload-leaf frontload-mock frontload-driver; do
	! pgrep -f "$O.*$n\|$n.*$O" >/dev/null 2>&1 || fail "$n of the run left behind"
done
echo "SIGINT in step 2: exit 130, status interrupted, $(jq '.steps | length' "$R") step(s) kept; $(elapsed) s"

#!/bin/sh
# run_quick.sh: `frontload run --quick`, the whole orchestrated job, end to end.
#
# Runs `frontload run --quick --max-qps 32 --out DIR` (it starts its own mock, leaf and
# driver beside the binary; capacity probes 4 -> 16 -> 32, a judged step at 32, then a
# 15 s final window there) and checks:
#   - exit status 3 within 120 s: complete, but no SLA bound (the knee lies above
#     --max-qps, so "SLA never reached below max");
#   - DIR/result.json is valid JSON with status "complete", converged false,
#     sla_bound_qps null and lower_bound_qps = 32 (a lower bound, named as one),
#     final_pass true, final_requested_qps > 0, final_achieved_qps >= 95% of it,
#     p95_ms <= sla_p95_ms, and the leaf's ready time (instances[0].leaf_stats.ready_ms);
#   - DIR/steps.csv has its header and a row per step, the last one the final window, and
#     result.json has at least as many steps;
#   - no process of the run is left behind (frontload stops its children).
# Why --max-qps 32: without it the search ends at the knee of this machine (69..150 qps
# seen here) and the final window runs right there, so whether it meets the SLA depends on
# what else the (shared, 2-core) machine is doing: one unbounded run in three missed it
# (p95 1.9 s at 128 qps after the same rate had passed) while every part worked. Capped,
# the search probes 4 -> 16 -> 32 ("SLA never reached below max", converged false) and
# the final window runs at 32 qps, under half the lowest knee seen, so the checks test the
# job, not the machine. The full search is run_search_converge.sh.
. "$(dirname "$0")/common.inc"

RUN=$B/frontload
[ -x "$RUN" ] || fail "$RUN not built (ninja frontload)"
[ -x "$B/frontload-driver" ] || fail "$B/frontload-driver not built"
LIMIT_S=120


O=$T/run
ARGS="--max-qps 32"
note "frontload run --quick $ARGS --out $O"
t0=$(date +%s)
# shellcheck disable=SC2086
(cd "$T" && exec "$RUN" run --quick $ARGS --out "$O") >"$T/run.out" 2>"$T/run.log" &
rpid=$!
FL_PIDS="$FL_PIDS $rpid"
FL_SERVERS="$FL_SERVERS run"
# Its own deadline: SIGTERM at LIMIT_S (frontload then stops its children and writes an
# interrupted result), so a slow run fails here rather than at the watchdog.
wait_run "$rpid" "$t0" "$LIMIT_S" "frontload run --quick"
took=$(($(date +%s) - t0))
[ "$rc" = 3 ] || fail "frontload run --quick $ARGS exit status $rc after $took s (3 expected:" \
	"complete without an SLA bound)"
grep -q "no SLA bound; lower_bound_qps 32.0" "$T/run.log" ||
	fail "closing lines do not name the lower bound: $(tail -n 3 "$T/run.log")"
note "frontload run --quick done in $took s"

R=$O/result.json
[ -s "$R" ] || fail "no $R"
"$CLIENT" --get . "$R" >/dev/null 2>"$T/json.err" ||
	fail "result.json is not valid JSON: $(head -n 1 "$T/json.err")"
assert_eq "$(get "$R" status)" complete "result status ($(getd "$R" status_reason ?))"
assert_eq "$(get "$R" is_fixed_qps)" false "is_fixed_qps (--quick searches)"
conv=$(get "$R" converged)
assert_eq "$conv" false "converged (the knee lies above --max-qps)"
assert_eq "$(get "$R" sla_bound_qps)" null "sla_bound_qps (not converged: no SLA bound)"
lb=$(get "$R" lower_bound_qps)
flt "$lb" "==" 32 || fail "lower_bound_qps $lb, not 32 (--max-qps, which passed)"
getd "$R" converged_reason "" | grep -q "SLA never reached below max" ||
	fail "converged_reason: $(getd "$R" converged_reason ?)"
assert_eq "$(get "$R" final_pass)" true "final_pass"
req=$(get "$R" final_requested_qps)
ach=$(get "$R" final_achieved_qps)
p95=$(get "$R" p95_ms)
sla=$(get "$R" sla_p95_ms)
flt "$req" ">" 0 || fail "final_requested_qps $req"
flt "$ach" ">=" "$(awk -v r="$req" 'BEGIN { print 0.95 * r }')" ||
	fail "final_achieved_qps $ach < 95% of final_requested_qps $req"
flt "$p95" "<=" "$sla" || fail "final p95_ms $p95 > sla_p95_ms $sla"
ready=$(jq '.instances[0].leaf_stats.ready_ms' "$R")
flt "$ready" ">" 0 || fail "instances[0].leaf_stats.ready_ms '$ready': the leaf's ready time"

S=$O/steps.csv
[ -s "$S" ] || fail "no $S"
head -n 1 "$S" | grep -q '^step,phase,requested_qps,achieved_qps,' ||
	fail "steps.csv header: $(head -n 1 "$S")"
rows=$(($(wc -l <"$S") - 1))
assert_gt "$rows" 1 "steps.csv rows (search steps + final window)"
last_phase=$(tail -n 1 "$S" | cut -d, -f2)
assert_eq "$last_phase" final "phase of the last steps.csv row"
nsteps=$(get "$R" steps | tr -cd '{' | wc -c)
[ "$nsteps" -ge "$rows" ] || fail "result.json steps ($nsteps objects) < steps.csv rows ($rows)"

# frontload stops its children: none may outlive it.
left=""
for f in /proc/[0-9]*/cmdline; do
	p=${f#/proc/}
	p=${p%/cmdline}
	case $(tr '\0' ' ' <"$f" 2>/dev/null) in *"$O"*) left="$left $p" ;; esac
done
[ -z "$left" ] || fail "processes of the run still alive after it exited:$left"

echo "frontload run --quick $ARGS: $took s, converged $conv, $rows steps," \
	"final $(printf %.1f "$ach")/$(printf %.1f "$req") qps, p95 $(printf %.1f "$p95") ms" \
	"(SLA $(printf %.0f "$sla")), $(elapsed) s"

#!/bin/sh
# fault_leaf_killed.sh: `frontload run` reports a leaf that dies mid-run and cleans up.
#
# `frontload run` in fixed mode (--qps 5,10: two 5 s steps after 1 s warm-ups) starts its
# own mock, leaf and driver. Once the first step is done and the second has run for 2 s,
# the leaf is SIGKILLed. Checks:
#   - frontload exits non-zero (1: "a process died") within 20 s of the kill;
#   - result.json is valid JSON, status "failed", status_reason names leaf0 and its death
#     by signal 9; instances[0].leaf_process.state says killed by signal 9;
#   - the measured step survives: result.json steps[0] is the 5 qps step, complete, and
#     steps.csv has its row;
#   - the mock and the driver (PIDs from frontload's "started" lines) are gone, and no
#     process naming the run directory is left.
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

RUN=$B/frontload
[ -x "$RUN" ] || fail "$RUN not built (ninja frontload)"
[ -x "$B/frontload-driver" ] || fail "$B/frontload-driver not built"
EXIT_LIMIT_S=20

# frontload's children are not ours: should this script fail half-way, kill those still
# naming our temp dir (by PID, checked against their command line), then the rest.
FK_PIDS=""
fk_cleanup() {
	for p in $FK_PIDS; do
		case $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") in *"$T"*) kill -9 "$p" 2>/dev/null ;; esac
	done
	fl_cleanup
}
trap 'fk_cleanup' EXIT

O=$T/run
note "frontload run --qps 5,10 --duration 5 --warmup-seconds 1 --out $O"
(cd "$T" && exec "$RUN" run --qps 5,10 --duration 5 --warmup-seconds 1 \
	--leaf-args "--extractors-per-story 50" --out "$O") >"$T/run.out" 2>"$T/run.log" &
rpid=$!
FL_PIDS="$FL_PIDS $rpid"
FL_SERVERS="$FL_SERVERS run"

# started_pid NAME: the PID frontload printed for its child NAME ("started leaf0 (pid N)").
started_pid() {
	sed -n "s/.*started $1 (pid \([0-9][0-9]*\)).*/\1/p" "$T/run.log" | head -n 1
}

# Wait for step 2 to start (step 1 is then in result.json), then 2 s more.
i=0
until grep -q "step 2 fixed" "$T/run.log" 2>/dev/null; do
	running "$rpid" || fail "frontload exited before step 2 (rc: see run.log)"
	i=$((i + 1))
	[ "$i" -le 600 ] || fail "frontload did not reach step 2 within 60 s"
	sleep 0.1
done
leaf=$(started_pid leaf0)
mock=$(started_pid mock0)
driver=$(started_pid driver0)
[ -n "$leaf" ] && [ -n "$mock" ] && [ -n "$driver" ] ||
	fail "no PIDs in frontload's 'started' lines: $(head -n 4 "$T/run.log" | tr '\n' ' ')"
FK_PIDS="$leaf $mock $driver"
sleep 2
running "$leaf" || fail "the leaf (pid $leaf) was gone before the kill"
running "$rpid" || fail "frontload exited before the kill"
note "SIGKILL leaf0 (pid $leaf); mock0 $mock, driver0 $driver"
kill -9 "$leaf" || fail "cannot SIGKILL the leaf (pid $leaf)"
t_kill=$(date +%s)

i=0
while running "$rpid" && [ "$i" -lt $((EXIT_LIMIT_S * 10)) ]; do
	sleep 0.1
	i=$((i + 1))
done
running "$rpid" && fail "frontload still running $EXIT_LIMIT_S s after its leaf was killed"
wait "$rpid"
rc=$?
forget "$rpid"
took=$(($(date +%s) - t_kill))
note "frontload exited $rc, $took s after the kill"
[ "$rc" != 0 ] || fail "frontload exit status 0 after its leaf was killed"
assert_eq "$rc" 1 "frontload exit status (1: a process died)"

R=$O/result.json
[ -s "$R" ] || fail "no $R"
"$CLIENT" --get . "$R" >/dev/null 2>"$T/json.err" ||
	fail "result.json is not valid JSON: $(head -n 1 "$T/json.err")"
assert_eq "$(get "$R" status)" failed "result status"
reason=$(get "$R" status_reason)
case $reason in
*leaf0*"pid $leaf"*"signal 9"*) ;;
*) fail "status_reason does not name leaf0 (pid $leaf) killed by signal 9: $(echo "$reason" | head -n 1)" ;;
esac
case $(get "$R" instances.0.leaf_process.state) in
*"signal 9"*) ;;
*) fail "instances[0].leaf_process.state: $(get "$R" instances.0.leaf_process.state)" ;;
esac
grep -q "leaf0 (pid $leaf) killed by signal 9" "$T/run.log" ||
	fail "frontload's stderr does not name the dead leaf"

# The step measured before the kill is kept.
assert_eq "$(get "$R" steps.0.step)" 1 "result.json steps[0].step"
q=$(get "$R" steps.0.requested_qps)
awk -v q="$q" 'BEGIN { exit !(q == 5) }' || fail "steps[0].requested_qps: got $q, want 5"
assert_eq "$(get "$R" steps.0.complete)" true "steps[0].complete"
assert_ge "$(get "$R" steps.0.requests)" 20 "steps[0].requests (5 qps x 5 s, Poisson)"
S=$O/steps.csv
[ -s "$S" ] || fail "no $S"
grep -q '^1,fixed,5\.000,' "$S" || fail "steps.csv has no row for step 1: $(tail -n 1 "$S")"

# The rest of the run is stopped.
for p in "$mock" "$driver"; do
	running "$p" && fail "pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline")) outlived frontload"
done
left=""
for f in /proc/[0-9]*/cmdline; do
	p=${f#/proc/}
	p=${p%/cmdline}
	case $(tr '\0' ' ' 2>/dev/null <"$f") in *"$O"*) left="$left $p" ;; esac
done
[ -z "$left" ] || fail "processes of the run still alive after it exited:$left"
FK_PIDS=""

echo "leaf SIGKILLed in step 2: frontload exit $rc after $took s, status failed" \
	"(leaf0 killed by signal 9), step 1 kept ($(get "$R" steps.0.requests) requests)," \
	"mock and driver gone, $(elapsed) s"

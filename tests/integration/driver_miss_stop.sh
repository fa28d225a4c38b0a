#!/bin/sh
# driver_miss_stop.sh: a control step with the miss-stop rule ends its measured window as
# soon as its miss is certain (frontload run's final windows: a 300 s window that has
# already lost its p95 needs no more minutes to say so), and runs its whole window when
# nothing goes wrong.
#
# mock + leaf (small knobs) + frontload-driver --control, fixed arrivals at 40 qps:
#   1. `step 40 1 40 64 300 0.5 7`: 1,600 requests due in the 40 s window, so the rule
#      stops the step once more than 80 OK replies came back over 300 ms, but not before
#      7 s of it. The leaf is SIGSTOPped for 3 s about 2 s into the window: the ~120
#      requests due meanwhile all answer over 300 ms, so the miss is certain about 5 s
#      in, and the step ends at its 7 s minimum, not at 40 s. Asserts: miss_stop {min_s
#      7, due 1,600 (+-1: the fixed gaps' float sum), late_limit due/20, stopped true,
#      late > late_limit}, stopped_at_s in 7..15 s, window_s under 15 s, latency p95 over
#      300 ms (the rule's promise), requests due later never sent (sent < due).
#   2. `step 40 0.5 3 64 300 0.5` on an idle leaf: the rule stays quiet (stopped false,
#      late 0, min_s 0), the window runs its 3 s and every request is answered OK.
#   3. `step 40 0.5 1 64`: no rule, miss_stop null.
#   4. `step 40 0.5 1 64 0 0.5`: refused with an error line naming MISS_P95_MS.
#   5. `step 40 0.5 1 64 300 0.5 -1`: refused with an error line naming MISS_MIN_S.
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"

start_small 8

# Step 1 is read at once; the others wait on the fifo until the stall is over.
mkfifo "$T/ctl" || fail "mkfifo"
"$DRIVER" --leaf "127.0.0.1:$leaf_port" --control --connections 2 --threads 1 \
	--arrival fixed --timeout-s 20 --stories 4 --request-size 4096 --reply-bytes 4096 \
	--quiet <"$T/ctl" >"$T/steps.jsonl" 2>"$T/driver.log" &
driver_pid=$!
FL_PIDS="$FL_PIDS $driver_pid"
exec 3>"$T/ctl"
printf 'step 40 1 40 64 300 0.5 7\n' >&3
sleep 3
running "$driver_pid" || fail "driver exited before the stall: $(tail -n 3 "$T/driver.log")"
note "SIGSTOP leaf (pid $leaf_pid) for 3 s"
kill -STOP "$leaf_pid" || fail "cannot SIGSTOP the leaf"
sleep 3
kill -CONT "$leaf_pid" || fail "cannot SIGCONT the leaf"
printf 'step 40 0.5 3 64 300 0.5\nstep 40 0.5 1 64\nstep 40 0.5 1 64 0 0.5\n' >&3
printf 'step 40 0.5 1 64 300 0.5 -1\nquit\n' >&3
exec 3>&-
wait_driver
[ "$drc" = 0 ] || fail "driver exit status $drc: $(tail -n 3 "$T/driver.log")"

L1=$(sed -n 1p "$T/steps.jsonl")
[ -n "$L1" ] || fail "step 1: no result line"
printf '%s\n' "$L1" > "$T/s1.json"
due=$(get "$T/s1.json" miss_stop.due)
limit=$(get "$T/s1.json" miss_stop.late_limit)
late=$(get "$T/s1.json" miss_stop.late)
at=$(get "$T/s1.json" miss_stop.stopped_at_s)
win=$(get "$T/s1.json" window_s)
p95=$(get "$T/s1.json" latency_ms.p95)
sent=$(get "$T/s1.json" sent)
note "step 1: due $due, late $late (limit $limit), stopped at $at s, window $win s, p95 $p95 ms, sent $sent"
assert_eq "$(get "$T/s1.json" miss_stop.stopped)" true "step 1: stopped by the rule"
assert_ge "$due" 1599 "step 1: requests due in the 40 s window at 40 qps"
assert_le "$due" 1601 "step 1: requests due in the 40 s window at 40 qps"
assert_eq "$limit" $((due / 20)) "step 1: late_limit = due / 20"
assert_gt "$late" "$limit" "step 1: OK replies over 300 ms"
flt "$at" "<" 15 || fail "step 1: stopped at $at s, not soon after the stall"
flt "$at" ">=" 7 || fail "step 1: stopped at $at s, before its 7 s minimum"
assert_eq "$(get "$T/s1.json" miss_stop.min_s)" 7 "step 1: miss_stop.min_s"
flt "$win" "<" 15 || fail "step 1: window_s $win, not cut at the stop"
flt "$p95" ">" 300 || fail "step 1: p95 $p95 ms not over the rule's 300 ms"
assert_gt "$due" "$sent" "step 1: requests due after the stop were not sent"

sed -n 2p "$T/steps.jsonl" > "$T/s2.json"
assert_eq "$(get "$T/s2.json" miss_stop.stopped)" false "step 2: idle leaf, not stopped"
assert_eq "$(get "$T/s2.json" miss_stop.late)" 0 "step 2: OK replies over 300 ms"
assert_eq "$(get "$T/s2.json" miss_stop.min_s)" 0 "step 2: miss_stop.min_s without MISS_MIN_S"
assert_eq "$(get "$T/s2.json" window_s)" 3 "step 2: window_s"
assert_eq "$(get "$T/s2.json" ok)" "$(get "$T/s2.json" sent)" "step 2: every request OK"
assert_eq "$(get "$T/s2.json" miss_stop.due)" "$(get "$T/s2.json" sent)" \
	"step 2: due = sent when the window ran whole"

sed -n 3p "$T/steps.jsonl" > "$T/s3.json"
assert_eq "$(get "$T/s3.json" miss_stop)" null "step 3: no rule, miss_stop null"
sed -n 4p "$T/steps.jsonl" | grep -q '"error":.*MISS_P95_MS' ||
	fail "step 4: no error naming MISS_P95_MS: $(sed -n 4p "$T/steps.jsonl")"
sed -n 5p "$T/steps.jsonl" | grep -q '"error":.*MISS_MIN_S' ||
	fail "step 5: no error naming MISS_MIN_S: $(sed -n 5p "$T/steps.jsonl")"

stop_server leaf
stop_server mock
echo "miss-stop: a 40 s window stopped at $(printf %.1f "$at") s ($late of $due late," \
	"limit $limit, p95 $(printf %.0f "$p95") ms); an idle 3 s window ran whole; $(elapsed) s"

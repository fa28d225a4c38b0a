#!/bin/sh
# driver_stall.sh: the driver measures latency from intended send times (no coordinated
# omission).
#
# mock + leaf (small knobs) + frontload-driver at a fixed 40 QPS (fixed gaps, 1 s warm-up,
# 8 s measured) over one connection of depth 2. About 3 s into the step the leaf is
# SIGSTOPped for 1 s, then SIGCONTed. Requests due during the stall wait in the driver's
# backlog (2 slots), so:
#   - latency p99 (from the intended send time) >= 900 ms: the stall shows up (the stall
#     lasts >= 1 s, requests are 25 ms apart and the backlog only adds waiting, so the 4th
#     largest of 320 latencies, the p99, is >= 1000 - 4 x 25 = 900 ms);
#   - service p99 (from the actual send) stays well under it (< half the latency p99;
#     observed 65..190 ms): only the 2 requests in flight when the leaf stopped saw the
#     stall in their service time, fewer than the 1% tail of 320 (p99 is the 4th largest);
#   - every request was sent and answered OK (no timeouts, errors or unsent), and the
#     leaf answered every request it received (warm-up included) with OK.
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"

# msnow: milliseconds on the wall clock.
msnow() {
	echo $(($(date +%s%N) / 1000000))
}

QPS=40
WARMUP=1
DURATION=8
STALL_AT=3
N=$((QPS * DURATION))
NALL_MIN=$((QPS * (WARMUP + DURATION) - 1))  # the warm-up may hold one fewer

start_small 16 --stats-file "$T/leaf.json"

note "driver: $QPS qps fixed, ${WARMUP} s warm-up + ${DURATION} s, 1 connection x depth 2"
start_driver "$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps "$QPS" --arrival fixed \
	--warmup "$WARMUP" --duration "$DURATION" --connections 1 --depth 2 --threads 1 \
	--timeout-s 10 --stories 16 --json "$T/driver.json"
sleep "$STALL_AT"
running "$driver_pid" || fail "driver exited before the stall"
note "SIGSTOP leaf (pid $leaf_pid)"
t0=$(msnow)
kill -STOP "$leaf_pid" || fail "cannot SIGSTOP the leaf"
sleep 1
kill -CONT "$leaf_pid" || fail "cannot SIGCONT the leaf"
stall_ms=$(($(msnow) - t0))
note "SIGCONT leaf after $stall_ms ms"

wait_driver
[ "$drc" = 0 ] || fail "driver exit status $drc"

J=$T/driver.json
s=steps.0
lat99=$(get "$J" $s.latency_ms.p99)
lat50=$(get "$J" $s.latency_ms.p50)
latmax=$(get "$J" $s.latency_ms.max)
svc99=$(get "$J" $s.service_ms.p99)
svc50=$(get "$J" $s.service_ms.p50)
svcmax=$(get "$J" $s.service_ms.max)
sent=$(get "$J" $s.sent)
ok=$(get "$J" $s.ok)
backlogged=$(get "$J" $s.backlogged)
note "latency p50 $lat50 p99 $lat99 max $latmax ms; service p50 $svc50 p99 $svc99 max $svcmax ms;" \
	"sent $sent ok $ok backlogged $backlogged"

assert_eq "$(get "$J" interrupted)" false "driver run interrupted"
assert_eq "$sent" "$N" "measured requests sent ($QPS qps x $DURATION s)"
assert_eq "$(get "$J" $s.completed)" "$N" "measured requests answered"
assert_eq "$ok" "$N" "measured requests OK"
assert_eq "$(get "$J" $s.timeouts)" 0 "timeouts"
assert_eq "$(get "$J" $s.unsent)" 0 "unsent requests"
assert_eq "$(get "$J" $s.overloaded)" 0 "OVERLOADED replies"
assert_eq "$(get "$J" $s.errors.total)" 0 "driver errors ($(get "$J" $s.errors))"
assert_eq "$(get "$J" $s.latency_ms.count)" "$N" "latency samples"
assert_gt "$backlogged" 0 "requests that waited for a slot (the stall filled both)"

flt "$lat99" ">=" 900 || fail "latency p99 $lat99 ms < 900 ms after a $stall_ms ms stall:" \
	"latency is not measured from the intended send time"
flt "$latmax" ">=" 900 || fail "latency max $latmax ms < 900 ms after a $stall_ms ms stall"
flt "$svc99" "<" "$(awk -v x="$lat99" 'BEGIN { print x / 2 }')" ||
	fail "service p99 $svc99 ms not under half the latency p99 $lat99 ms: more than the" \
		"2 requests in flight saw the stall in their service time"
flt "$svcmax" ">=" 500 || fail "service max $svcmax ms: no request in flight saw the stall"

# The leaf answered every request the driver sent, warm-up included.
stop_server leaf
assert_eq "$leaf_rc" 0 "leaf exit status after SIGTERM"
lrecv=$(get "$T/leaf.json" requests.received)
assert_ge "$lrecv" "$NALL_MIN" "leaf requests received (measured + warm-up)"
assert_eq "$(get "$T/leaf.json" requests.ok)" "$lrecv" "leaf requests OK (of $lrecv received)"
stop_server mock

echo "stall ${stall_ms} ms: latency p99 $(printf %.0f "$lat99") ms (max $(printf %.0f "$latmax")," \
	"p50 $(printf %.1f "$lat50")), service p99 $(printf %.1f "$svc99") ms" \
	"(max $(printf %.0f "$svcmax")), $ok/$N OK, $backlogged backlogged, $(elapsed) s"

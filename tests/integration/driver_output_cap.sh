#!/bin/sh
# driver_output_cap.sh: when the leaf stops reading, the driver keeps what is due in its
# backlog, unpacked, instead of packing it into a connection's output: its memory stays
# bounded, and every request is still sent and answered once the leaf reads again.
#
# mock + leaf (small knobs) + frontload-driver at a fixed 40 QPS of 2 MiB requests, one
# connection with a depth (512) the step never reaches, 1 s warm-up + 8 s measured. About
# 2 s into the step the leaf is SIGSTOPped for 3 s: 120 requests (240 MiB) fall due
# meanwhile. Before the cap they were packed into the output buffer and the driver's
# peak RSS grew by their bytes (measured here: 284 MiB); with the cap (8 MiB of unsent
# bytes per connection, driver_engine.c) they wait as backlog entries (60 MiB). Asserts:
#   - the driver's peak RSS (/usr/bin/time %M) < 160 MiB: under the stall's 240 MiB;
#   - backlogged > 0 (requests waited for room) and driver_limited false (the depth,
#     the only ceiling of the driver's own, never bound);
#   - every measured request was sent and answered OK, none timed out or went unsent;
#   - latency p99 >= 2,000 ms (the stall shows from the intended send times).
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"
[ -x /usr/bin/time ] || skip "/usr/bin/time not installed (Debian package time)"

QPS=40
N=$((QPS * 8))
MIB=1048576

start_small 16

note "driver: $QPS qps fixed, 2 MiB requests, 1 s warm-up + 8 s, 1 connection x depth 512"
start_driver /usr/bin/time -f "%M" -o "$T/driver.rss" "$DRIVER" --leaf "127.0.0.1:$leaf_port" \
	--qps "$QPS" --arrival fixed --warmup 1 --duration 8 --connections 1 --depth 512 \
	--threads 1 --timeout-s 20 --stories 16 --request-size $((2 * MIB)) \
	--json "$T/driver.json"
sleep 3
running "$driver_pid" || fail "driver exited before the stall"
note "SIGSTOP leaf (pid $leaf_pid) for 3 s"
kill -STOP "$leaf_pid" || fail "cannot SIGSTOP the leaf"
sleep 3
kill -CONT "$leaf_pid" || fail "cannot SIGCONT the leaf"

wait_driver
[ "$drc" = 0 ] || fail "driver exit status $drc"

J=$T/driver.json
s=steps.0
rss_kb=$(tail -n 1 "$T/driver.rss")
rss_mib=$((rss_kb / 1024))
backlogged=$(get "$J" $s.backlogged)
lat99=$(get "$J" $s.latency_ms.p99)
note "driver peak RSS $rss_mib MiB; backlogged $backlogged; latency p99 $lat99 ms"

assert_le "$rss_mib" 159 "driver peak RSS MiB (240 MiB of requests fell due in the stall)"
assert_eq "$(get "$J" $s.sent)" "$N" "measured requests sent"
assert_eq "$(get "$J" $s.ok)" "$N" "measured requests OK"
assert_eq "$(get "$J" $s.timeouts)" 0 "timeouts"
assert_eq "$(get "$J" $s.unsent)" 0 "unsent requests"
assert_eq "$(get "$J" $s.errors.total)" 0 "driver errors ($(get "$J" $s.errors))"
assert_gt "$backlogged" 0 "requests that waited for room while the leaf was stopped"
assert_eq "$(get "$J" $s.driver_limited)" false "driver_limited (the depth never bound)"
flt "$lat99" ">=" 2000 || fail "latency p99 $lat99 ms < 2,000 ms after a 3 s stall"

stop_server leaf
stop_server mock
echo "3 s stall at $QPS qps of 2 MiB requests: driver peak RSS $rss_mib MiB (cap 160)," \
	"$backlogged backlogged, latency p99 $(printf %.0f "$lat99") ms, $N/$N OK, $(elapsed) s"

#!/bin/sh
# fault_sigterm.sh: SIGTERM under load: the mock, then the leaf, stop cleanly and count.
#
# mock + leaf + frontload-driver at 30 QPS (Poisson, no warm-up, 9 s step, 2 connections
# of depth 8). Each server writes its stats only when asked or at exit here.
#   1. ~3 s in, SIGTERM the mock while the leaf is fanning out to it: it exits 0 within
#      5 s (pending replies get 1 s), its final stats file is valid JSON with requests > 0,
#      at least as many as the leaf's fanout.ok (every OK reply the leaf took, the mock
#      produced), and its bad-frame counters are 0. The leaf keeps answering (its fanout
#      calls now fail): 2 s later its requests.ok has grown.
#   2. ~6 s in, SIGTERM the leaf with the driver still sending: it exits 0 within 5 s
#      (drain: up to 2 s), its final stats file is valid JSON: inflight 0, received =
#      replied + dropped_disconnected, received >= 100 and ok >= 100 (~6 s at 30 QPS).
#   3. The driver finishes its step (the leaf gone: errors, not a hang) within 30 s; the
#      OK replies it counted are <= the leaf's requests.ok and the difference is at most
#      what was in flight at the stop (the drain delivers what it finishes).
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"
QPS=30
LIMIT_S=5

# term_within NAME: SIGTERM NAME, check exit 0 within LIMIT_S; sets term_ms.
term_within() {
	tw_t0=$(date +%s%N)
	stop_server "$1"
	term_ms=$((($(date +%s%N) - tw_t0) / 1000000))
	eval "tw_rc=\$$1_rc"
	assert_eq "$tw_rc" 0 "$1 exit status after SIGTERM under load"
	assert_le "$term_ms" $((LIMIT_S * 1000)) "$1 exit time after SIGTERM (ms)"
	note "$1 exited 0 in $term_ms ms"
}
# valid_json FILE WHAT
valid_json() {
	[ -s "$1" ] || fail "$2: no final stats file $1"
	"$CLIENT" --get . "$1" >/dev/null 2>"$T/json.err" ||
		fail "$2: final stats are not valid JSON: $(head -n 1 "$T/json.err")"
}

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 8 \
	--latency-cap-us 5000 --stats-file "$T/mock.json" --quiet
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--extractors-per-story 50 --ranker-threads 2 --fanout-threads 1 --rpc-channels 2 \
	--rpc-timeout-ms 300 --stats-file "$T/leaf.json" --quiet

note "driver: $QPS qps, 12 s"
start_driver "$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps $QPS --warmup 0 --duration 9 \
	--connections 2 --depth 8 --threads 1 --timeout-s 5 --request-size 20000 \
	--reply-bytes 10000 --json "$T/driver.json"
t_start=$(date +%s)

# 1. The mock.
sleep 3
snapshot leaf "$T/leaf.json" "$T/s1.json"
assert_gt "$(get "$T/s1.json" fanout.ok)" 0 "1: leaf fanout calls OK before the mock's SIGTERM"
note "1. SIGTERM mock (pid $mock_pid)"
term_within mock
mock_ms=$term_ms
M=$T/mock.json
valid_json "$M" mock
mreq=$(get "$M" requests)
assert_gt "$mreq" 0 "1: mock requests in its final stats"
snapshot leaf "$T/leaf.json" "$T/s2.json"
lfo=$(get "$T/s2.json" fanout.ok)
assert_ge "$mreq" "$lfo" "1: mock OK requests vs the leaf's fanout calls OK"
assert_eq "$(get "$M" bad_frames)" 0 "1: mock bad frames"
assert_eq "$(get "$M" internal_errors)" 0 "1: mock internal errors"
ok2=$(get "$T/s2.json" requests.ok)
sleep 2
snapshot leaf "$T/leaf.json" "$T/s3.json"
assert_gt "$(get "$T/s3.json" requests.ok)" "$ok2" "1: leaf OK replies after the mock stopped"

# 2. The leaf.
sleep $((6 - ($(date +%s) - t_start))) 2>/dev/null
note "2. SIGTERM leaf (pid $leaf_pid)"
term_within leaf
leaf_ms=$term_ms
L=$T/leaf.json
valid_json "$L" leaf
recv=$(get "$L" requests.received)
repl=$(get "$L" requests.replied)
dd=$(get "$L" requests.dropped_disconnected)
lok=$(get "$L" requests.ok)
assert_eq "$(get "$L" overheads.inflight)" 0 "2: leaf inflight in its final stats"
assert_eq "$recv" $((repl + dd)) "2: leaf received = replied ($repl) + dropped_disconnected ($dd)"
assert_ge "$recv" 100 "2: leaf requests received (~6 s at $QPS qps)"
assert_ge "$lok" 100 "2: leaf requests OK"
assert_gt "$(get "$L" fanout.errors)" 0 "2: leaf fanout errors after the mock stopped"

# 3. The driver notices and finishes.
i=0
while running "$driver_pid" && [ "$i" -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
running "$driver_pid" && fail "3: driver still running 30 s after the leaf stopped"
wait_driver
case $drc in 0 | 1) ;; *) fail "3: driver exit status $drc" ;; esac
J=$T/driver.json
valid_json "$J" driver
dok=$(get "$J" steps.0.ok)
assert_le "$dok" "$lok" "3: OK replies the driver got vs the leaf's requests.ok"
assert_le $((lok - dok)) 16 "3: OK replies the leaf counted but the driver never got (<= 2 x depth 8)"

echo "SIGTERM under $QPS qps: mock exit 0 in $mock_ms ms ($mreq requests >= leaf's $lfo fanout OK)," \
	"leaf exit 0 in $leaf_ms ms ($recv received, $lok ok, $dd dropped, inflight 0)," \
	"driver got $dok ok, $(elapsed) s"

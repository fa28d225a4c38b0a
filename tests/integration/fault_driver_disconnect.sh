#!/bin/sh
# fault_driver_disconnect.sh: clients vanishing with many requests in flight cost the leaf
# nothing lasting.
#
# mock + leaf (50 extractor calls per story, 2 RANKER threads; --max-frame-bytes 1 MiB
# caps the sampled outbound bodies, whose rare tens-of-MiB calls would step RSS up for
# reasons unrelated to disconnects). A warm-up run of 60 requests, then BURSTS bursts:
# leaf-client opens 4 connections of depth 32 (128 requests in flight, 64 KiB requests
# asking 100 KB replies) and disappears while the leaf holds them: odd bursts are
# SIGKILLed once the leaf reports >= 100 in flight, even bursts end on leaf-client's own
# --timeout-s 1 (it exits with its requests unanswered). After each:
#   - the leaf's overheads.inflight returns to 0 within 30 s;
#   - requests.dropped_disconnected grew (replies for the dead connections were dropped,
#     not sent) and the books balance: received = replied + dropped_disconnected;
#   - every connection accepted was closed, and the leaf's open fds are back to their
#     count before the bursts (no socket kept for a dead peer).
# Memory: VmRSS is sampled before the bursts and after each. glibc keeps freed heap in
# its arenas, so RSS rises to a high-water mark set by what one burst holds at once (128
# requests: their payloads, replies and fanout calls, about 100 MB at most) and stays
# there. Checked:
#   - RSS after the last burst <= the highest RSS after bursts 1..BURSTS/2 + 12 MiB: the
#     high-water mark is set in the first half, and a leak of what a dropped request held
#     (its 64 KiB payload alone is 8 MiB per burst of 128) would add that much per burst,
#     32 MiB over the 4 later bursts (observed: the RSS after each burst wanders within
#     +-5 MiB of the mark as the arenas are reused, never climbing);
#   - RSS after the last burst <= RSS before the bursts + 160 MiB (observed +15..20 MiB).
# Afterwards 40 normal requests are all OK, and the leaf exits 0 on SIGTERM.
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

BURSTS=8
DEPTH=32
CONNS=4
INFLIGHT=$((DEPTH * CONNS))
REQ_BYTES=65536
REPLY_BYTES=100000

# rss_kb PID: resident set size (kB) from /proc/PID/status.
rss_kb() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null
}
# nfds PID: open file descriptors.
nfds() {
	ls "/proc/$1/fd" 2>/dev/null | wc -l
}

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 8 \
	--latency-cap-us 5000 --quiet
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--extractors-per-story 50 --ranker-threads 2 --fanout-threads 1 --rpc-channels 2 \
	--max-frame-bytes 1048576 --stats-file "$T/leaf.json" --quiet

note "warm-up: 60 requests"
client --port "$leaf_port" --requests 60 --depth 4 --connections 2 --request-size $REQ_BYTES \
	--reply-bytes $REPLY_BYTES --json "$T/w.json" --timeout-s 40
assert_eq "$(get "$T/w.json" status.ok)" 60 "warm-up OK replies"
rss0=$(rss_kb "$leaf_pid")
fd0=$(nfds "$leaf_pid")
note "before the bursts: RSS $rss0 kB, $fd0 fds"

dd_prev=0
rss_hw=
rss_all=
drain_max=0
for b in $(seq 1 $BURSTS); do
	if [ $((b % 2)) = 1 ]; then how=SIGKILL; to=60; else how=timeout; to=1; fi
	"$CLIENT" --port "$leaf_port" --requests 100000 --depth $DEPTH --connections $CONNS \
		--request-size $REQ_BYTES --reply-bytes $REPLY_BYTES --seed "$b" --timeout-s $to \
		--json "$T/b.json" >"$T/client.log" 2>&1 &
	cpid=$!
	FL_PIDS="$FL_PIDS $cpid"
	seen=0
	i=0
	while :; do
		snapshot leaf "$T/leaf.json" "$T/s.json"
		seen=$(get "$T/s.json" overheads.inflight)
		[ "$seen" -ge 100 ] && break
		running "$cpid" || break
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "burst $b: the leaf never held 100 requests (inflight $seen)"
		sleep 0.05
	done
	[ "$seen" -ge 100 ] || fail "burst $b: leaf-client ended before 100 requests were in" \
		"flight (inflight $seen): $(tail -n 2 "$T/client.log" | tr '\n' ' ')"
	if [ $how = SIGKILL ]; then
		kill -9 "$cpid"
		{ wait "$cpid"; } 2>/dev/null
	else
		wait "$cpid"
		crc=$?
		[ "$crc" != 0 ] || fail "burst $b: leaf-client --timeout-s 1 exited 0 with" \
			"requests in flight"
	fi
	forget "$cpid"
	t0=$(date +%s%N)
	i=0
	while :; do
		snapshot leaf "$T/leaf.json" "$T/s.json"
		inf=$(get "$T/s.json" overheads.inflight)
		[ "$inf" = 0 ] && break
		i=$((i + 1))
		[ "$i" -le 150 ] || fail "burst $b ($how): inflight still $inf 30 s after the client left"
		sleep 0.2
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -gt "$drain_max" ] && drain_max=$ms
	S=$T/s.json
	recv=$(get "$S" requests.received)
	repl=$(get "$S" requests.replied)
	dd=$(get "$S" requests.dropped_disconnected)
	assert_gt "$dd" "$dd_prev" "burst $b ($how): requests.dropped_disconnected grew"
	assert_eq "$recv" $((repl + dd)) "burst $b ($how): received = replied ($repl) + dropped_disconnected ($dd)"
	assert_eq "$(get "$S" connections.closed)" "$(get "$S" connections.accepted)" \
		"burst $b ($how): connections closed (of accepted)"
	assert_le "$(get "$S" overheads.inflight_peak)" $INFLIGHT "burst $b: inflight peak"
	# The fds settle with the last close; give the IO thread a moment.
	i=0
	while [ "$(nfds "$leaf_pid")" != "$fd0" ] && [ "$i" -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	assert_eq "$(nfds "$leaf_pid")" "$fd0" "burst $b ($how): leaf open fds (before the bursts: $fd0)"
	r=$(rss_kb "$leaf_pid")
	rss_all="$rss_all $r"
	[ "$b" -le $((BURSTS / 2)) ] && [ "$r" -gt "${rss_hw:-0}" ] && rss_hw=$r
	note "burst $b ($how): $seen in flight, drained in $ms ms, dropped $((dd - dd_prev))," \
		"RSS $r kB"
	dd_prev=$dd
done

rssN=$(rss_kb "$leaf_pid")
assert_le "$rssN" $((rss_hw + 12288)) \
	"leaf RSS after $BURSTS bursts vs the highest after bursts 1..$((BURSTS / 2)) (kB, + 12 MiB)"
assert_le "$rssN" $((rss0 + 163840)) "leaf RSS after $BURSTS bursts vs before them (kB, + 160 MiB)"

note "40 requests after the bursts"
client --port "$leaf_port" --requests 40 --depth 4 --request-size $REQ_BYTES \
	--reply-bytes $REPLY_BYTES --json "$T/after.json" --timeout-s 40
assert_eq "$(get "$T/after.json" status.ok)" 40 "OK replies after the bursts"
assert_eq "$(get "$T/after.json" errors.total)" 0 "client-side errors after the bursts"
stop_server leaf
assert_eq "$leaf_rc" 0 "leaf exit status after SIGTERM"
assert_eq "$(get "$T/leaf.json" overheads.inflight)" 0 "final stats: inflight"
stop_server mock

echo "$BURSTS bursts of $INFLIGHT in flight (kill -9 / client timeout): $dd dropped_disconnected," \
	"inflight back to 0 (slowest ${drain_max} ms), fds $fd0 -> $fd0, RSS kB $rss0 ->$rss_all," \
	"40/40 ok after, $(elapsed) s"

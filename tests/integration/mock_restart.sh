#!/bin/sh
# mock_restart.sh: SIGKILL the mock mid-run, then restart it on the same port; the leaf answers throughout.
#
# 1. baseline: 40 requests, no fanout errors
# 2. the mock is SIGKILLed while 400 requests run: every request still gets an OK reply,
#    replies before the kill carry no fanout errors and later ones do
# 3. with the mock down: 20 requests, OK, every fanout call of each failed
# 4. the mock restarts on the same port: the leaf's channels reconnect (reconnects > 0)
# 5. 50 more requests: OK, zero new fanout errors, and the new mock saw all their calls
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

SCALE=0.01
CHANNELS=2

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
mock_args="--tls-dir $T/tls --threads 1 --corpus-mb 8 --latency-cap-us 5000 --quiet"
# shellcheck disable=SC2086
start_server mock "$MOCK" --port 0 $mock_args
port=$mock_port
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$port" \
	--extractors-per-story 50 --ranker-threads 2 --fanout-threads 1 \
	--rpc-channels $CHANNELS --rpc-fanout-scale $SCALE --rpc-timeout-ms 300 --rpc-ping-ms 100 \
	--stats-file "$T/leaf.json" --quiet
per_req=$("$CLIENT" --expect-fanout $SCALE | sed -n 's/^total //p')
assert_gt "$per_req" 0 "expected fanout calls per request"

# 1. Baseline.
note "1. baseline: 40 requests"
client --port "$leaf_port" --requests 40 --depth 2 --request-size 20000 --seed 1 \
	--json "$T/c1.json" --timeout-s 30
assert_eq "$(get "$T/c1.json" status.ok)" 40 "1: OK replies"
assert_eq "$(get "$T/c1.json" fanout_errors.sum)" 0 "1: fanout errors with the mock up"

# 2. SIGKILL the mock while requests are in flight.
note "2. SIGKILL the mock during a 400-request run"
"$CLIENT" --port "$leaf_port" --requests 400 --depth 2 --request-size 20000 --seed 2 \
	--json "$T/c2.json" --timeout-s 60 >"$T/client.log" 2>&1 &
client_pid=$!
FL_PIDS="$FL_PIDS $client_pid"
# Kill once the leaf has answered 20 of this run's requests (40 came before).
i=0
while :; do
	snapshot leaf "$T/leaf.json" "$T/s2.json"
	[ "$(get "$T/s2.json" requests.ok)" -ge 60 ] && break
	running "$client_pid" || fail "2: leaf-client ended early: $(tail -n 2 "$T/client.log" | tr '\n' ' ')"
	i=$((i + 1))
	[ "$i" -le 200 ] || fail "2: the leaf answered under 20 requests in 20 s"
	sleep 0.1
done
running "$client_pid" || fail "2: the 400-request run ended before the mock was killed"
stop_server mock KILL
note "mock killed"
wait "$client_pid"
rc=$?
forget "$client_pid"
[ "$rc" = 0 ] || fail "2: leaf-client exit $rc: $(tail -n 2 "$T/client.log" | tr '\n' ' ')"
c=$T/c2.json
assert_eq "$(get "$c" status.ok)" 400 "2: OK replies across the kill"
assert_eq "$(get "$c" fanout_errors.min)" 0 "2: replies before the kill without fanout errors"
assert_gt "$(get "$c" fanout_errors.max)" 0 "2: replies after the kill with fanout errors"
errs2=$(get "$c" fanout_errors.sum)

# 3. The mock stays down.
note "3. 20 requests with the mock down"
client --port "$leaf_port" --requests 20 --depth 2 --request-size 20000 --seed 3 \
	--json "$T/c3.json" --timeout-s 30
c=$T/c3.json
assert_eq "$(get "$c" status.ok)" 20 "3: OK replies with the mock down"
assert_eq "$(get "$c" fanout_errors.min)" "$per_req" "3: failed fanout calls per reply"
snapshot leaf "$T/leaf.json" "$T/s3.json"
e3=$(get "$T/s3.json" fanout.errors)
assert_ge "$e3" $((errs2 + 20 * per_req)) "3: leaf fanout errors"
assert_eq "$(get "$T/s3.json" requests.ok)" 460 "3: leaf OK requests"

# 4. Restart the mock on the same port; wait for every channel to come back.
note "4. restart the mock on port $port"
# shellcheck disable=SC2086
start_server mock "$MOCK" --port "$port" $mock_args --stats-file "$T/mock2.json"
assert_eq "$mock_port" "$port" "4: restarted mock's port"
i=0
while :; do
	snapshot leaf "$T/leaf.json" "$T/s4.json"
	up=$(get "$T/s4.json" fanout.channels_up)
	[ "$up" = "$CHANNELS" ] && break
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "4: $up of $CHANNELS channels up 10 s after the mock restarted"
	sleep 0.2
done
reconnects=$(get "$T/s4.json" fanout.reconnects)
assert_gt "$reconnects" 0 "4: fanout reconnects"
e4=$(get "$T/s4.json" fanout.errors)
ok4=$(get "$T/s4.json" fanout.ok)

# 5. After the reconnect: no new fanout errors.
note "5. 50 requests after the restart"
client --port "$leaf_port" --requests 50 --depth 2 --request-size 20000 --seed 5 \
	--json "$T/c5.json" --timeout-s 30
c=$T/c5.json
assert_eq "$(get "$c" status.ok)" 50 "5: OK replies after the restart"
assert_eq "$(get "$c" fanout_errors.sum)" 0 "5: fanout errors in replies after the restart"
assert_eq "$(get "$c" fanout_calls.sum)" $((50 * per_req)) "5: fanout calls after the restart"
stop_server leaf
assert_eq "$leaf_rc" 0 "5: leaf exit status after SIGTERM"
assert_eq "$(get "$T/leaf.json" fanout.errors)" "$e4" "5: leaf fanout errors after the restart"
assert_eq "$(get "$T/leaf.json" fanout.ok)" $((ok4 + 50 * per_req)) "5: leaf fanout calls OK"
assert_eq "$(get "$T/leaf.json" requests.ok)" 510 "5: leaf OK requests in all"
stop_server mock
assert_eq "$mock_rc" 0 "5: restarted mock exit status"
assert_eq "$(get "$T/mock2.json" requests)" $((50 * per_req)) "5: restarted mock's requests"

echo "mock killed mid-run: 400/400 ok ($errs2 fanout errors); down: 20/20 ok;" \
	"restarted: $reconnects reconnects, 50/50 ok, 0 new fanout errors, $(elapsed) s"

#!/bin/sh
# deadline_overload.sh: offered ~4x capacity, the leaf skips the work that cannot meet its
# deadline (counted by stage), bounds its queue by time, and OK replies keep flowing.
#
# mock + a leaf made slow and narrow (one RANKER thread, 1000 extractor calls per story)
# with room for a long queue (--inflight-limit 64: at capacity C a full queue is 64 / C s
# of waiting, several times the deadline below) and --max-queue-ms Q. Steps:
#   1. capacity C: 160 requests closed-loop at depth 8 (leaf-client); S = 1/C.
#   2. deadline: frontload-driver at 4C QPS for DURATION s with --deadline-ms D, D = 12 S
#      (at least 150 ms), Q = the smaller of 2 D and 32 S (half a full queue of 64 S: the
#      bound must be reachable, also when the 150 ms floor lifted D above 12 S on a fast
#      leaf, and still binds when C was measured at half the rate the leaf then runs).
#      Checks over the measured
#      window:
#      - skipped work: the driver counts errors.deadline_exceeded > 0; the leaf's
#        deadline.skipped_total > 0, equal to the sum of its by-stage counts, and its
#        requests.deadline_exceeded >= the driver's count (the leaf's includes warm-up);
#      - goodput: OK replies >= 50% of C x DURATION (skipping costs little; the driver
#        takes some of the 2 CPUs);
#      - bounded latency: p95 of OK replies <= D + 500 ms. The checks let a request go on
#        while a fast (25th percentile) run of its remaining stages still fits, so some
#        end past D; the 500 ms is for them and for scheduling on a loaded host. Without
#        deadlines a full queue alone is 64 S = 5 D of waiting;
#      - no timeouts.
#   3. queue bound: the same rate with --deadline-ms none: nothing carries a deadline, so
#      the RANKER queue's time bound sheds: deadline.queue_wait_shed grows, the driver sees
#      OVERLOADED, OK replies >= 50% of C x DURATION, p95 <= Q + D + 500 ms (the
#      stages, fanout and reply after the queue, on a host whose 2 CPUs the 4C driver and
#      the leaf's OVERLOADED answers saturate: measured 665 ms and, twice in one run,
#      753 ms against Q + D = 450 ms on a 2-core VM where C was 102/s).
#   Before step 2 nothing has been measured: the fresh leaf's cpu_share and
#   deadline.estimate_ms are null (not 0); after it they are numbers.
# Timing and capacity are judged, so a sanitizer build skips it (exit 77). On a host whose
# CPUs other work also wants, scheduling delay alone can push OK replies past D + 500 ms:
# tests/run.sh runs a failed attempt once more and says so in the PASS line.
# fl-test: retries=1
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
if [ -n "${FL_SANITIZERS:-}" ]; then
	echo "skipped: judges capacity and latency, not meaningful under sanitizers ($FL_SANITIZERS)"
	exit 77
fi
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"
DURATION=${DEADLINE_SECONDS:-10}
NCAP=160
req="--request-size 20000 --reply-bytes 10000"

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 8 \
	--latency-cap-us 5000 --quiet

# 1. Capacity, on a leaf without a queue bound.
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--extractors-per-story 1000 --ranker-threads 1 --io-threads 1 --fanout-threads 1 \
	--rpc-channels 2 --inflight-limit 64 --max-frame-bytes 1048576 --quiet
# shellcheck disable=SC2086
client --port "$leaf_port" --requests $NCAP --depth 8 $req --seed 2 --json "$T/cap.json" \
	--timeout-s 50
assert_eq "$(get "$T/cap.json" status.ok)" $NCAP "1: capacity run OK replies"
C=$(calc "$NCAP / $(get "$T/cap.json" wall_s)")
stop_server leaf
D=$(awk -v c="$C" 'BEGIN { d = 12000 / c; printf "%d", d < 150 ? 150 : d }')
Q=$(awk -v c="$C" -v d="$D" 'BEGIN { q = 32000 / c; printf "%d", q < 2 * d ? q : 2 * d }')
QPS=$(calc "4 * $C")
note "1. capacity $C req/s; offering $QPS qps, deadline $D ms, queue bound $Q ms"

start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--extractors-per-story 1000 --ranker-threads 1 --io-threads 1 --fanout-threads 1 \
	--rpc-channels 2 --inflight-limit 64 --max-frame-bytes 1048576 --max-queue-ms $Q \
	--stats-file "$T/leaf.json" --quiet

snapshot leaf "$T/leaf.json" "$T/s0.json"
assert_eq "$(get "$T/s0.json" cpu_share.extract)" null "fresh leaf: cpu_share.extract"
assert_eq "$(get "$T/s0.json" deadline.estimate_ms.fanout)" null \
	"fresh leaf: deadline.estimate_ms.fanout"
assert_eq "$(get "$T/s0.json" pools.ranker.cpu_unread)" 0 "fresh leaf: pools.ranker.cpu_unread"

# step NAME DEADLINE: one driver step at QPS; results in $T/NAME.json.
step() {
	# shellcheck disable=SC2086
	"$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps "$QPS" --warmup 1 --duration "$DURATION" \
		--connections 4 --depth 64 --threads 1 --timeout-s 5 --deadline-ms "$2" $req \
		--json "$T/$1.json" --quiet >"$T/$1.out" 2>"$T/$1.log" ||
		fail "$1: driver exit status $?: $(tail -n 3 "$T/$1.log" | tr '\n' ' ')"
}

# 2. Deadline.
step dl "$D"
J=$T/dl.json
ok=$(get "$J" steps.0.ok)
dle=$(get "$J" steps.0.errors.deadline_exceeded)
p95=$(get "$J" steps.0.latency_ms.p95)
snapshot leaf "$T/leaf.json" "$T/s1.json"
skipped=$(get "$T/s1.json" deadline.skipped_total)
by_stage=0
for w in admit queue extract rank fanout; do
	for k in expired would_miss; do
		by_stage=$((by_stage + $(get "$T/s1.json" deadline.skipped.$w.$k)))
	done
done
note "2. sent $(get "$J" steps.0.sent), ok $ok, deadline_exceeded $dle, overloaded" \
	"$(get "$J" steps.0.overloaded), p95 $p95 ms; leaf skipped $skipped" \
	"($(get "$T/s1.json" deadline.skipped))"
assert_gt "$dle" 0 "2: driver errors.deadline_exceeded"
assert_gt "$skipped" 0 "2: leaf deadline.skipped_total"
assert_eq "$by_stage" "$skipped" "2: leaf skipped by stage vs skipped_total"
assert_ge "$(get "$T/s1.json" requests.deadline_exceeded)" "$dle" \
	"2: leaf requests.deadline_exceeded vs the driver's count"
assert_eq "$(get "$J" steps.0.timeouts)" 0 "2: timeouts"
flt "$ok" ">=" "$(calc "0.5 * $C * $DURATION")" ||
	fail "2: OK replies $ok < 50% of capacity x $DURATION s ($(calc "0.5 * $C * $DURATION"))"
flt "$p95" "<=" "$((D + 500))" || fail "2: p95 of OK replies $p95 ms > deadline $D + 500 ms"
shed0=$(get "$T/s1.json" deadline.queue_wait_shed)
flt "$(get "$T/s1.json" cpu_share.extract)" ">" 0 || fail "2: cpu_share.extract is not a number > 0"
flt "$(get "$T/s1.json" deadline.estimate_ms.extract)" ">" 0 ||
	fail "2: deadline.estimate_ms.extract is not a number > 0"

# 3. Queue bound by time, no deadlines.
step q none
J=$T/q.json
qok=$(get "$J" steps.0.ok)
qp95=$(get "$J" steps.0.latency_ms.p95)
snapshot leaf "$T/leaf.json" "$T/s2.json"
shed=$(($(get "$T/s2.json" deadline.queue_wait_shed) - shed0))
note "3. sent $(get "$J" steps.0.sent), ok $qok, overloaded $(get "$J" steps.0.overloaded)," \
	"p95 $qp95 ms; leaf queue_wait_shed +$shed"
assert_gt "$shed" 0 "3: leaf deadline.queue_wait_shed during the step"
assert_gt "$(get "$J" steps.0.overloaded)" 0 "3: driver OVERLOADED replies"
assert_eq "$(get "$J" steps.0.errors.deadline_exceeded)" 0 "3: deadline_exceeded without deadlines"
flt "$qok" ">=" "$(calc "0.5 * $C * $DURATION")" ||
	fail "3: OK replies $qok < 50% of capacity x $DURATION s"
flt "$qp95" "<=" "$((Q + D + 500))" || fail "3: p95 $qp95 ms > queue bound $Q + $D + 500 ms"
stop_server leaf
assert_eq "$leaf_rc" 0 "leaf exit status after SIGTERM"
stop_server mock

echo "capacity $(printf %.0f "$C")/s, offered $(printf %.0f "$QPS") qps: deadline $D ms:" \
	"$ok ok ($(calc "$ok / $DURATION")/s), $skipped skipped, p95 $(printf %.0f "$p95") ms;" \
	"queue bound $Q ms: $qok ok, $shed shed, p95 $(printf %.0f "$qp95") ms; $(elapsed) s"

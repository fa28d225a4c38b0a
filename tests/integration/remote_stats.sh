#!/bin/sh
# remote_stats.sh: a leaf and a mock started separately, read only over their ports.
#
# Starts frontload-mock (TLS) and frontload-leaf (plain TCP, fanning out to the mock) by
# hand, as another host would, then checks:
#   - a malformed STATS frame (a payload) gets an error reply (BAD_REQUEST) from the leaf
#     and from the mock, the next STATS on the same connection gets the snapshot, and
#     neither server dies;
#   - the leaf answers a STATS frame with the very snapshot its --stats-file then holds
#     (same snapshot_wall_ns);
#   - `frontload run --leaf --mock --qps 10 --duration 3` (nothing started by it) exits 0
#     and its result.json has the leaf's stats from the wire: source "wire", the final
#     window's stage CPU (extract cpu_ns > 0) and requests (ok about 10 x 3), the whole
#     run's, the leaf's config; the mock's end stats (its STATS count); and clocks with
#     both hosts checked (offset, uncertainty, verdict not "beyond", within_bound not
#     false: one host's clock against itself).
. "$(dirname "$0")/common.inc"

RUN=$B/frontload
PROBE=$B/tests/stats-probe
for f in "$RUN" "$B/frontload-driver" "$PROBE"; do
	[ -x "$f" ] || fail "$f not built"
done
QPS=10
DUR=3

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 16 \
	--latency-cap-us 2000 --stats-file "$T/mock.json" --quiet
# shellcheck disable=SC2154 # mock_port, leaf_port: set by start_server
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" \
	--mock "127.0.0.1:$mock_port" --ranker-threads 2 --io-threads 1 --fanout-threads 1 \
	--extractors-per-story 50 --stats-file "$T/leaf.json" --quiet

# 1. Malformed, then good, on one connection; both servers live on.
"$PROBE" --bad "127.0.0.1:$leaf_port" >"$T/probe-leaf" 2>&1 ||
	fail "stats-probe --bad (leaf): $(cat "$T/probe-leaf")"
grep -q '^bad: STATS refused (bad request): bad stats request' "$T/probe-leaf" ||
	fail "leaf's answer to a malformed STATS: $(cat "$T/probe-leaf")"
"$PROBE" --tls-dir "$T/tls" --bad "127.0.0.1:$mock_port" >"$T/probe-mock" 2>&1 ||
	fail "stats-probe --bad (mock): $(cat "$T/probe-mock")"
grep -q '^bad: STATS refused (bad request): bad stats request' "$T/probe-mock" ||
	fail "mock's answer to a malformed STATS: $(cat "$T/probe-mock")"
# shellcheck disable=SC2154 # leaf_pid, mock_pid: set by start_server
running "$leaf_pid" || fail "the leaf died on a malformed STATS"
running "$mock_pid" || fail "the mock died on a malformed STATS"
note "malformed STATS refused: $(sed -n 's/^bad: //p' "$T/probe-leaf" | head -n 1)"

# 2. The reply is the snapshot the stats file gets.
"$PROBE" "127.0.0.1:$leaf_port" >"$T/probe" 2>&1 || fail "stats-probe: $(cat "$T/probe")"
wire_ts=$(sed -n 's/^ok: .*snapshot_wall_ns \([0-9]*\),.*/\1/p' "$T/probe")
file_ts=$(get "$T/leaf.json" snapshot_wall_ns)
assert_eq "$file_ts" "$wire_ts" "leaf stats file's snapshot_wall_ns vs the STATS reply's"

# 3. frontload run against the two, reading their stats over the wire.
O=$T/run
t0=$(date +%s)
(cd "$T" && exec "$RUN" run --leaf "127.0.0.1:$leaf_port" --mock "127.0.0.1:$mock_port" \
	--tls-dir "$T/tls" --qps "$QPS" --duration "$DUR" --warmup-seconds 1 --out "$O") \
	>"$T/run.out" 2>"$T/run.log" &
rpid=$!
FL_PIDS="$FL_PIDS $rpid"
FL_SERVERS="$FL_SERVERS run"
wait_run "$rpid" "$t0" 60 "frontload run --leaf --mock"
[ "$rc" = 0 ] || fail "frontload run exit status $rc: $(tail -n 4 "$T/run.log")"
R=$O/result.json
I=instances.0
assert_eq "$(get "$R" $I.leaf_stats.source)" wire "leaf_stats.source"
[ "$(getd "$R" $I.leaf_stats.last_error none)" = none ] ||
	fail "leaf_stats.last_error: $(get "$R" $I.leaf_stats.last_error)"
cpu=$(get "$R" $I.leaf_stats.final_window.stages.extract.cpu_ns)
assert_gt "$cpu" 0 "final window extract cpu_ns from the wire"
ok=$(get "$R" $I.leaf_stats.final_window.requests.ok)
assert_ge "$ok" $((QPS * DUR * 7 / 10)) "final window requests.ok"
assert_le "$ok" $((QPS * DUR * 13 / 10)) "final window requests.ok"
whole=$(get "$R" $I.leaf_stats.whole_run.requests.ok)
assert_ge "$whole" "$ok" "whole-run requests.ok"
get "$R" $I.leaf_stats.leaf_config.extractors_per_story >/dev/null
get "$R" $I.leaf_stats.cpu_clock.method >/dev/null
mreq=$(get "$R" $I.mock_stats.end.stats_requests)
assert_ge "$mreq" 2 "mock stats_requests (the probe's two and the run's)"
assert_gt "$(get "$R" $I.mock_stats.end.requests)" 0 "mock requests served"
for k in 0 1; do
	h=clocks.hosts.$k
	role=$(get "$R" $h.role)
	verdict=$(get "$R" $h.verdict)
	[ "$verdict" = ok ] || [ "$verdict" = unsure ] ||
		fail "clock of the $role on this very host judged '$verdict'"
	assert_ge "$(get "$R" $h.samples)" 1 "$role clock samples"
	note "$role clock: offset $(get "$R" $h.offset_ms) ms +- $(get "$R" $h.uncertainty_ms)," \
		"$verdict"
done
[ "$(get "$R" clocks.within_bound)" != false ] || fail "clocks.within_bound false on one host"
grep -q "warning: the .* has a clock" "$T/run.log" && fail "clock warning on one host"
running "$leaf_pid" || fail "the leaf is gone after the run (it is not the run's to stop)"
echo "remote stats: final window extract $cpu ns, $ok ok requests; clocks within" \
	"$(get "$R" clocks.bound_ms) ms: $(get "$R" clocks.within_bound)"

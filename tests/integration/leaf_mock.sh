#!/bin/sh
# leaf_mock.sh: a plain and a TLS leaf fanning out to one mock; replies, fanout counts, TLS, zstd.
#
# 1. plain leaf: 300 sampled-size requests (depth 4, 2 connections): all OK, reply sizes
#    within feed_aggregator_resp_sizes (capped), fanout calls per reply as expected
# 2. plain leaf: 100 requests with --zstd, zstd request frames and the inbound method mix
# 3. TLS leaf: 100 requests over a TLS listener with a fixed reply size
# 4. determinism: the same seed sends the same request stream, another seed another
# 5. leaf stats: requests, extractor calls, fanout calls per method, zstd channels,
#    channels up, TLS cipher; mock stats: requests per method, zstd share
# 6. stage clock and counters in the leaf stats: cpu_clock names the method (the plain
#    leaf asks auto, the TLS leaf clock_gettime), stage CPU is sane (extract > 0, RANKER
#    stages within the RANKER pool's CPU); pmu: numbers where the host counts, else
#    supported false with a reason and every event and metric "unsupported: ..." (the TLS
#    leaf runs --pmu off); ready_ms (exec to listening) a time in (0, 60 s);
#    --cpu-clock perf-mmap where the fast path is missing, and bad
#    --cpu-clock/--pmu values, stop the leaf at startup
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

SCALE=0.01
MAX_REPLY=4194304
STORIES=16
PER_STORY=50

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 16 \
	--latency-cap-us 2000 --stats-file "$T/mock.json" --quiet
common="--lib $LIB --tls-dir $T/tls --mock 127.0.0.1:$mock_port --extractors-per-story $PER_STORY
	--ranker-threads 2 --io-threads 1 --fanout-threads 1 --rpc-fanout-scale $SCALE
	--max-reply-bytes $MAX_REPLY --max-frame-bytes 8388608 --quiet"
# shellcheck disable=SC2086
start_server leaf "$LEAF" --port 0 $common --rpc-channels 4 --rpc-zstd-fraction 0.5 \
	--stats-file "$T/leaf.json"
# shellcheck disable=SC2086
start_server leaft "$LEAF" --port 0 --tls $common --rpc-channels 3 --rpc-zstd-fraction 0.7 \
	--stats-file "$T/leaft.json" --cpu-clock clock_gettime --pmu off

"$CLIENT" --expect-fanout "$SCALE" >"$T/expect" || fail "leaf-client --expect-fanout failed"
per_req=$(sed -n 's/^total //p' "$T/expect")
assert_gt "$per_req" 0 "expected fanout calls per request at scale $SCALE"
# shellcheck disable=SC2046
set -- $("$CLIENT" --table-range resp)
[ $# = 2 ] || fail "leaf-client --table-range resp failed"
resp_min=$1 resp_max=$2
[ "$resp_max" -le "$MAX_REPLY" ] || resp_max=$MAX_REPLY

# 1. Sampled request and reply sizes.
note "1. 300 requests to the plain leaf"
client --port "$leaf_port" --requests 300 --depth 4 --connections 2 --seed 1 \
	--stories $STORIES --json "$T/c1.json" --timeout-s 50
c=$T/c1.json
assert_eq "$(get "$c" status.ok)" 300 "1: OK replies"
assert_eq "$(get "$c" errors.total)" 0 "1: client-side errors ($(get "$c" first_error))"
assert_ge "$(get "$c" reply_raw_bytes.min)" "$resp_min" "1: smallest reply"
assert_le "$(get "$c" reply_raw_bytes.max)" "$resp_max" "1: largest reply"
assert_gt "$(get "$c" reply_raw_bytes.max)" "$(get "$c" reply_raw_bytes.min)" \
	"1: reply sizes vary (largest vs smallest)"
assert_gt "$(get "$c" request_bytes.max)" 1000000 "1: sampled request sizes reach 1 MB"
assert_eq "$(get "$c" fanout_calls.min)" "$per_req" "1: fewest fanout calls in a reply"
assert_eq "$(get "$c" fanout_calls.max)" "$per_req" "1: most fanout calls in a reply"
assert_eq "$(get "$c" fanout_errors.sum)" 0 "1: fanout errors reported in replies"
assert_eq "$(get "$c" extract_calls.min)" $((STORIES * PER_STORY)) "1: extractor calls per reply"
assert_ge "$(get "$c" ranked.min)" 1 "1: ranked stories per reply"
assert_gt "$(get "$c" server_us_max)" 0 "1: server_ns in reply headers"
p95_1=$(get "$c" latency_us.p95)

# 2. Compressed replies and request frames, the inbound method mix.
note "2. 100 zstd requests, method mix"
client --port "$leaf_port" --requests 100 --depth 4 --connections 2 --seed 2 --zstd \
	--zstd-frames --method-mix --json "$T/c2.json" --timeout-s 40
c=$T/c2.json
assert_eq "$(get "$c" status.ok)" 100 "2: OK replies"
assert_eq "$(get "$c" errors.total)" 0 "2: client-side errors ($(get "$c" first_error))"
zr=$(get "$c" zstd_replies)
assert_gt "$zr" 0 "2: zstd replies"
assert_eq "$zr" "$(get "$c" zstd_expected)" "2: zstd replies (all but getStoriesUncompressed)"

# 3. The TLS listener.
note "3. 100 requests to the TLS leaf"
client --port "$leaft_port" --tls --tls-dir "$T/tls" --requests 100 --depth 4 \
	--connections 2 --seed 3 --reply-bytes 5000 --json "$T/c3.json" --timeout-s 40
c=$T/c3.json
assert_eq "$(get "$c" status.ok)" 100 "3: OK replies over TLS"
assert_eq "$(get "$c" errors.total)" 0 "3: client-side errors ($(get "$c" first_error))"
assert_eq "$(get "$c" reply_raw_bytes.min)" 5000 "3: reply size asked for (smallest)"
assert_eq "$(get "$c" reply_raw_bytes.max)" 5000 "3: reply size asked for (largest)"
cipher=$(get "$c" cipher)
case $cipher in *TLS*) ;; *) fail "3: client negotiated no TLS cipher: '$cipher'" ;; esac

# 4. Determinism of the request stream.
note "4. request stream determinism"
client --port "$leaf_port" --requests 10 --seed 7 --method-mix --depth 1 --json "$T/da.json"
client --port "$leaf_port" --requests 10 --seed 7 --method-mix --depth 4 --connections 2 \
	--json "$T/db.json"
client --port "$leaf_port" --requests 10 --seed 8 --method-mix --json "$T/dc.json"
ha=$(get "$T/da.json" stream_hash) hb=$(get "$T/db.json" stream_hash) hc=$(get "$T/dc.json" stream_hash)
assert_eq "$ha" "$hb" "4: seed 7 twice (depth 1, then depth 4 on 2 connections), stream hash"
[ "$ha" != "$hc" ] || fail "4: seeds 7 and 8 sent the same request stream ($ha)"
n_plain=430
n_tls=100

# 5. Server stats.
note "5. server stats"
snapshot leaf "$T/leaf.json" "$T/leaf.snap"
assert_eq "$(get "$T/leaf.snap" fanout.channels)" 4 "5: plain leaf channels"
assert_eq "$(get "$T/leaf.snap" fanout.channels_up)" 4 "5: plain leaf channels up"
stop_server leaf
assert_eq "$leaf_rc" 0 "5: plain leaf exit status after SIGTERM"
stop_server leaft
assert_eq "$leaft_rc" 0 "5: TLS leaf exit status after SIGTERM"
L=$T/leaf.json
LT=$T/leaft.json
for f in "$L" "$LT"; do
	[ "$f" = "$L" ] && n=$n_plain || n=$n_tls
	w=$(basename "$f" .json)
	assert_eq "$(get "$f" requests.received)" "$n" "5: $w requests received"
	assert_eq "$(get "$f" requests.ok)" "$n" "5: $w requests OK"
	assert_eq "$(get "$f" extract_calls)" $((n * STORIES * PER_STORY)) "5: $w extractor calls"
	assert_eq "$(get "$f" fanout.calls)" $((n * per_req)) "5: $w fanout calls"
	assert_eq "$(get "$f" fanout.ok)" $((n * per_req)) "5: $w fanout calls OK"
	assert_eq "$(get "$f" fanout.errors)" 0 "5: $w fanout errors"
	assert_eq "$(get "$f" fanout.expected_per_request.calls)" "$per_req" \
		"5: $w expected calls per request (leaf vs fl_rpc_calls)"
	if [ "$f" = "$L" ]; then
		# Requests per inbound method: the leaf's counts against what the client sent.
		get "$f" overheads.per_method >"$T/per_method"
		while read -r m k; do
			sent=0
			for j in c1 c2 da db dc; do
				sent=$((sent + $(getd "$T/$j.json" "methods.$m" 0)))
			done
			assert_eq "$k" "$sent" "5: $w requests of $m (leaf count vs sent)"
		done <"$T/per_method"
	fi
	fc=$(get "$f" fanout.cipher)
	case $fc in *TLS*) ;; *) fail "5: $w fanout channels negotiated no TLS: '$fc'" ;; esac
	while read -r m k; do
		[ "$m" = total ] && continue
		assert_eq "$(getd "$f" "fanout.calls_per_method.$m" 0)" $((n * k)) \
			"5: $w fanout calls of $m ($k per request)"
	done <"$T/expect"
done
zs_plain=$(awk 'BEGIN { print int(0.5 * 4 + 0.5) }')
zs_tls=$(awk 'BEGIN { print int(0.7 * 3 + 0.5) }')
assert_eq "$(get "$L" fanout.channels_zstd)" "$zs_plain" "5: plain leaf zstd channels (0.5 of 4)"
assert_eq "$(get "$LT" fanout.channels_zstd)" "$zs_tls" "5: TLS leaf zstd channels (0.7 of 3)"
lc=$(get "$LT" connections.listener_cipher)
case $lc in *TLS*) ;; *) fail "5: TLS leaf listener cipher: '$lc'" ;; esac
assert_ge "$(get "$LT" connections.tls_handshakes)" 2 "5: TLS leaf handshakes"

stop_server mock
assert_eq "$mock_rc" 0 "5: mock exit status after SIGTERM"
M=$T/mock.json
total_calls=$(((n_plain + n_tls) * per_req))
mreq=$(get "$M" requests)
assert_eq "$mreq" "$total_calls" "5: mock OK requests (all fanout calls of both leaves)"
while read -r m k; do
	[ "$m" = total ] && continue
	assert_eq "$(getd "$M" "requests_by_method.$m" 0)" $(((n_plain + n_tls) * k)) \
		"5: mock requests of $m"
done <"$T/expect"
mz=$(get "$M" zstd_requests)
assert_gt "$mz" 0 "5: mock zstd requests"
assert_gt "$mreq" "$mz" "5: mock requests (not all zstd)"
assert_eq "$(get "$M" bad_frames)" 0 "5: mock bad frames"
assert_eq "$(get "$M" bad_payloads)" 0 "5: mock bad payloads"

# 6. Stage clock and PMU counters.
note "6. cpu_clock and pmu in the leaf stats"
RANKER_STAGES="decode overheads extract stories rank compress reply"
PMU_KEYS="instructions cycles l1i_misses itlb_misses branches branch_misses
	stalled_cycles_frontend ipc l1i_mpki itlb_mpki branch_mpki branch_miss_pct
	frontend_stall_cycle_ratio mux_scale"
for f in "$L" "$LT"; do
	w=$(basename "$f" .json)
	method=$(get "$f" cpu_clock.method)
	nclk=$(($(get "$f" cpu_clock.threads.perf-mmap) + $(get "$f" cpu_clock.threads.clock_gettime)))
	assert_eq "$nclk" 2 "6: $w RANKER threads with a stage clock"
	assert_gt "$(get "$f" stages.extract.cpu_ns)" 0 "6: $w extract CPU"
	# Every RANKER stage is read on the RANKER threads' own clocks: their sum cannot
	# exceed those threads' CPU (read with clock_gettime; 1 ms slack per thread for the
	# perf page's alignment).
	sum=0
	for st in $RANKER_STAGES; do
		sum=$((sum + $(get "$f" "stages.$st.cpu_ns")))
	done
	assert_le "$sum" $(($(get "$f" pools.ranker.cpu_ns) + 2000000)) \
		"6: $w RANKER stage CPU vs RANKER pool CPU"
	if [ "$(get "$f" pmu.supported)" = true ]; then
		assert_gt "$(get "$f" pmu.ranker.instructions)" 0 "6: $w RANKER instructions"
		assert_eq "$(get "$f" pmu.total.threads_counted)" 4 "6: $w threads counted"
		continue
	fi
	why=$(get "$f" pmu.why)
	[ -n "$why" ] || fail "6: $w pmu.supported is false without a reason"
	for pool in ranker io fanout total; do
		get "$f" "pmu.$pool" >"$T/pmu.$pool"
		for k in $PMU_KEYS; do
			v=$(sed -n "s/^$k //p" "$T/pmu.$pool")
			case $v in
			"unsupported: "?*) ;;
			*) fail "6: $w pmu.$pool.$k is '$v', want \"unsupported: <why>\"" ;;
			esac
		done
	done
	note "$w: stage clock $method, pmu unsupported: $why"
done
# ready_ms: measured from exec, so more than 0 and, here, well under a minute.
for f in "$L" "$LT"; do
	r=$(get "$f" ready_ms)
	flt "$r" ">" 0 && flt "$r" "<" 60000 || fail "6: ready_ms '$r' is not a time in (0, 60000) ms"
done
assert_eq "$(get "$L" cpu_clock.requested)" auto "6: plain leaf clock asked"
assert_eq "$(get "$LT" cpu_clock.requested)" clock_gettime "6: TLS leaf clock asked"
assert_eq "$(get "$LT" cpu_clock.method)" clock_gettime "6: TLS leaf clock in use"
assert_eq "$(get "$LT" pmu.enabled)" false "6: TLS leaf --pmu off"
assert_eq "$(get "$LT" pmu.supported)" false "6: TLS leaf --pmu off, supported"
assert_eq "$(get "$LT" pmu.why)" "disabled (--pmu off)" "6: TLS leaf --pmu off, why"
if [ "$(get "$L" cpu_clock.method)" = clock_gettime ]; then
	# auto fell back: perf-mmap is refused at startup, naming the reason.
	fast_why=$(get "$L" cpu_clock.fast_path_unavailable)
	[ -n "$fast_why" ] || fail "6: auto fell back to clock_gettime without a reason"
	rc=0
	"$LEAF" --mock none --lib "$LIB" --port 0 --cpu-clock perf-mmap --quiet \
		>"$T/pm.out" 2>&1 || rc=$?
	assert_eq "$rc" 1 "6: exit status of a leaf asking --cpu-clock perf-mmap here"
	# The reason as the stats give it, up to its first figure (a self-check's gap varies).
	if ! grep -qF -- "--cpu-clock perf-mmap: " "$T/pm.out" ||
		! grep -qF -- "${fast_why%%[0-9]*}" "$T/pm.out"; then
		fail "6: perf-mmap refusal does not say why ($fast_why): $(cat "$T/pm.out")"
	fi
else
	assert_eq "$(get "$L" cpu_clock.method)" perf-mmap "6: plain leaf clock in use"
	assert_eq "$(get "$L" cpu_clock.fast_path_unavailable)" null "6: no fallback reason"
fi
for bad in "--cpu-clock fast" "--pmu maybe"; do
	rc=0
	# shellcheck disable=SC2086
	"$LEAF" --mock none --lib "$LIB" --port 0 $bad --quiet >"$T/bad.out" 2>&1 || rc=$?
	assert_eq "$rc" 2 "6: exit status with $bad"
done

echo "$((n_plain + n_tls)) requests ok, $total_calls fanout calls, $fc," \
	"zstd channels $zs_plain/4 and $zs_tls/3, mock zstd $mz/$mreq, p95 ${p95_1} us," \
	"stage clock $(get "$L" cpu_clock.method), pmu supported $(get "$L" pmu.supported), $(elapsed) s"

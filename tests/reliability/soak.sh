#!/bin/sh
# soak.sh: mock + leaf + driver at a fixed ~70% of capacity for a long time; watch drift.
#
# Not run by `ninja test`. Usage:
#   FL_BUILDDIR=/path/to/build [SOAK_SECONDS=600] [SOAK_QPS=R] [SOAK_OUT=DIR] \
#       sh tests/reliability/soak.sh
# Knobs (environment):
#   SOAK_SECONDS  measured seconds at the fixed rate [600]
#   SOAK_QPS      the rate; default 70% of the capacity measured first (closed loop: 300
#                 requests over 2 connections of depth 8, capacity = 300 / wall time)
#   SOAK_OUT      directory kept afterwards [$FL_BUILDDIR/soak-<UTC time>]: samples.csv,
#                 driver.json, trace.csv (the driver's per second), leaf.json, mock.json,
#                 the logs and summary.txt
#   SOAK_SIZE_CAP bytes; caps the sampled sizes [1048576]: driver --max-request-bytes,
#                 leaf --max-reply-bytes (and --max-frame-bytes 2 x it, which also caps
#                 the sampled outbound bodies and the mock's replies), mock
#                 --max-reply-bytes. 0: no caps, the programs' defaults (requests to 4 MiB,
#                 replies to 16 MiB, outbound bodies to 32 MiB).
#   SOAK_LEAF_ARGS, SOAK_MOCK_ARGS, SOAK_DRIVER_ARGS  extra flags (they come last)
# Why the cap: the servers keep grow-only scratch buffers (per RANKER worker, FANOUT
# thread and mock IO thread) and glibc keeps freed heap, so RSS climbs in steps each time
# a larger message than any before comes by, up to what the largest sizes need (several
# hundred MiB with no caps). With the tables' full tails those records keep coming for
# many minutes (seen: leaf +156 MiB, mock +83 MiB in 3 min, in steps, flat between), and
# first-vs-last drift says more about the size tail than about leaks. At 1 MiB the high
# water is reached in the first minute, and drift after it is what a leak would add.
# Every second, RSS (VmRSS, kB) and open fd counts of the leaf, the mock and the driver go
# to samples.csv (second,leaf_rss_kb,leaf_fds,mock_rss_kb,mock_fds,driver_rss_kb,
# driver_fds). At the end, drift = average over the last window - average over the first
# (window: 60 s, or a fifth of SOAK_SECONDS when shorter than 300 s), per process.
# Verdict PASS when all of:
#   - every process ran to the end; the leaf and mock exit 0 on SIGTERM;
#   - the driver: no timeouts, no errors, no OVERLOADED, OK >= 99% of sent;
#   - RSS drift of each process <= max(16 MiB, 10% of its first-window average);
#   - fd drift of each process <= 2 (a leaked socket per connection or per request
#     would be far more over a soak).
# The p95 is reported, with a warning (not a failure) above 700 ms, the SLA of `frontload
# run`: on a shared 2-core machine the capacity measured first moves with everything else
# running, and the soak is about drift, not latency. But a backlog holds memory (the
# leaf's requests in flight, the driver's queue): when the driver's per-second trace shows
# a p95 above 700 ms inside the first or the last window, an RSS drift over its limit is
# reported as INCONCLUSIVE (exit 2) rather than FAIL; fd drift and errors still fail.
# The last line printed is the verdict with the figures. Exit 0 on PASS, 1 on FAIL, 2 on
# INCONCLUSIVE.
# shellcheck disable=SC2154 # NAME_port, NAME_pid, NAME_rc: set by start_server, stop_server
set -u
: "${FL_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
export FL_SRCDIR
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
SOAK_SECONDS=${SOAK_SECONDS:-600}
export FL_WATCHDOG_S=$((SOAK_SECONDS + 600))
. "$FL_SRCDIR/tests/integration/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"
case $SOAK_SECONDS in '' | *[!0-9]*) fail "SOAK_SECONDS must be whole seconds" ;; esac
[ "$SOAK_SECONDS" -ge 30 ] || fail "SOAK_SECONDS must be >= 30"
OUT=${SOAK_OUT:-$B/soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" || fail "cannot make $OUT"
WIN=60
[ "$SOAK_SECONDS" -lt 300 ] && WIN=$((SOAK_SECONDS / 5))

rss_kb() {
	v=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	echo "${v:-}"
}
nfds() {
	ls "/proc/$1/fd" 2>/dev/null | wc -l
}
calc() {
	awk "BEGIN { printf \"%.1f\", $* }"
}

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
CAP=${SOAK_SIZE_CAP:-1048576}
case $CAP in '' | *[!0-9]*) fail "SOAK_SIZE_CAP must be bytes" ;; esac
cap_mock="" cap_leaf="" cap_driver=""
if [ "$CAP" -gt 0 ]; then
	cap_mock="--max-reply-bytes $CAP"
	cap_leaf="--max-reply-bytes $CAP --max-frame-bytes $((2 * CAP))"
	cap_driver="--max-request-bytes $CAP"
fi
# shellcheck disable=SC2086
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --stats-file "$OUT/mock.json" \
	$cap_mock ${SOAK_MOCK_ARGS:-}
# shellcheck disable=SC2086
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--seed 1 --stats-file "$OUT/leaf.json" $cap_leaf ${SOAK_LEAF_ARGS:-}

if [ -z "${SOAK_QPS:-}" ]; then
	# shellcheck disable=SC2086
	client --port "$leaf_port" --requests 40 --depth 4 --json "$T/warm.json" --timeout-s 120 \
		${cap_driver:+--max-request-bytes $CAP}
	# shellcheck disable=SC2086
	client --port "$leaf_port" --requests 300 --depth 8 --connections 2 --seed 2 \
		--json "$T/cap.json" --timeout-s 300 ${cap_driver:+--max-request-bytes $CAP}
	cap=$(calc "300 / $(get "$T/cap.json" wall_s)")
	SOAK_QPS=$(calc "0.7 * $cap")
	note "capacity $cap req/s (closed loop); soak at 70%: $SOAK_QPS qps"
else
	cap="(not measured)"
fi

note "soak: $SOAK_QPS qps for $SOAK_SECONDS s (5 s warm-up); samples in $OUT/samples.csv"
# shellcheck disable=SC2086
"$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps "$SOAK_QPS" --warmup 5 --duration "$SOAK_SECONDS" \
	--timeout-s 10 --json "$OUT/driver.json" --trace-csv "$OUT/trace.csv" $cap_driver \
	${SOAK_DRIVER_ARGS:-} >"$OUT/driver.out" 2>"$OUT/driver.log" &
driver_pid=$!
FL_PIDS="$FL_PIDS $driver_pid"
FL_SERVERS="$FL_SERVERS driver"

echo "second,leaf_rss_kb,leaf_fds,mock_rss_kb,mock_fds,driver_rss_kb,driver_fds" >"$OUT/samples.csv"
t0=$(date +%s)
s=0
died=""
while running "$driver_pid"; do
	now=$(($(date +%s) - t0))
	if [ "$now" -ge "$s" ]; then
		for p in "$leaf_pid" "$mock_pid"; do running "$p" || died="$died $p"; done
		[ -z "$died" ] || break
		echo "$now,$(rss_kb "$leaf_pid"),$(nfds "$leaf_pid"),$(rss_kb "$mock_pid"),$(nfds "$mock_pid"),$(rss_kb "$driver_pid"),$(nfds "$driver_pid")" >>"$OUT/samples.csv"
		s=$((now + 1))
		[ $((now % 60)) = 0 ] && [ "$now" -gt 0 ] &&
			note "$now s: leaf RSS $(rss_kb "$leaf_pid") kB, $(nfds "$leaf_pid") fds"
	fi
	[ "$now" -le $((SOAK_SECONDS + 120)) ] || fail "driver still running after $now s"
	sleep 0.2
done
[ -z "$died" ] || fail "server(s) died during the soak: pid$died"
wait "$driver_pid"
drc=$?
forget "$driver_pid"
stop_server leaf
stop_server mock
cp "$T"/*.log "$OUT/" 2>/dev/null

verdict=PASS
why=""
bad() {
	verdict=FAIL
	why="$why; $*"
}
rss_over=""
# Seconds of the first and last windows where the driver's p95 passed 700 ms (backlog).
backlog=$(awk -F, -v win="$WIN" -v dur="$SOAK_SECONDS" 'NR > 1 && $5 > 700 &&
	($1 < win || $1 >= dur - win) { n++ } END { print n + 0 }' "$OUT/trace.csv" 2>/dev/null)
[ "$drc" = 0 ] || bad "driver exit status $drc"
[ "$leaf_rc" = 0 ] || bad "leaf exit status $leaf_rc"
[ "$mock_rc" = 0 ] || bad "mock exit status $mock_rc"

J=$OUT/driver.json
st=steps.0
sent=$(getd "$J" $st.sent 0)
ok=$(getd "$J" $st.ok 0)
p95=$(getd "$J" $st.latency_ms.p95 -1)
tmo=$(getd "$J" $st.timeouts -1)
ovl=$(getd "$J" $st.overloaded -1)
errs=$(getd "$J" $st.errors.total -1)
[ "$tmo" = 0 ] || bad "driver timeouts $tmo"
[ "$errs" = 0 ] || bad "driver errors $errs"
[ "$ovl" = 0 ] || bad "OVERLOADED replies $ovl"
[ "$sent" -gt 0 ] && [ $((ok * 100)) -ge $((sent * 99)) ] || bad "OK $ok of $sent sent"
warn=""
awk -v p="$p95" 'BEGIN { exit !(p >= 0 && p <= 700) }' || warn=" (warning: p95 $p95 ms > 700 ms)"

# Drift per column: last window's average - first window's.
awk -F, -v win="$WIN" -v dur="$SOAK_SECONDS" '
NR == 1 { for (i = 2; i <= NF; i++) name[i] = $i; n = NF; next }
{
	t = $1 - 5   # the measured window starts after the 5 s warm-up
	if (t >= 0 && t < win) for (i = 2; i <= n; i++) { a[i] += $i; na[i]++ }
	if (t >= dur - win && t < dur) for (i = 2; i <= n; i++) { z[i] += $i; nz[i]++ }
}
END {
	for (i = 2; i <= n; i++) {
		f = na[i] ? a[i] / na[i] : 0; l = nz[i] ? z[i] / nz[i] : 0
		printf "%s %.1f %.1f %.1f\n", name[i], f, l, l - f
	}
}' "$OUT/samples.csv" >"$T/drift"
summary=""
while read -r col first last d; do
	case $col in
	*_rss_kb)
		lim=$(awk -v f="$first" 'BEGIN { l = 0.10 * f; printf "%d", (l > 16384 ? l : 16384) }')
		awk -v d="$d" -v l="$lim" 'BEGIN { exit !(d <= l) }' ||
			rss_over="$rss_over; $col drift $d kB > $lim kB"
		summary="$summary ${col%_rss_kb} RSS $(calc "$first / 1024") -> $(calc "$last / 1024") MiB ($(calc "$d / 1024"));"
		;;
	*_fds)
		awk -v d="$d" 'BEGIN { exit !(d <= 2 && d >= -2) }' || bad "$col drift $d"
		summary="$summary fds $first -> $last;"
		;;
	esac
done <"$T/drift"

if [ -n "$rss_over" ]; then
	if [ "${backlog:-0}" -gt 0 ] && [ "$verdict" = PASS ]; then
		verdict=INCONCLUSIVE
		why="$why$rss_over (the driver's p95 passed 700 ms in $backlog s of the drift windows:"
		why="$why a backlog, not comparable)"
	else
		verdict=FAIL
		why="$why$rss_over"
	fi
fi
{
	echo "soak $(date -u +%Y-%m-%dT%H:%M:%SZ): $SOAK_SECONDS s at $SOAK_QPS qps (capacity $cap)," \
		"size cap $CAP"
	echo "driver: sent $sent, ok $ok, overloaded $ovl, timeouts $tmo, errors $errs, p95 $p95 ms"
	echo "drift (avg of the last $WIN s - first $WIN s):"
	sed 's/^/  /' "$T/drift"
	echo "verdict: $verdict${why}$warn"
} | tee "$OUT/summary.txt" >&2

echo "soak $verdict: $SOAK_SECONDS s at $SOAK_QPS qps, $ok/$sent ok, p95 $(calc "$p95") ms;$summary" \
	"out $OUT${why}$warn"
case $verdict in PASS) exit 0 ;; INCONCLUSIVE) exit 2 ;; *) exit 1 ;; esac

#!/bin/sh
# soak.sh: mock + leaf + driver (the inbound method mix) at a fixed rate for a long time;
# RSS, open fds and threads of the leaf and the mock must level off.
#
# Not run by `ninja test` (tests/integration/soak_short.sh runs a one-minute version).
# Usage:
#   FL_BUILDDIR=/path/to/build [SOAK_SECONDS=600] [SOAK_QPS=30] sh tests/reliability/soak.sh
# Knobs (environment):
#   SOAK_SECONDS   measured seconds at the fixed rate, after the warm-up [600]
#   SOAK_WARMUP    seconds at the rate before measuring [60]; samples taken then are kept
#                  in samples.csv but not judged
#   SOAK_QPS       the rate (requests/s, Poisson arrivals) [30]
#   SOAK_SESSIONS  distinct session ids the driver uses [1000]
#   SOAK_EVERY     sampling period (s) [5]
#   SOAK_DRIFT_PCT the RSS drift limit (%) [5]
#   SOAK_JUDGE     half: RSS drift over the second half of the measured window [half];
#                  all: over the whole window after the warm-up;
#                  floor: the second half's lowest RSS against the first half's (the
#                  short run's check: 40 s is too short for a slope, see below)
#   SOAK_STATS_S   the servers' --stats-interval-s [60]
#   SOAK_OUT       directory kept afterwards [$FL_BUILDDIR/soak-<UTC time>]: samples.csv,
#                  driver.json, leaf.json and mock.json (their stats at exit, with the
#                  memory block by owner), stats/{leaf,mock}-SECOND.json (the stats files
#                  as they were each minute), the logs and summary.txt
#   SOAK_LEAF_ARGS, SOAK_MOCK_ARGS, SOAK_DRIVER_ARGS  extra flags (they come last)
# Sizes are the programs' defaults (sampled from the production tables: requests to 4 MiB,
# replies to 16 MiB, outbound bodies to 32 MiB), as a user's fixed-rate run has them.
# Every SOAK_EVERY s, VmRSS (kB), open fds and threads of the leaf and the mock go to
# samples.csv (second,leaf_rss_kb,leaf_fds,leaf_threads,mock_rss_kb,mock_fds,
# mock_threads; second counts from the driver's start, warm-up included).
# Verdict PASS when all of:
#   - both servers ran to the end and exit 0 on SIGTERM; the driver exits 0;
#   - the driver counted no errors (errors.total, every kind), and OK >= 99% of sent
#     (timeouts and OVERLOADED are counted and printed, and count against that 99%);
#   - RSS drift over the second half of the measured window, for the leaf and the mock,
#     is below SOAK_DRIFT_PCT: the least-squares slope of RSS over those samples times
#     the half's length, as a share of their mean (a step or a steady climb shows; the
#     swing of what is in flight averages out over minutes, not over seconds);
#     SOAK_JUDGE=floor: the lowest RSS of the second half minus the lowest of the first,
#     as a share of the mean over both. What is in flight (requests to 4 MiB, replies to
#     16 MiB, kept about 10 s after free by jemalloc) sets the highs, tens of MiB apart
#     from one second to the next; a leak or a step raises the lows. Over 40 s at 8 qps
#     the slope read -3.6% to 8.8% in five runs of one build, the lows' rise -4.7% to
#     4.6% in nine (tests/reliability/README.md);
#   - fds and threads do not grow: their highest value in the second half is at most
#     their highest in the first half (both after the warm-up).
# The last line printed is the verdict with the figures. Exit 0 on PASS, 1 on FAIL.
# shellcheck disable=SC2154 # NAME_port, NAME_pid, NAME_rc: set by start_server, stop_server
set -u
: "${FL_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
export FL_SRCDIR
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
SOAK_SECONDS=${SOAK_SECONDS:-600}
WARM=${SOAK_WARMUP:-60}
QPS=${SOAK_QPS:-30}
EVERY=${SOAK_EVERY:-5}
LIMIT=${SOAK_DRIFT_PCT:-5}
JUDGE=${SOAK_JUDGE:-half}
case $JUDGE in half | all | floor) ;; *) echo "FAIL: SOAK_JUDGE must be half, all or floor" >&2; exit 1 ;; esac
SESSIONS=${SOAK_SESSIONS:-1000}
for v in "$SOAK_SECONDS" "$WARM" "$EVERY" "$SESSIONS"; do
	case $v in '' | *[!0-9]*) echo "FAIL: SOAK_SECONDS, SOAK_WARMUP, SOAK_EVERY and" \
		"SOAK_SESSIONS must be whole numbers" >&2; exit 1 ;; esac
done
export FL_WATCHDOG_S=$((WARM + SOAK_SECONDS + 300))
. "$FL_SRCDIR/tests/integration/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"
[ "$SOAK_SECONDS" -ge 20 ] || fail "SOAK_SECONDS must be >= 20"
[ "$EVERY" -ge 1 ] || fail "SOAK_EVERY must be >= 1"
OUT=${SOAK_OUT:-$B/soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT/stats" || fail "cannot make $OUT/stats"
STATS_S=${SOAK_STATS_S:-60}

# /proc/PID/status field NAME (VmRSS in kB, Threads), empty when the process is gone.
status_field() {
	sed -n "s/^$2:[[:space:]]*\\([0-9][0-9]*\\).*/\\1/p" "/proc/$1/status" 2>/dev/null
}
nfds() {
	ls "/proc/$1/fd" 2>/dev/null | wc -l
}
sample_of() {
	echo "$(status_field "$1" VmRSS),$(nfds "$1"),$(status_field "$1" Threads)"
}

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
# shellcheck disable=SC2086
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --stats-file "$OUT/mock.json" \
	--stats-interval-s "$STATS_S" ${SOAK_MOCK_ARGS:-}
# shellcheck disable=SC2086
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--seed 1 --stats-file "$OUT/leaf.json" --stats-interval-s "$STATS_S" ${SOAK_LEAF_ARGS:-}

note "soak: $QPS qps, method mix, $SESSIONS sessions, ${WARM} s warm-up + $SOAK_SECONDS s;" \
	"samples every $EVERY s in $OUT/samples.csv"
# shellcheck disable=SC2086
"$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps "$QPS" --method mix --sessions "$SESSIONS" \
	--warmup "$WARM" --duration "$SOAK_SECONDS" --timeout-s 10 --json "$OUT/driver.json" \
	--trace-csv "$OUT/trace.csv" ${SOAK_DRIVER_ARGS:-} >"$OUT/driver.out" 2>"$OUT/driver.log" &
driver_pid=$!
FL_PIDS="$FL_PIDS $driver_pid"
FL_SERVERS="$FL_SERVERS driver"

echo "second,leaf_rss_kb,leaf_fds,leaf_threads,mock_rss_kb,mock_fds,mock_threads" >"$OUT/samples.csv"
t0=$(date +%s)
s=0
died=""
while running "$driver_pid"; do
	now=$(($(date +%s) - t0))
	if [ "$now" -ge "$s" ]; then
		for p in "$leaf_pid" "$mock_pid"; do running "$p" || died="$died $p"; done
		[ -z "$died" ] || break
		echo "$now,$(sample_of "$leaf_pid"),$(sample_of "$mock_pid")" >>"$OUT/samples.csv"
		s=$((now + EVERY))
		if [ $((now % 60)) -lt "$EVERY" ] && [ "$now" -gt 0 ]; then
			note "$now s: leaf RSS $(status_field "$leaf_pid" VmRSS) kB, mock $(status_field "$mock_pid" VmRSS) kB"
			cp "$OUT/leaf.json" "$OUT/stats/leaf-$now.json" 2>/dev/null
			cp "$OUT/mock.json" "$OUT/stats/mock-$now.json" 2>/dev/null
		fi
	fi
	[ "$now" -le $((WARM + SOAK_SECONDS + 120)) ] || fail "driver still running after $now s"
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
[ "$drc" = 0 ] || bad "driver exit status $drc"
[ "$leaf_rc" = 0 ] || bad "leaf exit status $leaf_rc"
[ "$mock_rc" = 0 ] || bad "mock exit status $mock_rc"
J=$OUT/driver.json
st=steps.0
sent=$(getd "$J" $st.sent 0)
ok=$(getd "$J" $st.ok 0)
p95=$(getd "$J" $st.latency_ms.p95 null)
case $p95 in null) ;; *) p95=$(awk -v p="$p95" 'BEGIN { printf "%.1f", p }') ;; esac
tmo=$(getd "$J" $st.timeouts -1)
ovl=$(getd "$J" $st.overloaded -1)
errs=$(getd "$J" $st.errors.total -1)
[ "$errs" = 0 ] || bad "driver errors $errs"
[ "$sent" -gt 0 ] && [ $((ok * 100)) -ge $((sent * 99)) ] || bad "OK $ok of $sent sent"

# Per column over the measured window's halves: RSS drift (slope x half length / mean
# in the second half, slope x window / mean over all, or the lows' rise / mean); fds and
# threads, the highest of each half.
awk -F, -v warm="$WARM" -v dur="$SOAK_SECONDS" -v judge="$JUDGE" '
NR == 1 { for (i = 2; i <= NF; i++) name[i] = $i; n = NF; next }
$1 >= warm && $1 <= warm + dur {
	h = ($1 >= warm + dur / 2) ? 2 : 1
	for (i = 2; i <= n; i++) if ($i != "") {
		if (!((i, h) in mx) || $i > mx[i, h]) mx[i, h] = $i
		if (!((i, h) in mn) || $i < mn[i, h]) mn[i, h] = $i
		if (h == 2 || judge != "half") { c[i]++; sx[i] += $1; sy[i] += $i; sxx[i] += $1 * $1; sxy[i] += $1 * $i }
		if (!(i in first)) first[i] = $i
		last[i] = $i
	}
}
END {
	for (i = 2; i <= n; i++) {
		d = "nan"; m = 0
		if (c[i] >= 2) {
			m = sy[i] / c[i]; den = c[i] * sxx[i] - sx[i] * sx[i]
			slope = den > 0 ? (c[i] * sxy[i] - sx[i] * sy[i]) / den : 0
			d = m > 0 ? sprintf("%.2f", 100 * slope * (judge == "all" ? dur : dur / 2) / m) : "nan"
			if (judge == "floor")
				d = m > 0 && ((i, 1) in mn) && ((i, 2) in mn) ? sprintf("%.2f", 100 * (mn[i, 2] - mn[i, 1]) / m) : "nan"
		}
		printf "%s %s %s %s %s %.0f %s %s %s\n", name[i], first[i], last[i], mx[i, 1], mx[i, 2], m, d, mn[i, 1], mn[i, 2]
	}
}' "$OUT/samples.csv" >"$T/judge"
summary=""
while read -r col first last max1 max2 mean2 drift min1 min2; do
	proc=${col%%_*}
	case $col in
	*_rss_kb)
		if [ "$drift" = nan ]; then
			bad "$proc RSS: too few samples to judge ($JUDGE)"
		else
			awk -v d="$drift" -v l="$LIMIT" 'BEGIN { exit !(d < l) }' ||
				bad "$proc RSS drift $drift% >= $LIMIT% ($JUDGE)"
		fi
		lows=""
		[ "$JUDGE" != floor ] || lows="lows $((min1 / 1024)) -> $((min2 / 1024)) MiB, "
		summary="$summary $proc RSS $((first / 1024)) -> $((last / 1024)) MiB (judged $JUDGE: ${lows}mean $((mean2 / 1024)) MiB, drift $drift%);"
		;;
	*)
		[ "${max2:-0}" -le "${max1:-0}" ] || bad "$col grew: highest $max1 in the first half, $max2 in the second"
		summary="$summary ${col#*_} $max1/$max2;"
		;;
	esac
done <"$T/judge"
{
	echo "soak $(date -u +%Y-%m-%dT%H:%M:%SZ): $QPS qps, method mix, $SESSIONS sessions," \
		"$WARM s warm-up + $SOAK_SECONDS s, samples every $EVERY s"
	echo "driver: sent $sent, ok $ok, overloaded $ovl, timeouts $tmo, errors $errs, p95 $p95 ms"
	echo "per column after warm-up: first last max(first half) max(second half)" \
		"mean drift% (over $JUDGE) min(first half) min(second half)"
	sed 's/^/  /' "$T/judge"
	echo "verdict: $verdict$why"
} | tee "$OUT/summary.txt" >&2
echo "soak $verdict: $SOAK_SECONDS s at $QPS qps, $ok/$sent ok, $errs errors, $tmo timeouts," \
	"p95 $p95 ms;$summary out $OUT$why"
[ "$verdict" = PASS ]

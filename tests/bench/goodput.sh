#!/bin/sh
# goodput.sh: does the leaf keep its goodput (OK replies/s) when offered more than it can
# serve? Prints capacity, then goodput at 1x, 1.5x and 3x of it and the ratio to 1x.
#
# Usage: tests/bench/goodput.sh BUILD_DIR [WINDOW_S] [DEADLINE] [CONNSxDEPTH]
#   BUILD_DIR  a built tree (frontload-leaf, frontload-mock, frontload-driver,
#              tests/leaf-client, libfrontload-extract.so)
#   WINDOW_S   measured seconds per rate (default 20; 2 s of warm-up before each)
#   DEADLINE   the driver's --deadline-ms (default "timeout" = --timeout-s, the driver's
#              default; "none" shows the service without deadlines)
#   CONNSxDEPTH  the driver's --connections and --depth (default: the driver's own, 4
#              connections, --depth auto: each step's in-flight ceiling is rate x the
#              deadline, so the driver never holds back a request that could still be
#              answered in time; a fixed ceiling such as 4x16 = 64 binds before the leaf's
#              limit: requests then wait in the driver's backlog and reach the leaf late)
#
# LEAF_FLAGS (environment): extra frontload-leaf flags, for comparing admission settings
# (for example LEAF_FLAGS="--max-queue-ms 1000"); printed in the header line.
# REQUESTS (environment): "default" (the default) sends the driver's default requests,
# sizes sampled from production's request and reply size tables (runtime/data/
# feed_aggregator_*_sizes.json: median request 48 KB, p75 1.9 MB), as frontload run
# does; "light" sends 16 stories of 1 KiB, 20,000 request bytes, 10,000 reply bytes,
# which measures the leaf's compute stages with little IO.
# One mock and one leaf with their defaults (the leaf's pools sized from the CPUs, inflight
# limit 256), as frontload run starts them. The driver with its defaults (--depth auto), so
# its in-flight ceiling never binds before the leaf's inflight limit does: the leaf, not
# the driver, meets the overload. --timeout-s 3 (what frontload run gives the driver
# for the default 700 ms SLA). Requests: see REQUESTS above.
#   1. capacity: leaf-client closed-loop, 1000 requests at depth 128 (enough to keep the
#      RANKER threads busy through each request's fanout wait): C0 = OK replies / wall s.
#   2. 1x: the driver offers R = C0 for WINDOW_S; the host holds R when OK replies/s >=
#      95% of R, nothing was shed, failed or timed out, and the OK replies' p95 is within
#      frontload run's default SLA (700 ms): past the knee a rate can still be answered
#      in full while its queue, and so its latency, grows. While it holds, R steps up by
#      15% (at most 4 times: a closed loop underestimates what an open loop holds); when
#      C0 is not held, R steps down by 10% (at most 4 times). The highest held step is
#      1x: its goodput G1 is the capacity the other rates are judged against.
#   3. 1.5x and 3x of R, WINDOW_S each: goodput G and G / G1 (target >= 0.90).
# Each row: offered QPS, OK/s (goodput), ratio to 1x, then what the rest became:
# OVERLOADED, DEADLINE_EXCEEDED, timeouts, other errors (driver counts over the window),
# p95 of the OK replies (ms, "null" without any), and the leaf's skipped work by stage;
# then where the CPUs went, over each step's whole run (warm-up included): requests the
# leaf received per second (recv_s: what the host delivered), those already past their
# deadline on arrival (late_in), and the leaf's and the driver's CPU time as % of one CPU
# (/proc/PID/stat utime + stime; the driver by /usr/bin/time). On one host the driver and
# the kernel's loopback copies share the CPUs with the leaf: at 3x with the default
# requests they take CPU the leaf's capacity at 1x had, which the columns show.
# The figures are only as quiet as the host: other load on the CPUs moves them.
set -eu
B=$(cd "${1:?usage: goodput.sh BUILD_DIR [WINDOW_S] [DEADLINE]}" && pwd)
WINDOW=${2:-20}
DEADLINE=${3:-timeout}
CEIL=${4:-4xauto}
CONNS=${CEIL%x*}
DEPTH=${CEIL#*x}
for f in frontload-leaf frontload-mock frontload-driver tests/leaf-client libfrontload-extract.so; do
	[ -e "$B/$f" ] || { echo "goodput.sh: $B/$f not built" >&2; exit 1; }
done
T=$(mktemp -d /tmp/fl-goodput.XXXXXX)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || :; done
	for p in $PIDS; do wait "$p" 2>/dev/null || :; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

case ${REQUESTS:-default} in
default) REQ="" ;;
light) REQ="--stories 16 --story-bytes 1024 --request-size 20000 --reply-bytes 10000" ;;
*) echo "goodput.sh: REQUESTS must be default or light, not '$REQUESTS'" >&2; exit 2 ;;
esac
calc() { awk "BEGIN { printf \"%.1f\", $* }"; }
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
jget() { "$B/tests/leaf-client" --get "$2" "$1"; }

# start NAME ARGS...: run in the background with --port-file, wait for the port.
start() {
	n=$1
	shift
	"$@" --port 0 --port-file "$T/$n.port" >"$T/$n.log" 2>&1 &
	PIDS="$PIDS $!"
	i=0
	until [ -s "$T/$n.port" ]; do
		i=$((i + 1))
		[ $i -le 600 ] || { echo "goodput.sh: $n did not start: $(tail -n 3 "$T/$n.log")" >&2; exit 1; }
		sleep 0.1
	done
}

start mock "$B/frontload-mock" --quiet
start leaf "$B/frontload-leaf" --lib "$B/libfrontload-extract.so" \
	--mock "127.0.0.1:$(cat "$T/mock.port")" --stats-file "$T/leaf.json" --quiet ${LEAF_FLAGS:-}
LEAF_PID=$(echo "$PIDS" | awk '{ print $NF }')
TICK=$(getconf CLK_TCK)
PORT=$(cat "$T/leaf.port")

# 1. Capacity probe, closed loop.
# shellcheck disable=SC2086
"$B/tests/leaf-client" --port "$PORT" --requests 1000 --depth 128 $REQ --seed 7 \
	--json "$T/cap.json" --timeout-s 120 >"$T/cap.log" 2>&1 ||
	{ echo "goodput.sh: capacity probe failed: $(tail -n 3 "$T/cap.log")" >&2; exit 1; }
C0=$(calc "$(jget "$T/cap.json" status.ok) / $(jget "$T/cap.json" wall_s)")

# counters: the leaf's deadline.skipped_total, queue_wait_shed, requests.received,
# requests.expired_at_admit and CPU ticks so far.
counters() {
	kill -USR1 "$LEAF_PID"
	sleep 0.5
	for k in deadline.skipped_total deadline.queue_wait_shed requests.received \
		requests.expired_at_admit; do
		printf '%s ' "$(jget "$T/leaf.json" "$k")"
	done
	awk '{ print $14 + $15 }' "/proc/$LEAF_PID/stat"
}

# run NAME QPS: one driver step; prints "ok_per_s ok overloaded deadline timeouts other p95".
run() {
	/usr/bin/time -f "%e %U %S" -o "$T/$1.time" "$B/frontload-driver" --leaf "127.0.0.1:$PORT" --qps "$2" --warmup 2 --duration "$WINDOW" \
		--connections "$CONNS" --depth "$DEPTH" --timeout-s 3 --deadline-ms "$DEADLINE" --seed 3 $REQ \
		--json "$T/$1.json" --quiet >/dev/null 2>"$T/$1.log" ||
		{ echo "goodput.sh: driver failed: $(tail -n 3 "$T/$1.log")" >&2; exit 1; }
	J=$T/$1.json
	dl=$(jget "$J" steps.0.errors.deadline_exceeded)
	echo "$(jget "$J" steps.0.achieved_qps) $(jget "$J" steps.0.ok) $(jget "$J" steps.0.overloaded)" \
		"$dl $(jget "$J" steps.0.timeouts) $(($(jget "$J" steps.0.errors.total) - dl))" \
		"$(jget "$J" steps.0.latency_ms.p95)"
}

# row X QPS G1: run a step and print its table row (G1 empty: this is the 1x row).
row() {
	before=$(counters)
	set -- "$1" "$2" "${3:-}" $(run "x$1" "$2")
	after=$(counters)
	d() { echo $(($(echo "$after" | cut -d' ' -f"$1") - $(echo "$before" | cut -d' ' -f"$1"))); }
	# The driver's wall, user and system seconds: the step's run, warm-up included.
	read -r dwall duser dsys <"$T/x$1.time"
	ratio=$([ -n "$3" ] && ratio "$4" "$3" || echo 1.00)
	LAST_ROW=$(printf "%-6s %9.1f %9.1f %6s %10s %9s %8s %6s %9s %8s %8s %7s %7s %8s %7s" \
		"$1" "$2" "$4" "$ratio" "$6" "$7" "$8" "$9" \
		"$(printf %s "${10}" | sed 's/^\([0-9]*\.[0-9]\).*/\1/')" "$(d 1)" "$(d 2)" \
		"$(calc "$(d 3) / $dwall")" "$(d 4)" "$(calc "100 * $(d 5) / $TICK / $dwall")" \
		"$(calc "100 * ($duser + $dsys) / $dwall")")
	echo "$LAST_ROW"
	LAST_G=$(calc "$4") LAST_LOST=$(($6 + $7 + $8 + $9)) LAST_P95=${10}
}

echo "goodput.sh: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); windows of $WINDOW s;" \
	"requests: ${REQUESTS:-default}; leaf flags: ${LEAF_FLAGS:-defaults}; driver --deadline-ms $DEADLINE --timeout-s 3, $CONNS connections x depth $DEPTH; capacity probe (closed loop): $C0 OK/s"
printf "%-6s %9s %9s %6s %10s %9s %8s %6s %9s %8s %8s %7s %7s %8s %7s\n" offer qps \
	ok_per_s ratio overloaded deadline timeouts errors p95_ms skipped q_shed recv_s late_in \
	leaf_cpu% drv_cpu%
# held: the last step's goodput >= 95% of $1 qps with nothing lost, p95 within the SLA.
SLA_MS=700
held() {
	awk -v g="$LAST_G" -v r="$1" -v l="$LAST_LOST" -v p="$LAST_P95" -v sla="$SLA_MS" \
		'BEGIN { exit !(g >= 0.95 * r && l == 0 && p != "null" && p + 0 <= sla) }'
}
R=$C0
tries=0
row find "$R"
if held "$R"; then
	G1=$LAST_G ROW1=$LAST_ROW
	while [ $tries -lt 4 ]; do
		tries=$((tries + 1))
		up=$(calc "1.15 * $R")
		row find "$up"
		held "$up" || break
		R=$up G1=$LAST_G ROW1=$LAST_ROW
	done
else
	while ! held "$R"; do
		tries=$((tries + 1))
		[ $tries -le 4 ] || { echo "goodput.sh: the host held no rate down to $R qps" >&2; exit 1; }
		R=$(calc "0.9 * $R")
		row find "$R"
	done
	G1=$LAST_G ROW1=$LAST_ROW
fi
echo "$ROW1" | sed 's/^find  /1.0x  /'
row 1.5x "$(calc "1.5 * $R")" "$G1"
G15=$LAST_G
row 3.0x "$(calc "3 * $R")" "$G1"
G3=$LAST_G
echo "capacity (goodput at 1x, $R qps): $G1 OK/s; goodput at 1.5x: $G15 OK/s" \
	"($(calc "100 * $G15 / $G1")% of 1x), at 3x: $G3 OK/s ($(calc "100 * $G3 / $G1")% of 1x);" \
	"target >= 90%: $(awk -v a="$G15" -v b="$G3" -v g="$G1" 'BEGIN { print (a >= 0.9 * g && b >= 0.9 * g) ? "met" : "missed" }')"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

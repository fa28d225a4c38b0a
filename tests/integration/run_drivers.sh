#!/bin/sh
# run_drivers.sh: `frontload run --drivers 2`: two drivers per instance, one merged step.
#
# Runs `frontload run --qps 40 --duration 4 --warmup-seconds 1 --drivers 2 --seed 7` (fixed
# mode, one instance: mock, leaf and two drivers started beside the binary) and checks, in
# DIR/result.json and the drivers' own files:
#   - exit 0, status complete; two driver processes ran (driver0.0, driver0.1), with
#     seeds 7 and 8 (result.json, and the config each driver echoed into its --json);
#   - the rate was split: each driver was asked for 20 requests/s, the instance for 40;
#   - the instance's counts are the drivers' summed (sent, ok, completed, timeouts,
#     errors, latency count), and so are the step's requests;
#   - its latency_hist_ns holds exactly the drivers' buckets pooled, and its p95 (the
#     step's p95_ms, which is judged) is the p95 of that pooled histogram, computed here
#     with jq from the drivers' histograms (hist.h: bucket midpoint clamped to [min,
#     max]), to the 1e-4 ms result.json writes, and lies within [min, max] of the
#     drivers' own p95s;
#   - every line of the drivers' jsonl carries latency_hist_ns;
#   - a second run with driver0.1 killed (SIGKILL) mid-step fails (exit 1, status failed,
#     status_reason naming driver0.1 and its pid), as a run with one driver does.
# Nothing here judges timing (the rate is low and no figure is compared with a bound).
. "$(dirname "$0")/common.inc"

RUN=$B/frontload
[ -x "$RUN" ] || fail "$RUN not built (ninja frontload)"
[ -x "$B/frontload-driver" ] || fail "$B/frontload-driver not built"
command -v jq >/dev/null || fail "jq not installed"
LIMIT_S=90

O=$T/run
ARGS="--qps 40 --duration 4 --warmup-seconds 1 --drivers 2 --seed 7"
note "frontload run $ARGS --out $O"
t0=$(date +%s)
# shellcheck disable=SC2086
(cd "$T" && exec "$RUN" run $ARGS --out "$O") >"$T/run.out" 2>"$T/run.log" &
rpid=$!
FL_PIDS="$FL_PIDS $rpid"
FL_SERVERS="$FL_SERVERS run"
wait_run "$rpid" "$t0" "$LIMIT_S" "frontload run --drivers 2"
assert_eq "$rc" 0 "frontload run $ARGS exit status ($(tail -n 3 "$T/run.log"))"
R=$O/result.json
[ -s "$R" ] || fail "no $R"
assert_eq "$(get "$R" status)" complete "result status ($(getd "$R" status_reason ?))"
assert_eq "$(jq '.config.drivers' "$R")" 2 "config.drivers"

# Processes and seeds.
assert_eq "$(jq -c '[.instances[0].drivers[].seed]' "$R")" "[7,8]" "driver seeds"
for d in 0 1; do
	[ -s "$O/driver0.$d.log" ] || fail "no $O/driver0.$d.log: driver $d did not run"
	s=$(jq '.config.seed' "$O/driver0.$d.json")
	assert_eq "$s" $((7 + d)) "seed driver0.$d was started with (its --json config)"
	n=$(wc -l <"$O/driver0.$d.jsonl")
	h=$(jq -s '[.[] | select(.latency_hist_ns.sub_bits == 7)] | length' "$O/driver0.$d.jsonl")
	assert_eq "$h" "$n" "driver0.$d.jsonl lines with latency_hist_ns"
done

S='.steps[-1]'
I="$S.instances[0]"
assert_eq "$(jq "$I.drivers | length" "$R")" 2 "drivers[] of the step's instance"
assert_eq "$(jq -c "[$I.drivers[].requested_qps]" "$R")" "[20,20]" "each driver's rate"
flt "$(jq "$I.requested_qps" "$R")" "==" 40 || fail "instance requested_qps $(jq "$I.requested_qps" "$R")"

# Summed counts.
for k in sent ok completed timeouts overloaded unsent; do
	m=$(jq "$I.$k" "$R")
	s=$(jq "[$I.drivers[].$k] | add" "$R")
	assert_eq "$m" "$s" "merged $k = the drivers' sum"
done
assert_eq "$(jq "$I.errors.total" "$R")" "$(jq "[$I.drivers[].errors.total] | add" "$R")" \
	"merged errors.total"
assert_eq "$(jq "$I.latency.count" "$R")" "$(jq "[$I.drivers[].latency.count] | add" "$R")" \
	"merged latency count"
assert_eq "$(jq "$S.requests" "$R")" "$(jq "[$I.drivers[] | .sent + .unsent] | add" "$R")" \
	"step requests"
ok=$(jq "$I.ok" "$R")
assert_gt "$ok" 20 "OK replies over both drivers"

# The pooled histogram, and its p95, from the drivers' histograms.
JQ_P95='
def range_of($b):
  if $b < 256 then [$b, $b]
  else (($b / 128 | floor) - 1) as $s | ((($b % 128) + 128) * pow(2; $s)) as $lo
    | [$lo, $lo + pow(2; $s) - 1] end;
def pooled: [.drivers[].latency_hist_ns.buckets[]] | group_by(.[0])
  | map([.[0][0], (map(.[1]) | add)]);
def p95($bk; $n; $min; $max):
  ((0.95 * $n) | ceil | if . < 1 then 1 else . end) as $rank
  | (reduce $bk[] as $b ({cum: 0, hit: null};
      if .hit == null then .cum += $b[1] | (if .cum >= $rank then .hit = $b[0] else . end)
      else . end)).hit
  | range_of(.) as [$lo, $hi] | ($lo + (($hi - $lo) / 2 | floor))
  | if . < $min then $min elif . > $max then $max else . end;
'
jq -e "$JQ_P95 $I | pooled == .latency_hist_ns.buckets" "$R" >/dev/null ||
	fail "latency_hist_ns is not the drivers' buckets pooled"
want=$(jq "$JQ_P95 $I | p95(pooled; ([.drivers[].latency_hist_ns.count] | add);
	([.drivers[].latency_hist_ns.min | values] | min); ([.drivers[].latency_hist_ns.max |
	values] | max)) / 1e6" "$R")
got=$(jq "$S.p95_ms" "$R")
inst=$(jq "$I.latency.p95_ms" "$R")
# result.json rounds to 1e-4 ms: equal within that rounding.
jq -n -e "($got) - ($want) | (if . < 0 then -. else . end) <= 0.000051" >/dev/null ||
	fail "step p95_ms $got is not the pooled histogram's p95 $want"
assert_eq "$inst" "$got" "the instance's p95 and the step's (judged) p95"
lo=$(jq "[$I.drivers[].latency.p95_ms] | min" "$R")
hi=$(jq "[$I.drivers[].latency.p95_ms] | max" "$R")
flt "$got" ">=" "$lo" && flt "$got" "<=" "$hi" ||
	fail "merged p95 $got outside the drivers' p95s [$lo, $hi]"
jq -e "$S.p95_interval_ms.lo <= $S.p95_ms and $S.p95_ms <= $S.p95_interval_ms.hi" "$R" \
	>/dev/null || fail "p95 outside its interval: $(jq -c "$S.p95_interval_ms" "$R")"

# One driver killed mid-step: the step fails and the run names it, as with one driver.
O2=$T/run2
(cd "$T" && exec "$RUN" run --qps 20 --duration 30 --warmup-seconds 1 --drivers 2 \
	--out "$O2") >"$T/run2.out" 2>"$T/run2.log" &
rpid=$!
FL_PIDS="$FL_PIDS $rpid"
t1=$(date +%s)
until grep -q "started driver0.1 (pid" "$T/run2.log" 2>/dev/null; do
	running "$rpid" || fail "frontload run ended before its second driver started"
	[ $(($(date +%s) - t1)) -lt 30 ] || fail "no second driver within 30 s"
	sleep 0.1
done
dpid=$(sed -n 's/.*started driver0.1 (pid \([0-9]*\).*/\1/p' "$T/run2.log")
sleep 3
kill -9 "$dpid"
wait_run "$rpid" "$t1" 60 "frontload run with a driver killed"
assert_eq "$rc" 1 "exit status with driver0.1 killed"
assert_eq "$(get "$O2/result.json" status)" failed "status with a driver killed"
getd "$O2/result.json" status_reason "" | grep -q "driver0.1 (pid $dpid)" ||
	fail "status_reason does not name driver0.1: $(getd "$O2/result.json" status_reason ?)"

sleep 0.5
for n in frontload-leaf frontload-mock frontload-driver; do
	! pgrep -f "$T/run.*$n\|$n.*$T/run" >/dev/null 2>&1 || fail "$n of a run left behind"
done
echo "2 drivers (seeds 7, 8) at 20 qps each: $ok OK, merged p95 $got ms (pooled $want)" \
	"within drivers' [$lo, $hi]; $(elapsed) s"

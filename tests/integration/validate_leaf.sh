#!/bin/sh
# validate_leaf.sh: `frontload-measure validate` on the running leaf, end to end: mock, leaf
# and driver started, a native window and a simulated one (the leaf under callgrind), each
# holding only whole, successful requests; the per-object and the per-pool Ir add up to the
# process's; every judged figure names its path; nothing unmeasured is a number; SIGTERM
# stops the service it started.
# fl-test: retries=1
FL_WATCHDOG_S=${FL_WATCHDOG_S:-240}
. "$FL_SRCDIR/tests/integration/common.inc"

[ -z "${FL_SANITIZERS:-}" ] || skip "sanitizer build ($FL_SANITIZERS): the leaf under valgrind and a timed window"
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
command -v callgrind_control >/dev/null 2>&1 || skip "callgrind_control is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
M=$B/frontload-measure
[ -x "$M" ] || fail "$M not built"

t0=$(date +%s)
# Short windows: 4 s at 5 qps natively, 3 requests under callgrind at the rate validate
# derives from the native window; the plan kept small so valgrind translates little.
timeout 220 "$M" validate --warmup 2 --window 4 --qps 5 --sim-requests 3 \
	--leaf-args "--active-copies 1 --extractors-per-story 40" \
	--json "$T/v.json" >"$T/out" 2>"$T/err"
rc=$?
wall=$(($(date +%s) - t0))
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "validate exited $rc: $(tail -n 5 "$T/err" | tr '\n' ' ')"
[ -s "$T/v.json" ] || fail "no JSON report"
J="$T/v.json"
q() { jq -r "$1" "$J"; }

# 1. Both windows whole: every request sent in them answered OK.
for w in native simulated; do
	assert_eq "$(q ".$w.whole")" true "$w window whole ($(q ".$w.why"))"
	sent=$(q ".$w.driver_step.sent")
	assert_ge "$sent" 1 "$w: requests in the window"
	assert_eq "$(q ".$w.driver_step.ok")" "$sent" "$w: OK replies = sent"
	assert_eq "$(q ".$w.driver_step.completed")" "$sent" "$w: completed = sent"
	assert_eq "$(q ".$w.driver_step.timeouts")" 0 "$w: timeouts"
	assert_eq "$(q ".$w.driver_step.errors.total")" 0 "$w: errors"
done

# 2. Per-object and per-pool Ir add up to the process's; the generated library ran.
ir=$(q '.process.ir')
assert_gt "$ir" 0 "process Ir"
assert_eq "$(q '[.objects[].ir] | add')" "$ir" "sum of per-object Ir"
assert_eq "$(q '[.pools[].ir] | add')" "$ir" "sum of per-pool Ir"
gen=$(q '[.objects[] | select(.name == "generated") | .ir] | add // 0')
assert_gt "$gen" 0 "Ir in the generated library"
assert_gt "$(q '[.pools[] | select(.name == "ranker") | .ir] | add // 0')" 0 "Ir on RANKER threads"
mpki=$(q '.process.l1i_mpki')
case $mpki in null | '' | *[!0-9.e+-]*) fail "process L1i MPKI is not a number: $mpki" ;; esac

# 3. The table and the JSON name every path; nothing unmeasured is a number.
grep -q 'path simulated' "$T/out" || fail "no simulated table in the output"
grep -q 'path native' "$T/out" || fail "no native table in the output"
grep -q 'path hardware' "$T/out" || fail "no hardware table in the output"
bad=$(q '[.targets[] | select(.path != "simulated" and .path != "native" and .path != "hardware")] | length')
assert_eq "$bad" 0 "targets with an unnamed path"
bad=$(q '[.targets[] | select(.measured == null and (.why | length) == 0)] | length')
assert_eq "$bad" 0 "unmeasured targets without a reason"
pmu=$(q '.pmu.total.instructions')
case $pmu in
'unsupported: '*) ;;
*[!0-9.e+]* | '') fail "pmu.total.instructions is neither a count nor unsupported: $pmu" ;;
esac
prof=$(q '.profile | if type == "string" then . else "samples \(.samples)" end')
case $prof in 'unsupported: '* | 'samples '[1-9]*) ;; *) fail "profile: $prof" ;; esac

# 4. SIGTERM mid-window: validate stops the mock, leaf and driver it started (they lead
# process groups of their own, so the signal reaches only validate), exits 143, and no
# process of the run is left (the leaf and the driver carry the run's unique --seed).
"$M" validate --warmup 1 --window 60 --qps 5 --no-profile --seed 424242 \
	--leaf-args "--active-copies 1" >"$T/out2" 2>"$T/err2" &
vp=$!
i=0
until grep -q 'native run: measured window' "$T/err2" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 300 ] || { kill -9 "$vp"; fail "validate never reached its window: $(tail -n 3 "$T/err2")"; }
	sleep 0.1
done
kill -TERM "$vp"
wait "$vp"
trc=$?
assert_eq "$trc" 143 "validate's exit status after SIGTERM"
sleep 0.5
left=$(pgrep -f -- '--seed 424242' | tr '\n' ' ')
[ -z "$left" ] || { pkill -9 -f -- '--seed 424242'; fail "processes left after SIGTERM: $left"; }
grep -q 'interrupted by signal 15' "$T/err2" || fail "validate did not say it was interrupted: $(tail -n 2 "$T/err2")"

echo "validate (leaf): native $(q '.native.driver_step.sent') + simulated $(q '.simulated.driver_step.sent') whole requests, process Ir $ir = objects = pools, L1i MPKI $(printf %.2f "$mpki"), profile $prof, PMU ${pmu%%:*}, exit $rc, ${wall} s"

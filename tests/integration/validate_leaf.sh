#!/bin/sh
# validate_leaf.sh: `frontload-measure validate` on the running leaf, end to end: mock, leaf
# and driver started, a native window and a simulated one (the leaf under callgrind), each
# holding only whole, successful requests; the per-object, per-pool and (within the
# generated library) per-pattern Ir add up; every judged figure names its path; nothing
# unmeasured is a number; a missed mix target says what the generated library and the rest
# of the process would each need; SIGTERM stops the service it started.
# fl-test: retries=1
FL_WATCHDOG_S=${FL_WATCHDOG_S:-300}
. "$FL_SRCDIR/tests/integration/common.inc"

[ -z "${FL_SANITIZERS:-}" ] || skip "sanitizer build ($FL_SANITIZERS): the leaf under valgrind and a timed window"
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
command -v callgrind_control >/dev/null 2>&1 || skip "callgrind_control is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
M=$B/frontload-measure
[ -x "$M" ] || fail "$M not built"

# 0. A bad --sim-leaves is a usage error naming the flag, before anything starts.
for v in 0 9 1.5 x; do
	"$M" validate --sim-leaves "$v" >/dev/null 2>"$T/bad"
	assert_eq "$?" 2 "validate --sim-leaves $v: exit status"
	grep -q -- '--sim-leaves' "$T/bad" || fail "--sim-leaves $v: the error does not name the flag: $(head -n 1 "$T/bad")"
done

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

# 1. Both windows whole: every request sent in them answered OK. The simulated window is
# spread over the simulated leaves (2 on a host with 2 CPUs: 2 + 1 requests), each whole.
nsim=$(q '.simulated.leaves | length')
cpus=$(getconf _NPROCESSORS_ONLN)
[ "$cpus" -ge 2 ] && want=2 || want=1
assert_eq "$nsim" "$want" "simulated leaves (auto, $cpus CPUs)"
assert_eq "$(q '.config.sim_leaves')" "$nsim" "config.sim_leaves"
assert_eq "$(q '[.simulated.leaves[].requests] | add')" 3 "--sim-requests shared out"
assert_eq "$(q '[.simulated.leaves[].driver_step.sent] | add')" "$(q '.simulated.sent')" \
	"simulated.sent = the leaves' sum"
assert_eq "$(q '.simulated.whole')" true "simulated window whole ($(q '.simulated.why'))"
for w in .native .simulated.leaves[0] .simulated.leaves[$((nsim - 1))]; do
	assert_eq "$(q "$w.whole")" true "$w window whole ($(q "$w.why"))"
	sent=$(q "$w.driver_step.sent")
	assert_ge "$sent" 1 "$w: requests in the window"
	assert_eq "$(q "$w.driver_step.ok")" "$sent" "$w: OK replies = sent"
	assert_eq "$(q "$w.driver_step.completed")" "$sent" "$w: completed = sent"
	assert_eq "$(q "$w.driver_step.timeouts")" 0 "$w: timeouts"
	assert_eq "$(q "$w.driver_step.errors.total")" 0 "$w: errors"
done

# The leaf's profile, given none: the shipped default when this is the build it was
# calibrated for (same functions, variants, copies, seed), else the built-in knobs, said so.
fit=$(jq -r --slurpfile b "$B/config.json" '.calibrated.build as $p | $b[0] as $l |
	[$p.functions == $l.functions, $p.variants == $l.variants, $p.copies == $l.copies,
	 $p.seed == $l.seed] | all' "$FL_SRCDIR/runtime/data/profile-default.json")
src=$(q '.config.leaf_profile_applied.source')
if [ "$fit" = true ]; then
	case $src in 'default: '*) ;; *) fail "leaf profile on the default build: $src" ;; esac
else
	case $src in 'none: the shipped profile-default'*'.json does not fit this library (calibrated for '*) ;;
	*) fail "leaf profile on this build (not the default profile's): $src" ;; esac
	assert_eq "$(q '.config.leaf_profile_applied.profile')" none "leaf profile applied"
fi

# 2. Per-object and per-pool Ir add up to the process's; the generated library ran.
ir=$(q '.process.ir')
assert_gt "$ir" 0 "process Ir"
assert_eq "$(q '[.objects[].ir] | add')" "$ir" "sum of per-object Ir"
assert_eq "$(q '[.pools[].ir] | add')" "$ir" "sum of per-pool Ir"
gen=$(q '[.objects[] | select(.name == "generated") | .ir] | add // 0')
assert_gt "$gen" 0 "Ir in the generated library"
assert_gt "$(q '[.pools[] | select(.name == "ranker") | .ir] | add // 0')" 0 "Ir on RANKER threads"
# The generated library split by pattern (its symbols): every row a pattern P01..P27 or
# "shared", their Ir adding up to the library's, and the table printed under the objects.
assert_eq "$(q '[.patterns[].ir] | add')" "$gen" "sum of per-pattern Ir = the generated library's"
bad=$(q '[.patterns[].name | select(test("^(P(0[1-9]|1[0-9]|2[0-7])|shared)$") | not)] | length')
assert_eq "$bad" 0 "pattern rows named neither P01..P27 nor shared"
assert_gt "$(q '[.patterns[] | select(.name != "shared")] | length')" 0 "patterns that ran"
assert_eq "$(q '([.patterns[].l1i_miss_pct // 0] | add) - ([.objects[] |
	select(.name == "generated") | .l1i_miss_pct // 0] | add) | fabs < 0.001')" true \
	"the patterns' shares of the L1i misses add up to the library's"
grep -q "patterns' Ir sum $gen = generated Ir $gen: yes" "$T/out" ||
	fail "no per-pattern table adding up: $(grep -A1 'by pattern' "$T/out" | head -n 2)"
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
# A missed mix target says what each side would need (the generated library, the rest),
# and the two sides' shares of the instructions add up to the process.
bad=$(q '[.targets[] | select(.verdict == "fail" and (.metric | IN("cond_branch_pct",
	"call_ret_pct", "mem_pct", "insns_per_taken_branch", "scalar_fp_pct", "div_pct"))) |
	select((.needs.generated.share_of_instructions_pct + .needs.rest.share_of_instructions_pct
	- 100 | fabs) > 1e-6 or (.needs.generated.text | type) != "string" or
	(.needs.bound | type) != "number")] | length')
assert_eq "$bad" 0 "missed mix targets without what each side needs"
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
# Wait (at most n tenths of a second) for pattern in validate's stderr err, then SIGTERM
# validate (PID vp): it exits 143 and leaves no process whose command line matches seeds.
term_at() {
	vp=$1 pattern=$2 err=$3 n=$4 seeds=$5 what=$6
	i=0
	until grep -q "$pattern" "$err" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le "$n" ] || { kill -9 "$vp"; fail "validate never reached '$pattern': $(tail -n 3 "$err")"; }
		sleep 0.1
	done
	kill -TERM "$vp"
	wait "$vp"
	trc=$?
	assert_eq "$trc" 143 "validate's exit status after SIGTERM $what"
	sleep 0.5
	left=$(pgrep -f -- "$seeds" | tr '\n' ' ')
	[ -z "$left" ] || { pkill -9 -f -- "$seeds"; fail "processes left after SIGTERM $what: $left"; }
}
"$M" validate --warmup 1 --window 60 --qps 5 --no-profile --seed 424242 \
	--leaf-args "--active-copies 1" >"$T/out2" 2>"$T/err2" &
term_at $! 'native run: measured window' "$T/err2" 300 '--seed 424242' "in the native window"
grep -q 'interrupted by signal 15' "$T/err2" || fail "validate did not say it was interrupted: $(tail -n 2 "$T/err2")"

# 5. The same in the simulated run with 2 leaves: the second runs in a child process,
# which stops its own mock, leaf and driver when validate passes the signal on. Its
# --timeout-s 900 stretches to 4,500 s for the simulated leaves, past the leaf's
# --rpc-timeout-ms bound of an hour: validate gives the leaf the bound (before, the leaf
# refused the flag and no simulated run started).
"$M" validate --warmup 1 --window 1 --qps 5 --no-profile --seed 525252 --sim-leaves 2 \
	--sim-requests 2 --timeout-s 900 --leaf-args "--active-copies 1" >"$T/out3" 2>"$T/err3" &
term_at $! 'sim2 run: warm-up step' "$T/err3" 900 '--seed 52525[23]' "in the simulated run"

echo "validate (leaf): native $(q '.native.driver_step.sent') + simulated $(q '.simulated.sent') whole requests on $nsim simulated leaves, process Ir $ir = objects = pools, L1i MPKI $(printf %.2f "$mpki"), profile $prof, PMU ${pmu%%:*}, exit $rc, ${wall} s"

#!/bin/sh
# calibrate_leaf.sh: leaf profiles end to end: `frontload-measure calibrate --leaf` fits the
# running leaf's CPU profile and L1i MPKI (two validate runs, native and simulated) and
# writes a profile, which frontload-leaf, frontload run and validate load with --profile.
#   1. calibrate --leaf --runs 2: exit 0 or 3 (a figure outside its band), the profile
#      holds the five fitted knobs under leaf_args (--footprint-bytes among them), a
#      residual for each fitted figure (0 inside its band, the distance to the band
#      outside) and its aim (the middle half of the band: the fit stops early only when
#      every figure of a run is in its aim), both runs with their measured figures (L1i
#      MPKI a number); each knob of
#      run 2 did not move away from its band (not down when the share was below it, not up
#      when above; the footprint up when the MPKI was above its band, down when below; the
#      zstd fraction also answers the fanout step, the extractors per story the
#      footprint's step: x footprint ratio^-beta); the confirmation run measured the
#      written knobs again, with a residual for each figure, and the exit status follows it;
#   2. frontload-leaf --profile: the profile's knobs are the leaf's (stats config), a flag
#      on the command line wins over the profile's, a profile naming --port, an unknown
#      flag, a value out of range or a file that is not a profile is refused (exit 2)
#      with a message naming it; --profile default is runtime/data/profile-default-KIND.json
#      for this host's kind of CPU when one ships, else profile-default.json;
#      --profile none keeps the built-in knobs;
#   3. frontload run --profile: a 2 s fixed-rate run whose leaf ran with the profile's
#      knobs (its stats config), result.json keeping the path and the leaf_args; with
#      --leaf it is refused;
#   4. SIGTERM during a fit's second run: exit 143, the finished run written as the
#      profile, nothing of the stopped validate's service left.
#   5. --hardware: the four shares only, the start profile's footprint kept as it was.
#   (1 runs --repeats 2: each share the mean of two native windows.)
# Skipped under sanitizers (timed windows) and without perf (the CPU profile).
# fl-test: retries=1
FL_WATCHDOG_S=${FL_WATCHDOG_S:-420}
. "$FL_SRCDIR/tests/integration/common.inc"

[ -z "${FL_SANITIZERS:-}" ] || skip "sanitizer build ($FL_SANITIZERS): timed native windows"
command -v perf >/dev/null 2>&1 || skip "perf is not installed (apt-get install linux-perf)"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed (the simulated L1i MPKI)"
M=$B/frontload-measure
RUN=$B/frontload
[ -x "$M" ] || fail "$M not built"
P=$T/profile.json

# 1. Two runs of the fit.
timeout 300 "$M" calibrate --leaf --runs 2 --repeats 2 --window 4 --warmup 2 --sim-requests 2 \
	--write-profile "$P" --keep "$T/cal" >"$T/cal.out" 2>"$T/cal.err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "calibrate --leaf exited $rc: $(tail -n 4 "$T/cal.err" | tr '\n' ' ')"
[ -s "$P" ] || fail "no profile written"
q() { jq -r "$1" "$P"; }
assert_eq "$(q '.frontload_profile')" 1 "frontload_profile"
for k in extractors-per-story rank-passes rpc-zstd-fraction rpc-fanout-scale footprint-bytes; do
	v=$(q ".leaf_args[\"$k\"]")
	case $v in null | '' | *[!0-9.e+-]*) fail "leaf_args.$k is not a number: $v" ;; esac
done
nres=$(q '[.calibrated.residuals[] | select((.residual | type) == "number" and
	(if .measured < .lo then .residual < 0 elif .measured > .hi then .residual > 0
	 else .residual == 0 end))] | length')
assert_eq "$nres" 5 "residuals that match their bands"
assert_eq "$(jq -c '.calibrated.confirmation.leaf_args' "$P")" "$(jq -c '.leaf_args' "$P")" \
	"the confirmation run's knobs"
assert_eq "$(q '.calibrated.confirmation.residuals | keys | length')" 5 "confirmation residuals"
cin=$(q '[.calibrated.confirmation.residuals[] | select(.residual != 0)] | length')
if [ "$cin" = 0 ]; then want=0; else want=3; fi
assert_eq "$rc" "$want" "exit status after a confirmation with $cin figures out of band"
# --repeats 2: each run's shares are the mean of its two native windows (the second a
# validate --hardware run of its own), its L1i MPKI the first's.
assert_eq "$(q '.calibrated.runs[0].measured.repeats | length')" 2 "run 1's windows"
[ -s "$T/cal/run01-r2-validate.json" ] || fail "run 1's second window left no validate JSON"
assert_eq "$(jq -r '.path, (.simulated | type)' "$T/cal/run01-r2-validate.json" | tr '\n' ' ')" \
	"leaf null " "run 1's second window: the native run only"
assert_eq "$(q '.calibrated.runs[0].measured as $m | ([$m.repeats[].profile_extract_pct] |
	add / 2) - $m.profile_extract_pct | (if . < 0 then -. else . end) < 1e-9')" true "run 1's extraction share = the mean of its windows"
assert_eq "$(q '.calibrated.runs[0].measured as $m | $m.l1i_mpki == $m.repeats[0].l1i_mpki')" \
	true "run 1's L1i MPKI = its simulated window's"
mpki=$(q '.calibrated.runs[0].measured.l1i_mpki | if type == "number" then . * 100 | round / 100 else . end')
case $mpki in null | '' | *[!0-9.e+-]*) fail "run 1's L1i MPKI is not a number: $mpki" ;; esac
nruns=$(q '.calibrated.runs | length')
[ "$nruns" = 2 ] || [ "$(q '.calibrated.runs[0].score')" = 0 ] ||
	fail "runs kept: $nruns, want 2 (or 1 when run 1 had every figure in its aim)"
# The aim is the middle half of each band.
assert_eq "$(q '[.calibrated.residuals[] | select(((.aim[0] - (.lo * 0.75 + .hi * 0.25)) |
	fabs) < 1e-9 and ((.aim[1] - (.lo * 0.25 + .hi * 0.75)) | fabs) < 1e-9)] | length')" 5 \
	"aims in the middle half of their bands"
if [ "$nruns" = 2 ]; then
	# Each knob moved toward its band: up when the share was below, down when above.
	# The shares' knobs follow their share; the footprint goes the other way (a larger
	# one lowers the MPKI); the calls knob moves by its own step x footprint ratio^-beta.
	bad=$(jq -r '.calibrated as $c | ($c.runs[1].leaf_args["footprint-bytes"] /
		$c.runs[0].leaf_args["footprint-bytes"]) as $fr |
		$c.runs[0].measured.footprint_beta as $beta |
		[$c.residuals | to_entries[] | .key as $m | .value.knob as $k |
		($c.runs[0].measured[$m]) as $s | ($c.runs[0].leaf_args[$k]) as $v0 |
		($c.runs[1].leaf_args[$k]) as $v1 |
		(if $k == "footprint-bytes" then -1 else 1 end) as $dir |
		(if $k == "extractors-per-story" then
			(((.value.lo + .value.hi) / 200) as $t | ($s / 100) as $x |
			 ((($t / (1 - $t)) / ($x / (1 - $x)) | log) * 0.8) as $own |
			 ([[$own, (4 | log)] | min, -(4 | log)] | max) - $beta * ($fr | log))
		 elif $s < .value.lo then $dir elif $s > .value.hi then -$dir else 0 end) as $want |
		select($k != "rpc-zstd-fraction" and
			(($want > 0 and $v1 < $v0) or ($want < 0 and $v1 > $v0))) |
		"\($k) \($v0) -> \($v1) at \($s)"] | join("; ")' "$P")
	[ -z "$bad" ] || fail "knobs moved away from their bands: $bad"
fi
ext=$(q '.calibrated.residuals.profile_extract_pct.measured * 10 | round / 10')
eps=$(q '.leaf_args["extractors-per-story"]')
rp=$(q '.leaf_args["rank-passes"]')

# 2. The leaf loads it; the command line wins; bad profiles are refused.
start_server lp "$LEAF" --mock none --port 0 --profile "$P" --rank-passes 7 \
	--stats-file "$T/l.json" --quiet
stop_server lp
assert_eq "$(get "$T/l.json" config.extractors_per_story)" "$eps" "leaf's extractors per story from the profile"
assert_eq "$(get "$T/l.json" config.rank_passes)" 7 "the command line's --rank-passes over the profile's"
# The shipped profile by name.
start_server dp "$LEAF" --mock none --port 0 --profile default --stats-file "$T/d.json" --quiet
stop_server dp
# It is this CPU kind's shipped fit (profile-default-KIND.json) when one ships, else
# profile-default.json; the leaf names the file.
dfile=$(get "$T/d.json" config.profile_source)
dfile=${dfile#command line: --profile }
case $dfile in
"$FL_SRCDIR"/runtime/data/profile-default.json | "$FL_SRCDIR"/runtime/data/profile-default-*.json) ;;
*) fail "profile source of --profile default: $(get "$T/d.json" config.profile_source)" ;;
esac
assert_eq "$(get "$T/d.json" config.rank_passes)" \
	"$(jq '.leaf_args["rank-passes"]' "$dfile")" "rank passes of --profile default ($dfile)"
# A footprint on the command line in functions replaces the profile's in bytes (the
# plan takes one of the two), and the leaf says so.
start_server fp "$LEAF" --mock none --port 0 --profile "$P" --active-functions 50 \
	--stats-file "$T/f.json" --quiet
stop_server fp
assert_eq "$(get "$T/f.json" config.plan_functions)" 50 "--active-functions over the profile's footprint"
assert_eq "$(get "$T/f.json" config.footprint_bytes)" 0 "the profile's --footprint-bytes left out"
case $(get "$T/f.json" config.profile_source) in
*"its footprint (1 flag) left to the command line's") ;;
*) fail "profile source with a footprint on the command line: $(get "$T/f.json" config.profile_source)" ;;
esac
# --profile none: the built-in knobs (--help's defaults), said so.
start_server np "$LEAF" --mock none --port 0 --profile none --stats-file "$T/n.json" --quiet
stop_server np
assert_eq "$(get "$T/n.json" config.profile_source)" "none: --profile none" "profile source of --profile none"
assert_eq "$(get "$T/n.json" config.extractors_per_story)" \
	"$("$LEAF" --help | sed -n 's/.*--extractors-per-story N.*\[\([0-9]*\)\].*/\1/p')" \
	"--profile none: the built-in extractors per story"
refuse() {
	printf '%s\n' "$2" >"$T/bad.json"
	"$LEAF" --mock none --profile "$T/bad.json" --quiet >"$T/bad.log" 2>&1
	r=$?
	assert_eq "$r" 2 "leaf exit status with a profile of $2"
	grep -q -- "$1" "$T/bad.log" || fail "leaf with a profile of $2: no '$1' in: $(cat "$T/bad.log")"
}
refuse "places the process" '{"frontload_profile": 1, "leaf_args": {"port": 9}}'
refuse 'unknown option "--no-such-knob"' '{"frontload_profile": 1, "leaf_args": {"no-such-knob": 1}}'
refuse "rank-passes" '{"frontload_profile": 1, "leaf_args": {"rank-passes": 0}}'
refuse "not a frontload profile" '{"leaf_args": {}}'

# 3. frontload run with the profile.
"$RUN" run --qps 5 --duration 2 --warmup-seconds 1 --profile "$P" --out "$T/run" \
	>"$T/run.out" 2>"$T/run.err" || fail "frontload run --profile: $(tail -n 3 "$T/run.err")"
R=$T/run/result.json
assert_eq "$(jq -r '.config.profile_leaf_args["rank-passes"]' "$R")" "$rp" "result.json config.profile_leaf_args"
[ "$(jq -r '.config.profile' "$R")" != null ] || fail "result.json config.profile is null"
[ -s "$T/run/leaf0-stats.json" ] || fail "the run kept no leaf0-stats.json: $(ls "$T/run")"
assert_eq "$(get "$T/run/leaf0-stats.json" config.rank_passes)" "$rp" "the run's leaf rank passes"
"$RUN" run --qps 5 --duration 2 --profile "$P" --leaf 127.0.0.1:1 --out "$T/run2" \
	>"$T/run2.out" 2>&1 && fail "frontload run --profile --leaf exited 0"
grep -q "profile" "$T/run2.out" || fail "run --profile --leaf: no message naming --profile: $(cat "$T/run2.out")"
# 4. SIGTERM during the second run: exit 143, the first run's profile written, the
#    service of the stopped validate gone.
"$M" calibrate --leaf --hardware --runs 3 --window 4 --warmup 2 --seed 4343 \
	--write-profile "$T/stop.json" >"$T/stop.out" 2>"$T/stop.err" &
cp=$!
FL_PIDS="$FL_PIDS $cp"
i=0
until grep -q 'run 1/3' "$T/stop.err" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 900 ] || fail "calibrate did not finish its first run: $(tail -n 3 "$T/stop.err")"
	sleep 0.1
done
sleep 2
kill -TERM "$cp"
wait "$cp"
src=$?
assert_eq "$src" 143 "calibrate --leaf exit status after SIGTERM"
assert_eq "$(jq '.calibrated.runs | length' "$T/stop.json")" 1 "runs in the profile written after SIGTERM"
assert_eq "$(jq '.calibrated.confirmation' "$T/stop.json")" null "a confirmation run after SIGTERM"
sleep 1
left=$(pgrep -f -- "--seed 4343" | tr '\n' ' ')
[ -z "$left" ] || fail "processes of the stopped fit left: $left"
# 5. --hardware holds the footprint: the one written is the start profile's, and no run
#    measured an L1i MPKI.
printf '{"frontload_profile": 1, "leaf_args": {"footprint-bytes": "96k"}}\n' >"$T/fp.json"
timeout 120 "$M" calibrate --leaf --hardware --runs 1 --window 4 --warmup 2 --profile "$T/fp.json" \
	--write-profile "$T/hw.json" >"$T/hw.out" 2>"$T/hw.err"
rc5=$?
[ "$rc5" = 0 ] || [ "$rc5" = 3 ] || fail "calibrate --leaf --hardware exited $rc5: $(tail -n 3 "$T/hw.err")"
assert_eq "$(jq -r '.leaf_args["footprint-bytes"]' "$T/hw.json")" 96k "--hardware: the start profile's footprint"
assert_eq "$(jq -r '.calibrated.residuals | keys | length' "$T/hw.json")" 4 "--hardware: residuals"
assert_eq "$(jq -r '.calibrated.confirmation.residuals | keys | length' "$T/hw.json")" 4 \
	"--hardware: confirmation residuals"
assert_eq "$(jq -r '.calibrated.runs[0].measured | has("l1i_mpki")' "$T/hw.json")" false \
	"--hardware: a run with an L1i MPKI"
echo "calibrate --leaf: $nruns runs (exit $rc), extraction $ext% at $eps extractors per story," \
	"rank passes $rp, L1i MPKI $mpki at run 1; the leaf and frontload run load the profile," \
	"4 bad profiles refused; SIGTERM: exit 143, 1 run written, nothing left; --hardware" \
	"keeps the footprint"

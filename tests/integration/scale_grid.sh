#!/bin/sh
# scale_grid.sh: `frontload scale`, the scaling study, end to end on a small grid.
#
# `frontload scale --instances 1,2 --ranker-threads fill,1 --run-args "--qps 3 --duration
# 2"` runs one frontload run per configuration at fixed rates (a search would take
# minutes each): i1-t2 (one instance, its ranker threads filling both CPUs), i1-t1 and
# i2-t1 (two instances of one CPU each; fill = 1 is the same configuration as 1, run
# once). Checks: exit 0; scale.csv, scale.json, summary.md and report.html written; three
# configurations, each with its run directory and result.json, a measured rate named as
# fixed replies/s (qps_kind fixed_achieved, not an SLA bound), the CPUs it used (2 for
# each: one unpinned instance may use every CPU, two instances one each), QPS per CPU =
# QPS / CPUs, a p95, and IPC and L1i MPKI either numbers or "unsupported: why" (this host
# has no counters: never 0); summary.md's reading compares the two instances with one on
# the same CPUs and threads within one instance. Then bad input exits 2 naming the flag,
# and SIGTERM during the first run stops it (its result interrupted, no rate reported for
# its cut window), runs nothing more (the second configuration reports nothing), writes
# the report with status interrupted and exits 143 with no process left. Last, a run
# killed outright (SIGKILL) is reported as killed by that signal, with no rate.
FL_WATCHDOG_S=${FL_WATCHDOG_S:-240}
. "$(dirname "$0")/common.inc"

F=$B/frontload
[ -x "$F" ] || fail "$F not built"
[ -x "$B/frontload-measure" ] || fail "$B/frontload-measure not built"
command -v jq >/dev/null 2>&1 || fail "jq not installed"

# 1. --help names its units, the grid and the figures' sources.
"$F" scale --help >"$T/help" 2>&1 || fail "scale --help exited $?"
for w in 'requests/s' 'qps_per_cpu' 'unsupported: <why>' 'fill' '--ranker-threads LIST' \
	'exit status'; do
	grep -q -- "$w" "$T/help" || fail "scale --help does not mention $w"
done

# 2. The grid.
O=$T/sc
timeout 200 "$F" scale --instances 1,2 --ranker-threads fill,1 --run-args "--qps 3 --duration 2" \
	--leaf-args "--active-copies 1" --out "$O" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 0 ] || fail "scale exited $rc: $(tail -n 4 "$T/err")"
for f in scale.csv scale.json summary.md report.html; do
	[ -s "$O/$f" ] || fail "scale wrote no $f"
done
J=$O/scale.json
q() { jq -r "$1" "$J"; }
assert_eq "$(q '[.configurations[].name] | join(",")')" "i1-t2,i1-t1,i2-t1" "configurations"
assert_eq "$(q .status)" complete "scale.json status"
for i in 0 1 2; do
	c=".configurations[$i]"
	n=$(q "$c.name")
	[ -s "$O/$(q "$c.run_dir")/result.json" ] || fail "$n: no result.json in $(q "$c.run_dir")"
	assert_eq "$(q "$c.qps_kind")" fixed_achieved "$n: qps_kind"
	assert_eq "$(q "$c.exit_status")" 0 "$n: frontload run's exit status"
	assert_eq "$(q "$c.cpus")" 2 "$n: CPUs used"
	jq -e "$c | (.qps > 0) and (.p95_ms > 0) and ((.qps_per_cpu - .qps / .cpus) | fabs < 1e-9)" \
		"$J" >/dev/null || fail "$n: qps, p95 or qps_per_cpu wrong: $(jq -c "$c" "$J")"
	for m in ipc l1i_mpki; do
		v=$(q "$c.$m")
		case $v in
		'unsupported: '?*) ;;
		0 | 0.0 | null | '') fail "$n: $m is $v (not measured must say unsupported)" ;;
		*[!0-9.e+-]*) fail "$n: $m is neither a number nor unsupported: $v" ;;
		esac
	done
done
assert_eq "$(q '.configurations[0].fill')" true "i1-t2 came from fill"
assert_eq "$(q '.configurations[0].instances * .configurations[0].ranker_threads')" 2 "i1-t2 threads"
grep -q '^| i2-t1 | 2 | 1 (fill) | 2 |' "$O/summary.md" || fail "summary.md has no i2-t1 row"
grep -q '^- 2 small instances against one large on the same 2 CPUs (2 ranker threads in all): i2-t1 [0-9.]* requests/s against i1-t2 ' \
	"$O/summary.md" || fail "summary.md does not compare i2-t1 with i1-t2: $(grep '^- ' "$O/summary.md")"
grep -q '^- 1 instance, 2 against 1 ranker threads each' "$O/summary.md" ||
	fail "summary.md does not compare threads within one instance"
head -n 1 "$O/report.html" | grep -q '^<!DOCTYPE html>$' || fail "report.html is not an HTML page"
[ "$(wc -l <"$O/scale.csv")" = 4 ] || fail "scale.csv: $(wc -l <"$O/scale.csv") lines, want a header and 3 rows"

# 3. Bad input: exit 2, the flag named.
for bad in "--instances 0" "--instances 1,x" "--ranker-threads most" "--run-args --out=x" \
	"--bogus"; do
	# shellcheck disable=SC2086
	"$F" scale $bad --out "$T/bad" >"$T/bo" 2>"$T/be"
	brc=$?
	assert_eq "$brc" 2 "scale $bad: exit status"
	grep -q 'frontload-measure: ' "$T/be" || fail "scale $bad: no message: $(cat "$T/be")"
done
"$F" scale --run-args "--instances 3" --out "$T/bad" >"$T/bo" 2>"$T/be"
assert_eq "$?" 2 "scale --run-args \"--instances 3\": exit status"
grep -q -- '--instances is scale' "$T/be" || fail "no message naming --instances: $(cat "$T/be")"

# scale_bg OUT THREADS N: scale with 60 s fixed-rate runs in the background (its pid in
# sp, output in $T/outN, $T/errN), returned once the first run has written result.json.
scale_bg() {
	"$F" scale --instances 1 --ranker-threads "$2" --run-args "--qps 3 --duration 60" \
		--leaf-args "--active-copies 1" --out "$1" >"$T/out$3" 2>"$T/err$3" &
	sp=$!
	FL_PIDS="$FL_PIDS $sp"
	i=0
	until [ -s "$1/runs/i1-t1/result.json" ]; do
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "the first run wrote no result.json: $(tail -n 3 "$T/err$3")"
		sleep 0.1
	done
}

# 4. SIGTERM during the first run.
O2=$T/sc2
scale_bg "$O2" 1,2 2
sleep 1
kill -TERM "$sp"
wait "$sp"
trc=$?
forget "$sp"
assert_eq "$trc" 143 "scale's exit status after SIGTERM"
J=$O2/scale.json
assert_eq "$(q .status)" interrupted "interrupted scale.json status"
st0=$(q '.configurations[0].status')
[ "$st0" = interrupted ] || fail "the running configuration's status: got $st0, want" \
	"interrupted (exit $(q '.configurations[0].exit_status'): $(q '.configurations[0].why'));" \
	"its log ends: $(tail -n 5 "$O2/runs/i1-t1.log" | tr '\n' '|')"
# Its 60 s window was cut short: no rate measured, so none reported (null, not 0).
assert_eq "$(q '.configurations[0].qps')" null "the interrupted configuration's qps"
assert_eq "$(q '.configurations[1].qps')" null "the configuration not run: qps"
q '.configurations[1].ipc' | grep -q '^unsupported: not run' ||
	fail "the configuration not run: ipc $(q '.configurations[1].ipc')"
q '.configurations[1].why' | grep -q '^not run: scale was interrupted' ||
	fail "the second configuration: $(q '.configurations[1]')"
# Its progress line says no rate was measured, with no NaN or 0 in its place.
grep -q '\[1/2\] i1-t1: interrupted, no rate measured, exit 143' "$T/err2" ||
	fail "no progress line naming the cut run: $(grep '\[1/2\]' "$T/err2")"
! grep -qiw 'nan' "$T/err2" || fail "a NaN in scale's progress: $(grep -iw nan "$T/err2")"
sleep 0.5
left=$(pgrep -f -- "$O2/runs" | tr '\n' ' ')
[ -z "$left" ] || fail "processes left after SIGTERM: $left"

# 5. A run killed outright (SIGKILL: its result.json left saying running) is reported as
# killed, by which signal, with no rate; scale goes on and exits non-zero.
O3=$T/sc3
scale_bg "$O3" 1 3
rp=$(pgrep -f -- "run --instances 1 .*--out $O3/runs/i1-t1")
[ -n "$rp" ] || fail "no frontload run process for $O3/runs/i1-t1"
kill -KILL $rp
wait "$sp"
krc=$?
forget "$sp"
# Its mock, leaf and driver lost their parent: stop them here.
pkill -TERM -f -- "$O3/runs" 2>/dev/null
J=$O3/scale.json
[ "$krc" != 0 ] || fail "scale exited 0 with its only run killed"
assert_eq "$(q '.configurations[0].exit_status')" -1 "the killed run's exit_status"
assert_eq "$(q '.configurations[0].qps')" null "the killed run's qps"
q '.configurations[0].why' | grep -q '^frontload run was killed by signal 9 (Killed)' ||
	fail "the killed run's why: $(q '.configurations[0].why')"

J=$O/scale.json
echo "scale: $(q '[.configurations[] | "\(.name) \(.qps) qps (\(.qps_per_cpu)/CPU, p95 \(.p95_ms | floor) ms)"] | join(", ")'); IPC $(q '.configurations[0].ipc' | cut -c1-11); bad input exit 2; SIGTERM 143, nothing left; a killed run named ($krc)"

#!/bin/sh
# search_repeat.sh: does the search of `frontload run` converge, and repeat? Prints figures;
# asserts nothing (exit 0 whatever the runs found). Issue 11 item 13's goals: `--quick`
# converges within 2 minutes on the --copies=2 build and three runs with the same seed
# agree within 5% on sla_bound_qps; the default search converges within 10 minutes and
# three runs agree within 3%.
# Usage: tests/bench/search_repeat.sh [--build DIR] [--runs N] [--default] [-- RUN ARGS]
#   --build DIR   the build directory holding frontload (default: build)
#   --runs N      runs, same seed (default 3)
#   --default     the default search instead of --quick (about 10 minutes a run)
#   --keep DIR    keep each run's directory and log under DIR (default: removed)
#   --reference QPS  before each run, hold QPS (below every run's capacity) for 10 s in
#                 frontload run's fixed mode (--quick settings, whatever the mode) and
#                 print the host CPU % it took: the same work at the same rate, so its
#                 spread across runs is the host's own drift, against which the spread of
#                 sla_bound_qps can be read (a 2-core VM here moved by a fifth in an hour)
#   --host-speed S   before each run, time a fixed single-threaded CPU workload for S
#                 seconds (tests/bench/host_speed.sh: ns per call, min..max) with nothing
#                 of frontload running: the host's own speed, free of the leaf
#   -- ARGS       more `frontload run` flags (e.g. --seed 7)
# Prints one line per run (seconds, exit status, converged, sla_bound_qps or
# lower_bound_qps, capacity estimate, steps), its final windows (rate, verdict, host CPU,
# when a miss was certain and the window stopped), the leaf's stage CPU in the last final
# window (ms per request, and cores: stage CPU seconds per second) and a summary: the
# spread of sla_bound_qps, (max - min) / min, against the goal, and the spread of those
# cores, what the search landed on in a unit the host's speed cancels from (a slower host
# costs more CPU per request and gives a lower bound at the same cores). The machine's
# load is printed too: runs beside other work are noisy, and the line says so.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build
runs=3
mode=--quick
goal_s=120
goal_pct=5
keep=""
ref=""
hspeed=""
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--default) mode=""; goal_s=600; goal_pct=3; shift ;;
	--keep) keep=$2; shift 2 ;;
	--reference) ref=$2; shift 2 ;;
	--host-speed) hspeed=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
	*) echo "search_repeat.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
command -v jq >/dev/null 2>&1 || { echo "search_repeat.sh: needs jq" >&2; exit 2; }
build=$(cd "$build" && pwd) || exit 2
run=$build/frontload
[ -x "$run" ] || { echo "search_repeat.sh: $run not built" >&2; exit 2; }
if [ -n "$keep" ]; then
	mkdir -p "$keep" && root=$(cd "$keep" && pwd) || exit 2
else
	root=$(mktemp -d /tmp/frontload-search.XXXXXX)
	trap 'rm -rf "$root"' EXIT
fi
copies=$(jq -r '.copies // "?"' "$build/config.json" 2>/dev/null || echo "?")
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the runs"
echo "build: $build (--copies=$copies); runs: $runs x frontload run ${mode:-(default)} $*"
bounds=""
all_conv=1
max_s=0
i=1
while [ "$i" -le "$runs" ]; do
	out=$root/run$i
	if [ -n "$ref" ]; then
		set +e
		(cd "$root" && "$run" run --quick --qps "$ref" --duration 10 --out "$root/ref$i") \
			>"$root/ref$i.log" 2>&1
		set -e
		rj=$root/ref$i/result.json
		if [ -s "$rj" ]; then
			c=$(jq -r '.host_cpu_util_pct // "null"' "$rj")
			echo "reference $i: $ref qps for 10 s: host CPU $c%, achieved" \
				"$(jq -r '.final_achieved_qps // "null"' "$rj") qps, p95 $(jq -r '.p95_ms // "null"' "$rj") ms"
			[ "$c" != null ] && refs="${refs:-} $c"
		else
			echo "reference $i: no result.json ($(tail -n 1 "$root/ref$i.log"))"
		fi
	fi
	if [ -n "$hspeed" ]; then
		h=$(sh "$src/tests/bench/host_speed.sh" --build "$build" --seconds "$hspeed" --quiet) ||
			{ echo "search_repeat.sh: host_speed.sh failed" >&2; exit 2; }
		echo "host speed $i: ${h#host speed }"
		hs="${hs:-} $(echo "$h" | sed -n 's/.*median \([0-9.]*\),.*/\1/p')"
	fi
	t0=$(date +%s)
	set +e
	# shellcheck disable=SC2086
	(cd "$root" && "$run" run $mode --out "$out" "$@") >"$root/run$i.log" 2>&1
	rc=$?
	set -e
	took=$(($(date +%s) - t0))
	[ "$took" -gt "$max_s" ] && max_s=$took
	r=$out/result.json
	if [ ! -s "$r" ]; then
		echo "run $i: ${took} s, exit $rc, no result.json"
		all_conv=0
		i=$((i + 1))
		continue
	fi
	line=$(jq -r '"converged \(.converged), sla_bound_qps \(.sla_bound_qps // "null"), " +
		"lower_bound_qps \(.lower_bound_qps // "null"), capacity \(.search.capacity_qps // "null"), " +
		"\(.steps | length) steps (\([.steps[].phase] | join(" "))), final p95 \(.p95_ms // "null") ms"' "$r")
	echo "run $i: ${took} s, exit $rc, $line"
	# Each final window: its rate, verdict, host CPU, and when its miss was certain.
	echo "  finals: $(jq -r '[.steps[] | select(.phase == "final") | "\(.requested_qps) " +
		"\(.verdict) (host CPU \(.host_cpu_util_pct // "?" | if type == "number" then
		floor else . end)%" + ([.instances[].miss_stop // empty | select(.stopped) |
		", stopped after \(.stopped_at_s | floor) s"] | first // "") + ")"] |
		join(", ")' "$r")"
	# The leaf's stage CPU over the last final window, summed over instances.
	cores=$(jq -r '[.instances[].leaf_stats.final_window // empty | select(.interval_s > 0)] |
		if length == 0 then "" else
		"\([.[] | [.stages[].cpu_ns] | add] | add) \([.[].requests.replied] | add) \(.[0].interval_s)" end' "$r")
	if [ -n "$cores" ]; then
		read -r cns nrep ivs <<EOF
$cores
EOF
		cores=$(awk -v c="$cns" -v t="$ivs" 'BEGIN { printf "%.3f", c / t / 1e9 }')
		echo "  leaf stage CPU in the last final window: $(awk -v c="$cns" -v n="$nrep" 'BEGIN {
			printf "%.3f", (n > 0 ? c / n / 1e6 : 0) }') ms per request, $cores cores"
	fi
	b=$(jq -r '.sla_bound_qps // empty' "$r")
	if [ -n "$b" ]; then
		bounds="$bounds $b"
		[ -n "$cores" ] && corel="${corel:-} $cores"
	else
		all_conv=0
		echo "  why: $(jq -r .converged_reason "$r")"
	fi
	i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg) (the runs' own leaf, mock and driver threads count in it; the figure before the runs says whether other work shared the CPUs)"
if [ -n "$bounds" ]; then
	echo "$bounds" | tr ' ' '\n' | awk -v goal="$goal_pct" -v n="$runs" 'NF {
		v[++k] = $1; if (k == 1 || $1 < lo) lo = $1; if (k == 1 || $1 > hi) hi = $1 }
		END { printf "sla_bound_qps over %d converged run(s) of %d: min %.1f, max %.1f, spread %.1f%% (goal <= %g%%)\n",
			k, n, lo, hi, 100 * (hi - lo) / lo, goal }'
fi
if [ -n "${corel:-}" ]; then
	echo "$corel" | tr ' ' '\n' | awk 'NF { if (k++ == 0 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
		END { printf "leaf stage CPU at the bound (converged runs): %.3f..%.3f cores, spread %.1f%%: where the search landed, the host'"'"'s speed cancelled\n", lo, hi, 100 * (hi - lo) / lo }'
fi
if [ -n "${hs:-}" ]; then
	echo "$hs" | tr ' ' '\n' | awk 'NF { if (k++ == 0 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
		END { printf "host speed before the runs (median ns per call): %.1f..%.1f, spread %.1f%%\n", lo, hi, 100 * (hi - lo) / lo }'
fi
if [ -n "${refs:-}" ]; then
	echo "$refs" | tr ' ' '\n' | awk -v q="$ref" 'NF { if (k++ == 0 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
		END { printf "host reference (%s qps): host CPU %.1f..%.1f%%, spread %.1f%% of the lower\n", q, lo, hi, 100 * (hi - lo) / lo }'
fi
echo "all converged: $([ "$all_conv" = 1 ] && echo yes || echo no); longest run ${max_s} s (goal <= ${goal_s} s)"

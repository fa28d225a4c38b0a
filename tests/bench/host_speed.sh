#!/bin/sh
# host_speed.sh: how steady is this host's speed? Times one fixed, single-threaded CPU
# workload again and again and prints how much its time moves. Asserts nothing (exit 0
# whatever it found). A repeatability goal for a figure the host's speed sets (the
# search's sla_bound_qps, a latency) cannot be shown on a host that moves more than the
# goal by itself: read search_repeat.sh's spreads against this one.
# Usage: tests/bench/host_speed.sh [--build DIR] [--seconds S] [--requests N] [--quiet]
#   --build DIR    the build directory holding frontload-extract-bench (default: build)
#   --seconds S    sample for about S seconds (default 120)
#   --requests N   requests per sample (default 1000: about 3 s at 300 ns per call)
#   --quiet        the summary line only
# The workload: frontload-extract-bench --active-copies 1 --seed 1 (699 functions, each
# variant's first copy; the same 20 stories x 500 calls per request every time); its
# figure is ns per call (wall clock of the measured requests / calls), so anything else
# running on the machine shows as a slower host: run it idle. Prints each sample (UTC
# time, ns per call), then
#   host speed over K samples of N requests in S s: ns per call min, median, max,
#   spread (max - min) / min, coefficient of variation (sd / mean)
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build
seconds=120
requests=1000
quiet=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--requests) requests=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
	*) echo "host_speed.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case $seconds in '' | *[!0-9]*) echo "host_speed.sh: --seconds wants whole seconds, got '$seconds'" >&2; exit 2 ;; esac
case $requests in '' | *[!0-9]*) echo "host_speed.sh: --requests wants a count, got '$requests'" >&2; exit 2 ;; esac
bench=$(cd "$build" 2>/dev/null && pwd)/frontload-extract-bench || true
[ -x "$bench" ] || { echo "host_speed.sh: no frontload-extract-bench in '$build'" >&2; exit 2; }
t0=$(date +%s)
samples=""
while :; do
	ns=$("$bench" --active-copies 1 --seed 1 --requests "$requests" --warmup 20 2>&1 |
		awk '/^ns per call:/ { print $4 }')
	[ -n "$ns" ] || { echo "host_speed.sh: frontload-extract-bench printed no ns per call" >&2; exit 1; }
	samples="$samples $ns"
	[ "$quiet" = 1 ] || echo "$(date -u +%T) $ns ns per call"
	[ $(($(date +%s) - t0)) -lt "$seconds" ] || break
done
echo "$samples" | tr ' ' '\n' | sort -n | awk -v n="$requests" -v s="$(($(date +%s) - t0))" 'NF {
	v[++k] = $1; sum += $1; sq += $1 * $1 }
	END { m = sum / k; sd = k > 1 ? sqrt((sq - k * m * m) / (k - 1)) : 0
		printf "host speed over %d samples of %d requests in %d s: ns per call min %.1f, median %.1f, max %.1f, spread %.1f%%, cv %.1f%%\n",
			k, n, s, v[1], v[int((k + 1) / 2)], v[k], 100 * (v[k] - v[1]) / v[1], 100 * sd / m }'

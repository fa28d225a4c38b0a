#!/bin/sh
# fuzz_rate.sh: executions per CPU second of tests/fuzz's libFuzzer targets. Each target is
# built by tests/fuzz/run.sh (FUZZ_SECONDS=0), then run twice with a fixed seed on a scratch
# copy of its committed corpus: once loading the corpus only (-runs=0), once loading it and
# mutating to FUZZ_RATE_RUNS executions. CPU seconds (user + sys) rather than wall time, so a
# shared, loaded host gives the same figure; the mutation rate is the second run's extra
# executions over its extra CPU seconds.
#
# Usage: sh tests/bench/fuzz_rate.sh [BUILD-DIR]   (default /tmp/frontload-fuzz-rate)
#   FUZZ_TARGETS    targets (default: pattern sampler)
#   FUZZ_RATE_RUNS  executions per target, corpus load included (default 20000)
#   FUZZ_RATE_BUILD 0: reuse BUILD-DIR's binaries from an earlier run (default 1: build)
#   FUZZ_RATE_TIMEOUT  libFuzzer's -timeout, wall seconds per input (default 25, as the
#                   campaign's; a loaded host may need more)
# Compare two trees by running each one's copy of this script into its own BUILD-DIR.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/frontload-fuzz-rate}
runs=${FUZZ_RATE_RUNS:-20000}
targets=${FUZZ_TARGETS:-"pattern sampler"}
# run.sh fails when a regression replay fails (a timeout on a slow tree): rates are still
# measured, from whatever binaries it built.
[ "${FUZZ_RATE_BUILD:-1}" = 0 ] ||
	FUZZ_SECONDS=0 FUZZ_TARGETS=$targets sh "$src/tests/fuzz/run.sh" "$out" >"$out.build.log" 2>&1 ||
	echo "run.sh failed: $(grep -E 'FAILED|failed' "$out.build.log" | head -n 3) (log $out.build.log)"
# The campaign's input size caps (run.sh's maxlen_TARGET), so rates compare with it.
maxlen() { sed -n "s/.*maxlen_$1=\([0-9]*\).*/\1/p" "$src/tests/fuzz/run.sh" | head -n 1; }

# fuzz T N LOG: T for N executions (0: corpus load only) on a fresh copy; prints
# "EXECUTIONS CPU-SECONDS".
fuzz() {
	work=$out/rate/$1
	rm -rf "$work" && mkdir -p "$work" || exit 1
	ml=$(maxlen "$1")
	dict=
	[ -f "$src/tests/fuzz/dict/$1.dict" ] && dict=-dict=$src/tests/fuzz/dict/$1.dict
	/usr/bin/time -f '%U %S' -o "$3.time" "$out/$1" -seed=1 -runs="$2" -timeout="${FUZZ_RATE_TIMEOUT:-25}" \
		-rss_limit_mb=2048 -print_final_stats=1 ${ml:+-max_len=$ml} $dict "$work" \
		"$src/tests/fuzz/corpus/$1" >"$3" 2>&1
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$3")
	# time(1) puts "Command exited with non-zero status N" first when the run failed.
	grep -q 'non-zero' "$3.time" && echo "$1: $(grep -m 1 'SUMMARY\|ERROR' "$3") (log $3)" >&2
	echo "${n:-0} $(tail -n 1 "$3.time" | awk '{ print $1 + $2 }')"
}

printf '%-9s %12s %10s %12s %10s %12s\n' target load_execs load_cpu_s mutate_execs \
	mutate_cpu_s execs/cpu_s
for t in $targets; do
	[ -x "$out/$t" ] || { printf '%-9s not built\n' "$t"; continue; }
	mkdir -p "$out/rate" || exit 1
	set -- $(fuzz "$t" 0 "$out/rate/$t.load.log")
	ln=$1 lc=$2
	set -- $(fuzz "$t" "$runs" "$out/rate/$t.log")
	printf '%-9s %12s %10s %12s %10s %12s\n' "$t" "$ln" "$lc" $(($1 - ln)) \
		"$(echo "$2 $lc" | awk '{ printf "%.1f", $1 - $2 }')" \
		"$(echo "$1 $ln $2 $lc" | awk '{ d = $3 - $4; print (d > 0) ? int(($1 - $2) / d) : "-" }')"
done

#!/bin/sh
# run.sh: builds tests/fuzz's libFuzzer targets with clang, replays their regressions, then
# fuzzes each for FUZZ_SECONDS and prints executions, exec/s and crashes per target; or, in
# campaign mode, fuzzes each to FUZZ_RUNS executions and grows the committed corpus.
#
# Usage: sh tests/fuzz/run.sh [--campaign] [BUILD-DIR]   (default /tmp/frontload-fuzz)
#   FUZZ_SECONDS  fuzzing time per target (default 60; 0 = build and replay only)
#   FUZZ_TARGETS  targets to run (default: all of them, listed below)
# Campaign mode (--campaign or FUZZ_CAMPAIGN=1):
#   FUZZ_RUNS      executions per target (default 1000000), over FUZZ_JOBS libFuzzer jobs
#                  (default 2: both cores) that share one working corpus, in slices of
#                  -runs=remaining/jobs until the count is reached (a crash ends a slice
#                  early; the next slice goes on from the grown corpus)
#   FUZZ_MAX_TIME  seconds per target at most (default 3600): a slow target stops there
#                  and the table shows how far it got
#   At the end the working corpus is merged (-merge=1: only inputs that add coverage)
#   into tests/fuzz/corpus/TARGET, and a table prints per target: executions, exec/s over
#   the wall time, corpus files and KB before and after, libFuzzer's cov:/ft: over the
#   committed corpus before and after, and crash artifacts found.
# A crash stops that target's run; its input is left under BUILD-DIR/artifacts/TARGET/.
# Copy it to tests/fuzz/regressions/TARGET/ once fixed: regressions replay first, every run.
# The same sources also build with gcc into BUILD-DIR/replay/TARGET (replay_main.c instead of
# libFuzzer), which replays the regressions and the seed corpus as `ninja test` does.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
campaign=${FUZZ_CAMPAIGN:-0}
[ "${1:-}" = --campaign ] && { campaign=1; shift; }
out=${1:-/tmp/frontload-fuzz}
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"frame mock sampler pattern cgparse disasm cli targets reply result"}
fz=$src/tests/fuzz
mkdir -p "$out/gen" "$out/replay" || exit 1
out=$(cd "$out" && pwd)

# clang, or Debian's clang-14 (the package .ci/run installs has no plain "clang").
fuzzcc=${FUZZ_CC:-$(command -v clang || command -v clang-14)} ||
	{ echo "run.sh: no clang or clang-14 on PATH (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }
warn="-Wall -Wextra -Wshadow -Wmissing-prototypes"
fuzzflags="-std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
-fno-sanitize-recover=undefined $warn -Wno-unknown-attributes"
replayflags="-std=gnu11 -g -O1 $warn"
incs="-I$fz -I$src/runtime/common -I$src/runtime/request -I$src/runtime/leaf -I$src/runtime/mock -I$src/runtime/extract \
-I$src/runtime/driver -I$src/runtime/run \
-I$src/runtime/measure -I$src/templates -I$src/generator -I$out/gen $(pkg-config --cflags openblas) \
-DFL_SRC_DATA_DIR=\"$src/runtime/data\""
libs="$(pkg-config --libs libevent libzstd libprotobuf-c jansson openssl) -lm -lpthread -ldl"

# Sources per target: the harness, then the project files it drives (paths under $src;
# "proto" is protoc-c's frontload.pb-c.c).
srcs_frame="tests/fuzz/fuzz_frame.c runtime/common/wire.c runtime/common/zcodec.c
	runtime/common/corpus.c runtime/common/corpus_text.c runtime/common/corpus_records.c
	runtime/common/murmur.c runtime/common/sampler.c
	runtime/request/pipeline.c runtime/request/model_inputs.c runtime/request/overheads.c runtime/request/dlrm.c
	runtime/request/story_proc.c runtime/request/session.c runtime/request/stages.c runtime/extract/dispatch.c
	templates/helpers.c proto"
srcs_mock="tests/fuzz/fuzz_mock.c runtime/mock/mock_methods.c runtime/mock/mock_shape.c
	runtime/common/wire.c runtime/common/zcodec.c proto"
srcs_sampler="tests/fuzz/fuzz_sampler.c runtime/common/sampler.c"
srcs_pattern="tests/fuzz/fuzz_pattern.c generator/pattern.c generator/expr.c
	generator/expand.c generator/util.c runtime/common/osfile.c"
srcs_cgparse="tests/fuzz/fuzz_cgparse.c runtime/measure/cgparse.c"
srcs_disasm="tests/fuzz/fuzz_disasm.c runtime/measure/disasm.c runtime/common/process.c"
srcs_cli="tests/fuzz/fuzz_cli.c runtime/common/cli.c"
# fuzz_reply.c includes runtime/driver/driver_engine.c (its reply reader is static).
srcs_reply="tests/fuzz/fuzz_reply.c runtime/driver/driver_report.c runtime/common/reqgen.c
	runtime/driver/schedule.c runtime/common/hist.c runtime/common/hist_json.c
	runtime/common/wire.c runtime/common/zcodec.c runtime/common/sampler.c runtime/common/corpus.c
	runtime/common/corpus_text.c runtime/common/corpus_records.c
	runtime/common/tls.c runtime/common/paths.c runtime/common/osfile.c
	runtime/common/net.c proto"
srcs_result="tests/fuzz/fuzz_result.c runtime/run/run_result.c runtime/run/run_obs.c
	runtime/run/run_window.c runtime/run/run_search.c
	runtime/run/run_host.c runtime/run/run_procs.c runtime/common/process.c
	runtime/common/osfile.c runtime/run/run_clock.c
	runtime/common/hist.c runtime/common/hist_json.c"
srcs_targets="tests/fuzz/fuzz_targets.c runtime/measure/targets.c runtime/common/paths.c"
# Extra link flags: the DLRM stage needs a BLAS; fuzz_pattern.c takes over the
# generator's fatal() and counts its expression evaluations.
# Campaign input size caps (-max_len): short inputs keep the committed corpus small and
# the rate up; the sampler's must hold a whole rpc_dist.json (41 KB).
maxlen_cgparse=1024 maxlen_disasm=1024 maxlen_mock=2048 maxlen_frame=4096
maxlen_pattern=4096 maxlen_sampler=48000 maxlen_cli=512 maxlen_targets=8192 maxlen_reply=2048
maxlen_result=8192
ldx_frame=$(pkg-config --libs openblas)
ldx_reply=$(pkg-config --libs libevent_openssl libevent_pthreads)
ldx_pattern="-Wl,--wrap=fatal -Wl,--wrap=expr_eval"

protoc-c --c_out="$out/gen" --proto_path="$src/runtime/common" \
	"$src/runtime/common/frontload.proto" || exit 1

# build KIND TARGET: compile TARGET's sources and link them, KIND fuzz (clang + libFuzzer)
# or replay (gcc + replay_main.c). Generator sources get gen_alloc.h forced in.
build() {
	kind=$1 t=$2
	if [ "$kind" = fuzz ]; then cc=$fuzzcc flags=$fuzzflags bin=$out/$t
	else cc=gcc flags=$replayflags bin=$out/replay/$t; fi
	odir=$out/obj/$kind/$t
	mkdir -p "$odir" || return 1
	objs=
	list=$(eval echo \"\$srcs_$t\")
	[ "$kind" = replay ] && list="$list tests/fuzz/replay_main.c"
	for s in $list; do
		case $s in
		proto) path=$out/gen/frontload.pb-c.c ;;
		*) path=$src/$s ;;
		esac
		extra=
		case $s in generator/*) extra="-include $fz/gen_alloc.h" ;; esac
		o=$odir/$(basename "$path" .c).o
		# shellcheck disable=SC2086
		$cc $flags $incs $extra -c "$path" -o "$o" || return 1
		objs="$objs $o"
	done
	ldx=$(eval echo \"\${ldx_$t:-}\")
	# shellcheck disable=SC2086
	$cc $flags -o "$bin" $objs $ldx $libs
}

# Regressions and seeds through the gcc replay binaries first: a plain-C check.
echo "== build and replay (gcc, replay_main.c)"
for t in $targets; do
	build replay "$t" || { echo "replay build of $t failed"; exit 1; }
	"$out/replay/$t" "$fz/regressions/$t" "$fz/corpus/$t" ||
		{ echo "replay of $t failed"; exit 1; }
done

echo "== build (clang -fsanitize=fuzzer,address,undefined)"
for t in $targets; do
	build fuzz "$t" || { echo "fuzz build of $t failed"; exit 1; }
done

# replay_regressions TARGET: each regression file on its own through the fuzz binary
# (a timeout found by fuzzing fails again if it takes over 25 s); sets nreg and regfail.
replay_regressions() {
	nreg=0 regfail=0
	for r in "$fz/regressions/$1"/*; do
		[ -f "$r" ] || continue
		nreg=$((nreg + 1))
		if ! "$out/$1" -timeout=25 "$r" >"$out/logs/$1.replay" 2>&1; then
			regfail=$((regfail + 1))
			echo "REGRESSION FAILED: $r (log $out/logs/$1.replay)"
		fi
	done
}

# job_stats LOG: "EXECUTIONS" of one libFuzzer log: its final stats, or the last status
# line when it stopped on a crash.
job_stats() {
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -n 1)
	[ -n "$n" ] || n=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$1" | tail -n 1)
	echo "${n:-0}"
}

# inited DIR: "COV FT" once libFuzzer has run every file of DIR (-runs=0), or "- -".
inited() {
	"$bin" -runs=0 -rss_limit_mb=2048 "$1" >"$log.inited" 2>&1
	line=$(grep 'INITED' "$log.inited" | tail -n 1)
	c=$(printf '%s' "$line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	f=$(printf '%s' "$line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	echo "${c:--} ${f:--}"
}

nfiles() { find "$1" -type f ! -name .gitkeep | grep -c .; }
nbytes() { find "$1" -type f ! -name .gitkeep -exec cat {} + | wc -c; }
kbytes() { echo $((($(nbytes "$1") + 1023) / 1024)); }

# commit_corpus: merge what the campaign found into tests/fuzz/corpus/TARGET. The named
# seeds stay; the machine-named inputs (40 hex digits) are re-minimised: -merge=1 into a
# copy of the seeds keeps only inputs adding coverage, and those go in smallest first up to
# FUZZ_CORPUS_KB (default 300) so the committed corpus stays small. The whole working
# corpus stays in BUILD-DIR/campaign/TARGET for the next campaign.
commit_corpus() {
	mdir=$out/merged/$t
	rm -rf "$mdir" && mkdir -p "$mdir" || exit 1
	find "$cdir" -maxdepth 1 -type f ! -name .gitkeep | grep -Ev '/[0-9a-f]{40}$' |
		while read -r f; do cp "$f" "$mdir/"; done
	"$bin" -merge=1 -rss_limit_mb=2048 -timeout=25 $maxlen "$mdir" "$cdir" "$work" \
		>"$log.merge" 2>&1 || { echo "merge of $t failed (log $log.merge)"; return; }
	find "$cdir" -maxdepth 1 -type f | grep -E '/[0-9a-f]{40}$' | while read -r f; do
		rm -f "$f"; done
	capb=$((${FUZZ_CORPUS_KB:-300} * 1024)) sum=$(nbytes "$cdir") dropped=0
	for f in $(find "$mdir" -maxdepth 1 -type f | grep -E '/[0-9a-f]{40}$' |
		xargs -r ls -Sr); do
		sz=$(wc -c <"$f")
		if [ $((sum + sz)) -le "$capb" ]; then cp "$f" "$cdir/"; sum=$((sum + sz))
		else dropped=$((dropped + 1)); fi
	done
	[ "$dropped" -gt 0 ] && echo "  corpus cap: $dropped merged inputs not committed"
}

# campaign TARGET: fuzz to FUZZ_RUNS executions in slices, merge, append a table row.
campaign() {
	t=$1 bin=$out/$1 cdir=$fz/corpus/$1
	log=$out/logs/$t.campaign
	art=$out/artifacts/$t
	work=$out/campaign/$t
	mkdir -p "$out/logs" "$art" "$work" "$cdir" || exit 1
	dict=
	[ -f "$fz/dict/$t.dict" ] && dict=-dict=$fz/dict/$t.dict
	maxlen=$(eval echo \"\${maxlen_$t:-}\")
	[ -n "$maxlen" ] && maxlen=-max_len=$maxlen
	fb=$(nfiles "$cdir") kb=$(kbytes "$cdir")
	set -- $(inited "$cdir")
	covb=$1 ftb=$2
	stamp=$out/logs/$t.stamp
	touch "$stamp"
	sleep 1
	execs=0 slices=0 start=$(date +%s)
	while [ "$execs" -lt "$runs" ]; do
		left_t=$((maxtime - ($(date +%s) - start)))
		[ "$left_t" -gt 0 ] || break
		per=$(((runs - execs + jobs - 1) / jobs))
		slices=$((slices + 1))
		sdir=$out/logs/$t.slice$slices
		rm -rf "$sdir" && mkdir -p "$sdir" || exit 1
		# libFuzzer writes each job's output to fuzz-N.log in the current directory.
		(cd "$sdir" && "$bin" -jobs="$jobs" -workers="$jobs" -runs="$per" \
			-max_total_time="$left_t" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="$art/" $dict $maxlen "$work" "$cdir" >master.log 2>&1)
		got=0
		for l in "$sdir"/fuzz-*.log; do
			[ -f "$l" ] && got=$((got + $(job_stats "$l")))
		done
		execs=$((execs + got))
		echo "  slice $slices: $got executions ($execs of $runs)"
		[ "$got" -gt 0 ] || break  # nothing ran: do not spin
	done
	secs_run=$(($(date +%s) - start))
	commit_corpus
	fa=$(nfiles "$cdir") ka=$(kbytes "$cdir")
	set -- $(inited "$cdir")
	cova=$1 fta=$2
	# crash-, leak-, timeout- and oom- artifacts are findings; slow-unit- ones (over 10 s
	# under ASan on a loaded host) are listed but not counted.
	find "$art" -type f -newer "$stamp" -name 'slow-unit-*' | sed 's/^/  slow input (not a crash): /'
	crashes=$(find "$art" -type f -newer "$stamp" ! -name 'slow-unit-*' | grep -c .)
	[ "$crashes" -gt 0 ] && { failed=1; find "$art" -type f -newer "$stamp" ! -name 'slow-unit-*' |
		sed 's/^/  crash: /'; }
	[ "$regfail" -gt 0 ] && failed=1
	rate=$((execs / (secs_run > 0 ? secs_run : 1)))
	# Each row also prints as its target ends, so an interrupted campaign keeps them.
	row=$(printf '%-9s %5s %11s %7s %6s %11s %11s %11s %11s %7s' "$t" \
		"$nreg/$regfail" "$execs" "$rate" "$secs_run" "$fb>$fa" "${kb}K>${ka}K" \
		"$covb>$cova" "$ftb>$fta" "$crashes")
	echo "  row: $row"
	table="$table$row
"
}

table=
failed=0
mkdir -p "$out/logs" || exit 1
if [ "$campaign" = 1 ]; then
	runs=${FUZZ_RUNS:-1000000} jobs=${FUZZ_JOBS:-2} maxtime=${FUZZ_MAX_TIME:-3600}
	for t in $targets; do
		echo "== $t (campaign: $runs executions, $jobs jobs, at most ${maxtime}s)"
		replay_regressions "$t"
		campaign "$t"
	done
	echo
	printf '%-9s %5s %11s %7s %6s %11s %11s %11s %11s %7s\n' target reg/bad executions \
		exec/s secs files kbytes cov ft crashes
	printf '%s' "$table"
	exit $failed
fi

for t in $targets; do
	echo "== $t"
	bin=$out/$t
	log=$out/logs/$t.log
	art=$out/artifacts/$t
	work=$out/corpus/$t
	mkdir -p "$art" "$work" || exit 1
	# Regressions replay first, each file on its own: any failure is a failed target.
	replay_regressions "$t"
	execs=0 rate=0 crashes=0
	if [ "$secs" -gt 0 ]; then
		dict=
		[ -f "$fz/dict/$t.dict" ] && dict=-dict=$fz/dict/$t.dict
		stamp=$out/logs/$t.stamp
		touch "$stamp"
		sleep 1  # artifacts of this run are newer than the stamp, even on coarse clocks
		"$bin" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="$art/" $dict "$work" "$fz/corpus/$t" >"$log" 2>&1
		rc=$?
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
		if [ -z "$execs" ]; then  # no final stats (a crash): take the last status line
			execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -n 1)
			rate=$(sed -n 's/^#.*exec\/s: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
		fi
		arts=$(find "$art" -type f -newer "$stamp" | sort)
		crashes=$(printf '%s' "$arts" | grep -c .)
		echo "executions: ${execs:-0}  exec/s: ${rate:-0}  exit: $rc"
		if [ "$crashes" -gt 0 ]; then
			echo "crashes: $arts" | tr '\n' ' '
			echo
			echo "log: $log"
		else
			echo "crashes: 0"
			[ "$rc" -ne 0 ] && { echo "fuzzer exited $rc without an artifact (log $log)"; crashes=1; }
		fi
	fi
	[ "$regfail" -gt 0 ] || [ "$crashes" -gt 0 ] && failed=1
	table="$table$(printf '%-8s %6s %12s %8s %8s' "$t" "$nreg/$regfail" "${execs:-0}" \
		"${rate:-0}" "$crashes")
"
done

echo
printf '%-8s %6s %12s %8s %8s\n' target reg/bad executions exec/s crashes
printf '%s' "$table"
exit $failed

#!/bin/sh
# run.sh: builds tests/fuzz's libFuzzer targets with clang, replays their regressions, then
# fuzzes each for FUZZ_SECONDS and prints executions, exec/s and crashes per target.
#
# Usage: sh tests/fuzz/run.sh [BUILD-DIR]   (default /tmp/frontload-fuzz)
#   FUZZ_SECONDS  fuzzing time per target (default 60; 0 = build and replay only)
#   FUZZ_TARGETS  targets to run (default: all six below)
# A crash stops that target's run; its input is left under BUILD-DIR/artifacts/TARGET/.
# Copy it to tests/fuzz/regressions/TARGET/ once fixed: regressions replay first, every run.
# The same sources also build with gcc into BUILD-DIR/replay/TARGET (replay_main.c instead of
# libFuzzer), which replays the regressions and the seed corpus as `ninja test` could.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/frontload-fuzz}
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"frame mock sampler pattern cgparse disasm"}
fz=$src/tests/fuzz
mkdir -p "$out/gen" "$out/replay" || exit 1
out=$(cd "$out" && pwd)

warn="-Wall -Wextra -Wshadow -Wmissing-prototypes"
fuzzflags="-std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
-fno-sanitize-recover=undefined $warn -Wno-unknown-attributes"
replayflags="-std=gnu11 -g -O1 $warn"
incs="-I$fz -I$src/runtime/common -I$src/runtime/leaf -I$src/runtime/mock -I$src/runtime/extract \
-I$src/runtime/measure -I$src/templates -I$src/generator -I$out/gen $(pkg-config --cflags openblas)"
libs="$(pkg-config --libs libevent libzstd libprotobuf-c jansson openssl) -lm -lpthread -ldl"

# Sources per target: the harness, then the project files it drives (paths under $src;
# "proto" is protoc-c's frontload.pb-c.c).
srcs_frame="tests/fuzz/fuzz_frame.c runtime/common/wire.c runtime/common/zcodec.c
	runtime/common/corpus.c runtime/common/murmur.c runtime/common/sampler.c
	runtime/leaf/pipeline.c runtime/leaf/dlrm.c runtime/leaf/story_proc.c
	runtime/leaf/session.c runtime/leaf/stages.c runtime/extract/dispatch.c
	templates/helpers.c proto"
srcs_mock="tests/fuzz/fuzz_mock.c runtime/mock/mock_methods.c runtime/mock/mock_shape.c
	runtime/common/wire.c runtime/common/zcodec.c proto"
srcs_sampler="tests/fuzz/fuzz_sampler.c runtime/common/sampler.c"
srcs_pattern="tests/fuzz/fuzz_pattern.c generator/pattern.c generator/expr.c
	generator/expand.c generator/util.c"
srcs_cgparse="tests/fuzz/fuzz_cgparse.c runtime/measure/cgparse.c"
srcs_disasm="tests/fuzz/fuzz_disasm.c runtime/measure/disasm.c"
# Extra link flags: the DLRM stage needs a BLAS; fuzz_pattern.c takes over the
# generator's fatal() and counts its expression evaluations.
ldx_frame=$(pkg-config --libs openblas)
ldx_pattern="-Wl,--wrap=fatal -Wl,--wrap=expr_eval"

protoc-c --c_out="$out/gen" --proto_path="$src/runtime/common" \
	"$src/runtime/common/frontload.proto" || exit 1

# build KIND TARGET: compile TARGET's sources and link them, KIND fuzz (clang + libFuzzer)
# or replay (gcc + replay_main.c). Generator sources get gen_alloc.h forced in.
build() {
	kind=$1 t=$2
	if [ "$kind" = fuzz ]; then cc=clang flags=$fuzzflags bin=$out/$t
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

table=
failed=0
for t in $targets; do
	echo "== $t"
	bin=$out/$t
	log=$out/logs/$t.log
	art=$out/artifacts/$t
	work=$out/corpus/$t
	mkdir -p "$out/logs" "$art" "$work" || exit 1
	# Regressions replay first, each file on its own: any failure is a failed target.
	nreg=0 regfail=0
	for r in "$fz/regressions/$t"/*; do
		[ -f "$r" ] || continue
		nreg=$((nreg + 1))
		if ! "$bin" "$r" >"$log.replay" 2>&1; then
			regfail=$((regfail + 1))
			echo "REGRESSION FAILED: $r (log $log.replay)"
		fi
	done
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

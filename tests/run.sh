#!/bin/sh
# run.sh: frontload's test suite, run by `ninja test` from the build directory.
# Unit tests (cmocka binaries) and scripted checks of the generator and the build; each
# prints PASS, FAIL or SKIP with its name, and the last line is exactly
# "N passed, N failed, N skipped".
#
# Skips: an integration scenario that cannot run here prints its reason as its last line
# and exits 77; a cmocka case that calls skip() prints "skip: REASON" just before. Both are
# reported as "SKIP name (reason)". In CI's main run (CI=true in the environment, not a
# sanitizer build) nothing may skip: a skip there is a failure. The sanitizer build's skips
# stay skips: its scenarios skip what a sanitizer makes meaningless (timing, RSS, valgrind),
# and anything the host lacks would already have failed the main run.
# Retries: a scenario whose header holds the line "# fl-test: retries=N" is run again, up
# to N times, after a failure; a pass on a later attempt says so in its PASS line, and every
# attempt's log is kept in build/test-logs/ (NAME.log the last, NAME.attempt1.log ...).
set -u
src=${FL_SRCDIR:?FL_SRCDIR must name the source tree}
build=${FL_BUILDDIR:-.}
build=$(cd "$build" && pwd)
gen=$build/frontload-gen
tmp=$(mktemp -d /tmp/frontload-test.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
# FL_TEST_LOGS, FL_TEST_UNITS and FL_TEST_SCENARIOS override where logs go, the cmocka
# binaries run (names under build/tests/; empty: none) and the scenario directory.
logs=${FL_TEST_LOGS:-$build/test-logs}
rm -rf "$logs"
mkdir -p "$logs" || exit 1
passed=0
failed=0
skipped=0
# The generator and its unit test leave their pattern model to exit(); in a sanitizer
# build LeakSanitizer would fail them for it (the library and runtime tests keep it on).
genenv="env ASAN_OPTIONS=detect_leaks=0"

# Sanitizer builds run every functional check; scenarios that judge latency, capacity or
# RSS (ASan's quarantine keeps freed memory), or run under valgrind, are skipped there
# (this list, and any scenario that exits 77 itself when FL_SANITIZERS is set).
sanitizers=$(sed -n 's/^  "sanitizers": "\(.*\)",*$/\1/p' "$build/config.json")
perf_scenarios="driver_fixed_latency run_quick validate_quick fault_driver_disconnect overload driver_output_cap"
no_skip=
[ "${CI:-}" = true ] && [ -z "$sanitizers" ] && no_skip=1

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
skip() { # name reason
	if [ -n "$no_skip" ]; then
		fail "$1" "skipped in CI's main run, where nothing may skip ($2)"
	else
		skipped=$((skipped + 1))
		echo "SKIP $1 ($2)"
	fi
}

# cmocka_skips LOG: "case<TAB>reason" for every case cmocka reported SKIPPED, the reason
# being the case's "skip: ..." line (cmocka's summary lists each skipped case again).
cmocka_skips() {
	awk '/^\[ RUN      \] / { reason = "no reason given"; next }
	/^skip: / { reason = substr($0, 7); next }
	/^\[  SKIPPED \] / {
		name = substr($0, 14)
		if (name ~ /^[0-9]+ test\(s\)/ || seen[name]++) next
		printf "%s\t%s\n", name, reason
	}' "$1"
}

# 1. Unit and library tests (cmocka prints each case; output forced to the text format
# the skip parser reads).
units="test_template test_asm_clone test_obj_clone test_helpers test_dispatch test_verify test_library
	test_wire test_sampler test_corpus test_session test_overheads test_story_proc test_dlrm
	test_deadline test_pipeline test_model_inputs test_mock_shape test_mock_methods test_tls test_hist
	test_schedule test_reqgen test_driver_report test_cputime test_memacct test_pmu test_meter test_ranker_queue
	test_fanout_slots test_osfile test_process test_net test_cgparse test_disasm test_mix
	test_run_search test_run_host test_run_result test_run_remote test_targets test_objects test_leafwin test_calib_foot test_leafprofile test_profile test_dis_cs test_cli"
for t in ${FL_TEST_UNITS-$units}; do
	env=env
	[ "$t" = test_template ] && env=$genenv
	$env CMOCKA_MESSAGE_OUTPUT=stdout FL_BUILDDIR="$build" "$build/tests/$t" >"$logs/$t.log" 2>&1
	rc=$?
	cat "$logs/$t.log"
	cmocka_skips "$logs/$t.log" >"$tmp/skips"
	nskip=$(wc -l <"$tmp/skips")
	if [ "$rc" = 0 ]; then
		if [ "$nskip" = 0 ]; then pass "$t"; else pass "$t (all but $nskip skipped case(s))"; fi
	else
		fail "$t"
	fi
	while IFS='	' read -r case reason; do
		skip "$t $case" "$reason"
	done <"$tmp/skips"
done

# Sections 1b-6 check the generator and the build; FL_TEST_HARNESS_ONLY=1 leaves them out
# (tests/integration/harness_outcomes.sh runs this script on fake checks that way).
if [ -z "${FL_TEST_HARNESS_ONLY:-}" ]; then
	# 1b. Fuzz regressions and seed corpora replayed through each fuzz target's entry point
	# (the targets themselves run under libFuzzer with tests/fuzz/run.sh).
	for t in frame mock sampler pattern cgparse disasm cli targets reply result; do
		if "$build/tests/fuzz-$t" "$src/tests/fuzz/regressions/$t" "$src/tests/fuzz/corpus/$t" >/dev/null 2>&1
		then pass "fuzz replay $t"; else fail "fuzz replay $t"; fi
	done

	# 2. Determinism: the same seed gives byte-identical shards, another seed other constants.
	genc() { # out seed [extra...]
		o=$1 s=$2
		shift 2
		$genenv "$gen" generate --patterns "$src/patterns" --templates "$src/templates" \
			--out "$o" --copies 2 --seed "$s" --mode c --shards 3 --no-check --quiet "$@"
	}
	sums() { (cd "$1" && cat shards/*.c registry.c | sha256sum | cut -d' ' -f1); }
	if genc "$tmp/d1" 5 && genc "$tmp/d2" 5 && genc "$tmp/d3" 6; then
		a=$(sums "$tmp/d1") b=$(sums "$tmp/d2") c=$(sums "$tmp/d3")
		if [ "$a" = "$b" ] && [ "$a" != "$c" ]; then
			pass "determinism (seed 5 twice: $a; seed 6 differs)"
		else
			fail "determinism" "seed 5: $a vs $b; seed 6: $c"
		fi
	else
		fail "determinism" "generation failed"
	fi

	# 3. Copies differ only in constants: copy 0 and copy 1 of a variant have the same shape
	# once digits are removed, and different text with them.
	body() { awk "/fl_P03_v000_c0000$1\\(/,/^}/" "$tmp"/d1/shards/*.c | tail -n +2; }
	body 0 >"$tmp/k0"
	body 1 >"$tmp/k1"
	sed 's/[0-9]//g' "$tmp/k0" >"$tmp/c0"
	sed 's/[0-9]//g' "$tmp/k1" >"$tmp/c1"
	if [ -s "$tmp/k0" ] && cmp -s "$tmp/c0" "$tmp/c1" && ! cmp -s "$tmp/k0" "$tmp/k1"; then
		pass "copies share structure, differ in constants"
	else
		fail "copies share structure, differ in constants"
	fi

	# 4. A broken pattern file: a clear error naming the file and line, exit 1, no crash.
	broken() { # name sed-script expected-regex
		rm -rf "$tmp/bp"
		cp -r "$src/patterns" "$tmp/bp"
		f=$(ls "$tmp/bp"/P03_*.tpl)
		sed -i "$2" "$f"
		$genenv "$gen" generate --patterns "$tmp/bp" --templates "$src/templates" \
			--out "$tmp/bo" --copies 1 --mode c --only P03 --quiet 2>"$tmp/err"
		rc=$?
		if [ "$rc" = 1 ] && grep -Eq "$3" "$tmp/err"; then
			pass "broken pattern: $1 ($(head -n 1 "$tmp/err"))"
		else
			fail "broken pattern: $1" "exit $rc, stderr: $(head -n 3 "$tmp/err")"
		fi
	}
	broken "unclosed @for" '$a @for i 0 3' 'P03_[a-z_]+\.tpl:[0-9]+: @for without @end'
	broken "unknown name" '/^@body/a {{no_such_knob}}' 'P03_[a-z_]+\.tpl:[0-9]+: variant [0-9]+: unknown name'
	broken "C syntax error" '/^@body/a \	int x = ;' 'patterns/P03_[a-z_]+\.tpl:[0-9]+: error in variant 0'
	broken "unknown directive" '/^@body/a @while 1' 'P03_[a-z_]+\.tpl:[0-9]+: unknown directive'

	# 5. Install into a staging directory (what `DESTDIR=... ninja install` runs).
	if DESTDIR=$tmp/stage FL_SRCDIR=$src FL_PREFIX=/usr/local FL_BUILDDIR=$build \
		sh "$src/tests/install.sh" >/dev/null &&
		[ -x "$tmp/stage/usr/local/bin/frontload-gen" ] &&
		[ -x "$tmp/stage/usr/local/bin/frontload-leaf" ] &&
		[ -x "$tmp/stage/usr/local/bin/frontload-mock" ] &&
		[ -f "$tmp/stage/usr/local/share/frontload/data/rpc_dist.json" ] &&
		[ -f "$tmp/stage/usr/local/share/frontload/tls/frontload-cert.pem" ] &&
		[ -f "$tmp/stage/usr/local/lib/libfrontload-extract.so" ] &&
		[ -f "$tmp/stage/usr/local/share/frontload/manifest.json" ] &&
		[ -f "$tmp/stage/usr/local/include/frontload/fl_extract.h" ] &&
		"$tmp/stage/usr/local/bin/frontload-simreq" --plan-only 2>/dev/null |
		grep -q "\"library_functions\": $(sed -n 's/^  "functions": \([0-9]*\)$/\1/p' "$build/config.json")"; then
		# the installed library loads from bin/../lib with all its functions (every part
		# of a split one: configure --lib-parts)
		pass "install into DESTDIR"
	else
		fail "install into DESTDIR"
	fi

	# 6. Incremental: configure again with the same flags, and nothing needs rebuilding.
	args=$(sed -n 's/^  "configure_args": "\(.*\)",$/\1/p' "$build/config.json" | sed 's/\\"/"/g')
	if (cd "$build" && eval "\"$src/configure\" $args" >/dev/null) &&
		(cd "$build" && ninja -n all | grep -q "no work to do"); then
		pass "reconfigure with the same flags rebuilds nothing"
	else
		fail "reconfigure with the same flags rebuilds nothing" "$(cd "$build" && ninja -n all | head -n 3)"
	fi

	# 6b. A clone part depends only on its own variants' probes: a newer probe of the last
	# variant re-clones the last part alone (README, "Parts hold their own variants").
	# The probe's time is put back afterwards, so the build stays clean.
	last=$(ls "$build"/gen/probes/*_p0.s 2>/dev/null | tail -n 1)
	nparts=$(ls "$build"/gen/clone_*.json 2>/dev/null | wc -l)
	if [ -n "$last" ] && [ "$nparts" -ge 2 ]; then
		touch -r "$last" "$tmp/probe.mtime"
		touch "$last"
		reclone=$(cd "$build" && ninja -n all | sed -n 's/.*CLONE part \([0-9]*\)$/\1/p' | tr '\n' ' ')
		touch -r "$tmp/probe.mtime" "$last"
		if [ "$reclone" = "$((nparts - 1)) " ]; then
			pass "a newer probe of $(basename "$last" _p0.s) re-clones only part $((nparts - 1)) of $nparts"
		else
			fail "a newer probe re-clones only its part" "parts to re-clone: '${reclone}' of $nparts"
		fi
	elif [ "$(sed -n 's/^  "clone": "\(.*\)",$/\1/p' "$build/config.json")" != none ]; then
		fail "a newer probe re-clones only its part" "expected probes and at least 2 clone parts in $build"
	fi
fi

# 7. Leaf and mock servers on loopback: integration scenarios (tests/integration/).
# run_scenario NAME SCRIPT LOG: one attempt; sets rc.
run_scenario() {
	FL_SANITIZERS=$sanitizers FL_SRCDIR=$src FL_BUILDDIR=$build sh "$2" >"$3" 2>&1
	rc=$?
}
for t in "${FL_TEST_SCENARIOS:-$src/tests/integration}"/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "$sanitizers" ] && echo " $perf_scenarios " | grep -q " $name "; then
		skip "integration $name" "sanitizer build ($sanitizers): it judges timing, RSS or runs valgrind"
		continue
	fi
	retries=$(sed -n 's/^# fl-test: retries=\([0-9]\{1,\}\)$/\1/p' "$t" | head -n 1)
	attempts=$((${retries:-0} + 1))
	log=$logs/$name.log
	a=1
	run_scenario "$name" "$t" "$log"
	while [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ "$a" -lt "$attempts" ]; do
		mv "$log" "$logs/$name.attempt$a.log"
		a=$((a + 1))
		run_scenario "$name" "$t" "$log"
	done
	last=$(tail -n 1 "$log")
	if [ "$rc" = 0 ] && [ "$a" = 1 ]; then
		pass "integration $name ($last)"
	elif [ "$rc" = 0 ]; then
		if [ "$a" = 2 ]; then
			kept="first attempt's log kept at $logs/$name.attempt1.log"
		else
			kept="earlier attempts' logs kept at $logs/$name.attempt[1-$((a - 1))].log"
		fi
		pass "integration $name ($last) (passed on attempt $a of $attempts; $kept)"
	elif [ "$rc" = 77 ]; then
		skip "integration $name" "$last"
	else
		more=
		[ "$attempts" -gt 1 ] && more=" (failed all $attempts attempts; logs in $logs/$name.*)"
		# The scenario's own FAIL line (what failed) first, then its log's last lines.
		why=$(grep -m 1 '^FAIL: ' "$log")
		fail "integration $name" "${why:+$why
}$(tail -n 5 "$log")$more"
	fi
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

#!/bin/sh
# harness_outcomes.sh: tests/run.sh reports what happened: skips as SKIP with their reason,
# retries in the PASS line with the first attempt's log kept, and the closing counts.
#
# Runs tests/run.sh (FL_TEST_HARNESS_ONLY=1: no generator or build checks) on checks made
# here: a real cmocka binary with one case that calls skip() after "skip: widget missing",
# and four scenarios: one passes, one exits 77 ("skipped: no widget here"), one fails its
# first attempt and passes its second ("# fl-test: retries=1"), one fails. Checks:
#   - outside CI: PASS/SKIP/FAIL lines as below, the first attempt's log kept, and the
#     last line exactly "3 passed, 1 failed, 2 skipped"; exit status 1;
#   - CI=true: both skips are failures ("3 passed, 3 failed, 0 skipped");
#   - CI=true in a sanitizer build: the skips stay skips with their reasons.
. "$(dirname "$0")/common.inc"

mkdir -p "$T/build/tests" "$T/sc"
cat >"$T/unit.c" <<'EOF'
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
static void test_a(void **s) { (void)s; assert_int_equal(1, 1); }
static void test_b(void **s) { (void)s; printf("skip: widget missing\n"); skip(); }
static void test_c(void **s) { (void)s; assert_int_equal(2, 2); }
int main(void)
{
	const struct CMUnitTest t[] = { cmocka_unit_test(test_a), cmocka_unit_test(test_b),
					cmocka_unit_test(test_c) };
	return cmocka_run_group_tests_name("fake", t, NULL, NULL);
}
EOF
${CC:-cc} $(pkg-config --cflags cmocka) "$T/unit.c" -o "$T/build/tests/fake_unit" \
	$(pkg-config --libs cmocka) || fail "cannot build the cmocka check"

printf '#!/bin/sh\necho "all good"\n' >"$T/sc/ok.sh"
printf '#!/bin/sh\necho "skipped: no widget here"\nexit 77\n' >"$T/sc/skipper.sh"
printf '#!/bin/sh\necho bad\nexit 1\n' >"$T/sc/broken.sh"
cat >"$T/sc/flaky.sh" <<EOF
#!/bin/sh
# fl-test: retries=1
if [ ! -e "$T/flaky.ran" ]; then
	touch "$T/flaky.ran"
	echo "attempt one noise"
	exit 1
fi
echo "fine now"
EOF

# harness SANITIZERS [CI]: run tests/run.sh on the checks above; output in $T/out.
harness() {
	printf '{\n  "sanitizers": "%s",\n  "copies": 1\n}\n' "$1" >"$T/build/config.json"
	rm -f "$T/flaky.ran"
	env -u CI ${2:+CI=$2} FL_TEST_HARNESS_ONLY=1 FL_TEST_UNITS=fake_unit \
		FL_TEST_SCENARIOS="$T/sc" FL_TEST_LOGS="$T/logs" FL_SRCDIR="$FL_SRCDIR" \
		FL_BUILDDIR="$T/build" sh "$FL_SRCDIR/tests/run.sh" >"$T/out" 2>&1
	rc=$?
}
has() { # LINE: the harness printed exactly this line
	grep -qxF "$1" "$T/out" || fail "no line '$1' in: $(grep -E '^(PASS|FAIL|SKIP|[0-9])' "$T/out" | tr '\n' '|')"
}

harness ""
assert_eq "$rc" 1 "exit status with one failing scenario"
has "PASS fake_unit (all but 1 skipped case(s))"
has "SKIP fake_unit test_b (widget missing)"
has "PASS integration ok (all good)"
has "SKIP integration skipper (skipped: no widget here)"
has "PASS integration flaky (fine now) (passed on attempt 2 of 2; first attempt's log kept at $T/logs/flaky.attempt1.log)"
grep -qx "attempt one noise" "$T/logs/flaky.attempt1.log" || fail "first attempt's log not kept"
grep -qx "fine now" "$T/logs/flaky.log" || fail "second attempt's log not kept"
has "FAIL integration broken: bad"
assert_eq "$(tail -n 1 "$T/out")" "3 passed, 1 failed, 2 skipped" "last line"

harness "" true
has "FAIL fake_unit test_b: skipped in CI's main run, where nothing may skip (widget missing)"
has "FAIL integration skipper: skipped in CI's main run, where nothing may skip (skipped: no widget here)"
assert_eq "$(tail -n 1 "$T/out")" "3 passed, 3 failed, 0 skipped" "last line with CI=true"

harness "address,undefined" true
has "SKIP integration skipper (skipped: no widget here)"
assert_eq "$(tail -n 1 "$T/out")" "3 passed, 1 failed, 2 skipped" "last line, CI=true, sanitizer build"

echo "run.sh: skips reported as SKIP with their reason (failures under CI=true outside" \
	"sanitizer builds), a pass on attempt 2 of 2 named with its first log kept, closing" \
	"line '3 passed, 1 failed, 2 skipped'"

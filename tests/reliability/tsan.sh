#!/bin/sh
# tsan.sh: a ThreadSanitizer build of the runtime runs the leaf/mock/driver scenarios clean.
#
# Not run by `ninja test` (a build plus ~3-5 min of runs). Usage, from anywhere:
#   sh tests/reliability/tsan.sh [BUILDDIR]        (default /tmp/frontload-tsan)
# 1. configures BUILDDIR with `--copies=1 --clone=none --enable-sanitizers=thread` and
#    builds frontload-leaf, frontload-mock, frontload-driver, libfrontload-extract.so and
#    tests/leaf-client (everything instrumented, the generator too; ~1.5 min on 2 cores);
# 2. runs tests/integration/{leaf_mock,mock_restart,bad_frames,driver_stall}.sh against it
#    with TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 report_signal_unsafe=0
#    log_path=BUILDDIR/tsan/report suppressions=tests/tsan.supp", so every instrumented
#    process (servers, driver, leaf-client) appends its reports to BUILDDIR/tsan/report.PID;
# 3. counts the reports ("WARNING: ThreadSanitizer" blocks) and lists the distinct
#    SUMMARY lines.
# Exits 1 when any report remains, else 0. A scenario that fails on its own checks is
# listed but does not fail this script: TSan slows the servers 5-15x, so timing checks
# (driver_stall's sent count, latencies) can fail; client deadlines are scaled by
# TSAN_TIMEOUT_SCALE (default 4, via FL_TIMEOUT_SCALE in common.inc). Set TSAN_STRICT=1 to
# also fail on a failed scenario. The last line printed is the summary.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-/tmp/frontload-tsan}
SUPP=$SRC/tests/tsan.supp
t0=$(date +%s)

mkdir -p "$B" && cd "$B" || exit 1
B=$(pwd)
"$SRC/configure" --copies=1 --clone=none --enable-sanitizers=thread >"$B/tsan-configure.log" 2>&1 ||
	{ tail -n 5 "$B/tsan-configure.log" >&2; echo "tsan: configure failed" >&2; exit 1; }
ninja frontload-leaf frontload-mock frontload-driver libfrontload-extract.so tests/leaf-client \
	>"$B/tsan-build.log" 2>&1 ||
	{ tail -n 20 "$B/tsan-build.log" >&2; echo "tsan: build failed" >&2; exit 1; }
t1=$(date +%s)
echo "tsan: build $((t1 - t0)) s ($B)" >&2

rm -rf "$B/tsan"
mkdir -p "$B/tsan"
TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 report_signal_unsafe=0"
TSAN_OPTIONS="$TSAN_OPTIONS log_path=$B/tsan/report suppressions=$SUPP"
export TSAN_OPTIONS
export FL_SRCDIR="$SRC" FL_BUILDDIR="$B"
export FL_TIMEOUT_SCALE="${TSAN_TIMEOUT_SCALE:-4}"
export FL_WATCHDOG_S="${FL_WATCHDOG_S:-900}"

failed=
for s in leaf_mock mock_restart bad_frames driver_stall; do
	ts=$(date +%s)
	if sh "$SRC/tests/integration/$s.sh" >"$B/tsan/$s.log" 2>&1; then
		r=pass
	else
		r=FAIL
		failed="$failed $s"
	fi
	echo "tsan: $s: $r, $(($(date +%s) - ts)) s: $(tail -n 1 "$B/tsan/$s.log")" >&2
done

# One report = one "WARNING: ThreadSanitizer: ..." block; its SUMMARY line names the kind
# and the top frame.
reports=$(cat "$B"/tsan/report.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer')
if [ "$reports" -gt 0 ]; then
	echo "tsan: distinct reports (count, SUMMARY):" >&2
	cat "$B"/tsan/report.* | sed -n 's/^SUMMARY: ThreadSanitizer: //p' | sort | uniq -c | sort -rn >&2
	echo "tsan: full reports in $B/tsan/report.PID" >&2
fi

rc=0
[ "$reports" -eq 0 ] || rc=1
[ -z "$failed" ] || [ "${TSAN_STRICT:-0}" = 0 ] || rc=1
echo "tsan: $reports reports; scenarios failed:${failed:- none}; build $((t1 - t0)) s," \
	"runs $(($(date +%s) - t1)) s; $([ $rc = 0 ] && echo CLEAN || echo NOT CLEAN)"
exit $rc

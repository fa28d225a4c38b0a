#!/bin/sh
# study_resume.sh: an interrupted frontload-measure study keeps what it measured, and the
# same command resumes it.
#
# A two-point study (footprints 16K and 64K, Zipf alpha 1, one point at a time) gets
# SIGINT once its first point is in the journal (DIR/points/). Checked: exit status 130;
# study.json written with status "interrupted", the first point ok and the second
# "interrupted" with a reason; summary.md and study.csv written. Then the same command
# again: it says it kept one point from the earlier run, measures only the other, exits 0,
# study.json says "complete" with both points ok, the first marked resumed with the same
# L1i MPKI as before. A third run with another --requests measures both again (the key
# holds the run's settings).
# Env: FL_BUILDDIR (binaries), FL_SRCDIR. Exit 0/1, 77 to skip (no valgrind, or a
# sanitizer build valgrind cannot run); the last line is a one-line summary or the reason.
set -u
: "${FL_SRCDIR:?FL_SRCDIR must name the source tree}"
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
B=$(cd "$FL_BUILDDIR" && pwd) || exit 1
M=$B/frontload-measure
L=$B/libfrontload-extract.so
fail() { echo "FAIL: $*"; exit 1; }
for f in "$M" "$L"; do
	[ -e "$f" ] || fail "$f not built"
done
command -v jq >/dev/null 2>&1 || fail "jq not installed"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "skipped: valgrind not installed (apt-get install valgrind)"
	exit 77
fi
if [ -n "${FL_SANITIZERS:-}" ]; then
	echo "skipped: valgrind cannot run a sanitizer build ($FL_SANITIZERS)"
	exit 77
fi
T=$(mktemp -d /tmp/fl-study-resume.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
O=$T/study
J=$O/study.json

# study REQUESTS: the study's command, the same every time but for --requests. In the
# background it runs as "(EXEC=exec; study N) &", so $! is frontload-measure itself (a
# shell's background subshell would ignore the SIGINT).
EXEC=
study() {
	$EXEC "$M" study --lib "$L" --footprint 16K,64K --alphas 1 --calls 500 --requests "$1" \
		--warmup 0 --no-mrc --no-leaf --corpus-mb 4 --jobs 1 --out "$O"
}

# 1. Interrupted once the first point is journalled.
(EXEC=exec; study 1) >"$T/out1" 2>"$T/err1" &
pid=$!
i=0
until [ "$(ls "$O/points" 2>/dev/null | wc -l)" -ge 1 ]; do
	kill -0 "$pid" 2>/dev/null || fail "study ended before its first point was journalled: $(tail -n 3 "$T/err1")"
	i=$((i + 1))
	[ "$i" -lt 600 ] || { kill "$pid"; fail "no journal entry after 300 s"; }
	sleep 0.5
done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || fail "interrupted study exited $rc, not 130: $(tail -n 3 "$T/err1")"
grep -q "interrupted by signal 2" "$T/err1" || fail "no interruption line: $(tail -n 2 "$T/err1")"
[ "$(jq -r .status "$J")" = interrupted ] || fail "study.json status $(jq -r .status "$J")"
[ "$(jq -r '.points[0].status' "$J")" = ok ] || fail "first point: $(jq -c '.points[0]' "$J")"
[ "$(jq -r '.points[1].status' "$J")" = interrupted ] ||
	fail "second point: $(jq -c '.points[1]' "$J")"
jq -e '.points[1].why | test("interrupted")' "$J" >/dev/null || fail "no reason for point 2"
for f in summary.md study.csv; do
	[ -s "$O/$f" ] || fail "interrupted study wrote no $f"
done
m1=$(jq '.points[0].l1i_mpki' "$J")

# 2. The same command resumes: one point kept, one measured.
study 1 >"$T/out2" 2>"$T/err2" || fail "resumed study exited $?: $(tail -n 3 "$T/err2")"
grep -q "1 point measured by an earlier run" "$T/err2" || fail "no resume line: $(head -n 5 "$T/err2")"
[ "$(jq -r .status "$J")" = complete ] || fail "resumed study.json status $(jq -r .status "$J")"
[ "$(jq '[.points[] | select(.status == "ok")] | length' "$J")" = 2 ] ||
	fail "resumed study: $(jq -c '[.points[] | .status]' "$J")"
[ "$(jq '.points[0].resumed' "$J")" = true ] && [ "$(jq '.points[1].resumed' "$J")" = false ] ||
	fail "resumed flags: $(jq -c '[.points[] | .resumed]' "$J")"
[ "$(jq '.points[0].l1i_mpki' "$J")" = "$m1" ] ||
	fail "kept point's L1i MPKI changed: $m1 -> $(jq '.points[0].l1i_mpki' "$J")"

# 3. Another --requests is another study: nothing kept.
study 2 >"$T/out3" 2>"$T/err3" || fail "study --requests 2 exited $?: $(tail -n 3 "$T/err3")"
grep -q "earlier run" "$T/err3" && fail "--requests 2 kept points of the --requests 1 study"
[ "$(jq '[.points[] | select(.resumed == false and .status == "ok")] | length' "$J")" = 2 ] ||
	fail "--requests 2: $(jq -c '[.points[] | .status, .resumed]' "$J")"
echo "interrupted after point 1 (exit 130, L1i MPKI $m1 kept), resumed: 1 kept + 1 measured; --requests 2 measured both again"

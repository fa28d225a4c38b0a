#!/bin/sh
# study_footprint.sh: the plan's footprint and call-order knobs end to end, and a
# two-point frontload-measure study over them, with one point also on the running leaf.
#
# First frontload-simreq --plan-only (native): --active-functions 1 works, N above the
# library is a clear error, executed code bytes (from the library's symbols) grow with N
# and split into hot + cold, --footprint-bytes takes the fewest functions whose code
# reaches it, a Zipf plan reports a reuse profile shorter than the flat walk's. Then study
# --footprint 16K,256K --alphas 1 --leaf-footprints 20K (two simulated points, Zipf alpha
# 1, 2000 calls per request, one request each, no curve; the 16K point again on the
# running leaf): the report's files are written, every point measured, the active
# functions and executed code bytes grow with the footprint, the leaf point has the same
# plan and the leaf's figures, summary.md reads the sweep and the leaf point and has its
# anchors, report.html is one self-contained HTML document, and every knob's --help
# states its unit and range.
# Env: FL_BUILDDIR (binaries), FL_SRCDIR. Exit 0/1, 77 to skip (no valgrind, or a
# sanitizer build valgrind cannot run); the last line is a one-line summary or the reason.
set -u
: "${FL_SRCDIR:?FL_SRCDIR must name the source tree}"
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
B=$(cd "$FL_BUILDDIR" && pwd) || exit 1
M=$B/frontload-measure
S=$B/frontload-simreq
L=$B/libfrontload-extract.so
fail() { echo "FAIL: $*"; exit 1; }
for f in "$M" "$S" "$L"; do
	[ -e "$f" ] || fail "$f not built"
done
command -v jq >/dev/null 2>&1 || fail "jq not installed"
T=$(mktemp -d /tmp/fl-study.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

# plan N DISPATCH: the plan object of a --plan-only run into $T/plan.json.
plan() {
	"$S" --lib "$L" --plan-only --active-functions "$1" --dispatch "$2" --json "$T/plan.json" \
		2>"$T/plan.err" || fail "--plan-only --active-functions $1: $(cat "$T/plan.err")"
}
pj() { jq -r "$1" "$T/plan.json"; }

# 1. --help of every plan and study knob names its unit and range.
"$S" --help >"$T/h1" 2>&1
grep -q -- "--active-functions N .*distinct functions in the plan" "$T/h1" ||
	fail "simreq --help: --active-functions does not say functions"
grep -q "1..(functions kept" "$T/h1" || fail "simreq --help: no range of --active-functions"
grep -q "0..4" "$T/h1" || fail "simreq --help: no range of --zipf-alpha"
"$M" study --help >"$T/h2" 2>&1
grep -q -- "--footprint LIST .*executed code bytes" "$T/h2" || fail "study --help: --footprint unit"
grep -q "1..1T" "$T/h2" || fail "study --help: no range of --footprint"
grep -q -- "--alphas LIST .*flat" "$T/h2" || fail "study --help: --alphas"
grep -q "alpha, 0..4" "$T/h2" || fail "study --help: no range of alpha"
grep -q "DIR/report.html" "$T/h2" || fail "study --help does not list report.html"

# 2. Plans: N = 1, growth, hot + cold, the error above the library.
all=$(jq -r .library_functions "$(plan 1 flat; echo "$T/plan.json")")
[ "$(pj .plan_functions)" = 1 ] || fail "N=1 gave $(pj .plan_functions) functions"
b1=$(pj .plan.code_bytes)
plan 64 flat
b64=$(pj .plan.code_bytes)
[ "$(pj '.plan.code_bytes_hot + .plan.code_bytes_cold')" = "$b64" ] || fail "hot + cold != code bytes"
flat_p50=$(pj '.plan.reuse.functions[0]')
[ "$flat_p50" = 63 ] || fail "flat walk of 64: median reuse $flat_p50 functions, not 63"
plan 0 flat
ball=$(pj .plan.code_bytes)
[ "$b1" -gt 0 ] && [ "$b64" -gt "$b1" ] && [ "$ball" -gt "$b64" ] ||
	fail "code bytes do not grow: N=1 $b1, N=64 $b64, all $ball"
if command -v nm >/dev/null 2>&1; then
	# the library's objects: the one file, or a split library's parts (configure --lib-parts)
	objs=$L
	k=$(sed -n 's/^ *"lib_parts": \([0-9]*\).*/\1/p' "$B/config.json")
	if [ "${k:-1}" -gt 1 ]; then
		objs=
		while [ "$k" -ge 1 ]; do objs="$B/libfrontload-extract-$k.so $objs"; k=$((k - 1)); done
	fi
	nms=$(nm -S -t d $objs | awk '$4 ~ /^fl_P[0-9][0-9]_v[0-9]+_c[0-9]+($|\.)/ { s += $2 } END { print s }')
	[ "$nms" = "$ball" ] || fail "code bytes of every function $ball, nm -S says $nms"
fi
plan 64 zipf
zipf_p50=$(pj '.plan.reuse.functions[0]')
[ "$zipf_p50" -lt "$flat_p50" ] || fail "Zipf median reuse $zipf_p50 not below flat $flat_p50"
# --footprint-bytes: the fewest functions whose code reaches the bytes.
"$S" --lib "$L" --plan-only --footprint-bytes 256k --json "$T/plan.json" 2>"$T/plan.err" ||
	fail "--footprint-bytes 256k: $(cat "$T/plan.err")"
nb=$(pj .plan_functions); bb=$(pj .plan.code_bytes)
[ "$bb" -ge 262144 ] || fail "--footprint-bytes 256k gave $bb bytes"
plan $((nb - 1)) flat
[ "$(pj .plan.code_bytes)" -lt 262144 ] || fail "--footprint-bytes 256k: $((nb - 1)) functions reach it too"
if "$S" --lib "$L" --plan-only --active-functions $((all + 1)) >/dev/null 2>"$T/e"; then
	fail "--active-functions $((all + 1)) of $all accepted"
fi
grep -q "active functions asked, but the plan has $all" "$T/e" ||
	fail "N above the library: unclear error: $(cat "$T/e")"

# 3. The two-point study.
if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not installed (the study's simulated path needs it)"
	exit 77
fi
if [ -n "${FL_SANITIZERS:-}" ]; then
	echo "skipped: valgrind cannot run a sanitizer build ($FL_SANITIZERS)"
	exit 77
fi
O=$T/study
timeout 600 "$M" study --lib "$L" --footprint 16K,256K --alphas 1 --calls 2000 --requests 1 \
	--warmup 0 --no-mrc --leaf-footprints 20K --leaf-requests 2 --corpus-mb 4 --jobs 2 \
	--quiet --out "$O" >"$T/out" 2>"$T/err" ||
	fail "study exited $?: $(tail -n 3 "$T/err")"
for f in summary.md study.csv study.json study.gp; do
	[ -s "$O/$f" ] || fail "study wrote no $f"
done
if command -v gnuplot >/dev/null 2>&1; then
	for f in mpki_vs_footprint.png mpki_vs_footprint.svg; do
		[ -s "$O/$f" ] || fail "no plot $f: $(cat "$O/gnuplot.log" 2>/dev/null)"
	done
fi
J=$O/study.json
[ "$(jq '.points | length' "$J")" = 3 ] || fail "study.json: $(jq '.points | length' "$J") points"
[ "$(jq '[.points[] | select(.status == "ok")] | length' "$J")" = 3 ] ||
	fail "not every point measured: $(jq -c '[.points[] | .why]' "$J")"
jq -e '[.points[] | .dispatch == "zipf" and .zipf_alpha == 1 and
	(.l1i_mpki | type) == "number" and (.reuse_p50_hot_bytes | type) == "number"] | all' \
	"$J" >/dev/null || fail "a point lacks its order, MPKI or reuse: $(jq -c .points "$J")"
[ "$(jq -r '[.points[] | .kind] | join(",")' "$J")" = sweep,sweep,leaf ] ||
	fail "points: $(jq -c '[.points[] | .kind]' "$J"), want two sweep points and a leaf point"
f1=$(jq '.points[0].active_functions' "$J"); f2=$(jq '.points[1].active_functions' "$J")
c1=$(jq '.points[0].code_bytes' "$J"); c2=$(jq '.points[1].code_bytes' "$J")
[ "$f2" -gt "$f1" ] || fail "active functions do not grow: $f1 -> $f2"
awk "BEGIN { exit !($c2 > $c1 && $c1 >= 16384 && $c2 >= 262144) }" ||
	fail "code bytes do not grow past the footprints asked: $c1 -> $c2"
grep -q "| 16 KiB | $f1 |" "$O/summary.md" || fail "summary.md has no 16 KiB row"
# The leaf point (--leaf-footprints 20K moves to the nearest swept footprint, 16K): the
# same plan on the running leaf, its whole process simulated, 2000 calls a request (125
# extractors per story x 16 stories), the generated library's shares measured.
jq -e '.points[2] | .footprint_bytes == 16384 and .leaf.extractors_per_story == 125 and
	.leaf.calls_per_request == 2000 and .leaf.requests == 2 and
	(.l1i_mpki | type) == "number" and .generated_ir_pct > 0 and .generated_ir_pct < 100 and
	(.generated_l1i_miss_pct | type) == "number" and .insns_per_request > 0' "$J" >/dev/null ||
	fail "the leaf point lacks its figures: $(jq -c '.points[2]' "$J")"
[ "$(jq '.points[2].active_functions' "$J")" = "$f1" ] || fail "the leaf point's plan is not the 16 KiB sweep point's"
jq -e '.points[0].generated_ir_pct == null' "$J" >/dev/null ||
	fail "a harness point reports the leaf-only generated_ir_pct"
grep -q '^## The running leaf beside the extraction alone' "$O/summary.md" ||
	fail "summary.md has no leaf section"
grep -q "^- [0-9.]* KiB, zipf a=1: the running leaf [0-9.]* L1i MPKI against the harness's [0-9.]*" \
	"$O/summary.md" || fail "summary.md has no reading of the leaf point: $(grep 'running leaf' "$O/summary.md")"
ml=$(jq '.points[2].l1i_mpki * 100 | round / 100' "$J")
# The report people read: summary.md's reading of the sweep and its anchors, and
# report.html, one self-contained HTML document (the SVG plots inline, not linked).
grep -q '^## Anchors' "$O/summary.md" || fail "summary.md has no Anchors section"
grep -q '^- zipf a=1, 2000 calls/request: L1i MPKI [0-9.]* at .* and [0-9.]* at ' "$O/summary.md" ||
	fail "summary.md has no reading of the sweep: $(grep -A 3 '^\*\*Reading' "$O/summary.md")"
H=$O/report.html
[ -s "$H" ] || fail "study wrote no report.html: $(grep report.html "$T/err")"
head -n 1 "$H" | grep -q '^<!DOCTYPE html>$' && [ "$(grep -c '<html' "$H")" = 1 ] &&
	[ "$(grep -c '</html>' "$H")" = 1 ] && tail -n 1 "$H" | grep -q '^</html>$' ||
	fail "report.html is not one HTML document"
grep -q '<table' "$H" || fail "report.html has no table"
if command -v gnuplot >/dev/null 2>&1; then
	grep -q '<svg' "$H" || fail "report.html has no inline <svg>"
fi
if grep -q '<img src="[^"]*\.svg"' "$H"; then
	fail "report.html links an SVG instead of inlining it: $(grep -o '<img src="[^"]*"' "$H")"
fi
m1=$(jq '.points[0].l1i_mpki * 100 | round / 100' "$J"); m2=$(jq '.points[1].l1i_mpki * 100 | round / 100' "$J")
echo "plans: code bytes N=1 $b1, N=64 $b64, all $ball; study: $f1 -> $f2 functions, $c1 -> $c2 code bytes, L1i MPKI $m1 -> $m2 (the running leaf at $f1 functions: $ml); report.html $(wc -c <"$H") bytes"

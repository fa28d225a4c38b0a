#!/bin/sh
# study_fleet.sh: a study split into shards and merged (study --shard, study --merge), on
# this host, without Ansible (deploy_study_netns.sh runs the same over ssh "hosts").
#
# A two-point study (--footprint 8K,32K, flat, 1000 calls, one request) runs as shards 0/2
# and 1/2 under the zen4 cache model and whole (0/1) under golden-cove. Checks:
#   - each shard measured only its own point (the other is "other_shard"), and its
#     study.json records the shard, the simulated model and the geometry;
#   - the merge: status complete, 2 CPU models, 4 points measured, each zen4 point from
#     its shard's directory, every point tagged with host, host CPU and model; each zen4
#     point's L1i MPKI equals its shard's own; summary.md has the side-by-side table and
#     its reading, study.csv a row per point and model, report.html is written;
#   - without shard 1/2 the merge exits 1, names the point as missing (no figures) and
#     still writes its files; two copies of one shard, a directory without study.json, a
#     study option beside --merge, --merge without --out and a bad --shard are refused
#     with a message naming the problem.
# Env: FL_BUILDDIR (binaries), FL_SRCDIR. Exit 0/1, 77 to skip (no valgrind, or a
# sanitizer build valgrind cannot run); the last line is a one-line summary or the reason.
set -u
: "${FL_SRCDIR:?FL_SRCDIR must name the source tree}"
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
B=$(cd "$FL_BUILDDIR" && pwd) || exit 1
M=$B/frontload-measure
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$M" ] || fail "$M not built"
command -v jq >/dev/null 2>&1 || fail "jq not installed"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "skipped: valgrind not installed (apt-get install valgrind)"
	exit 77
fi
if [ -n "${FL_SANITIZERS:-}" ]; then
	echo "skipped: valgrind cannot run a sanitizer build ($FL_SANITIZERS)"
	exit 77
fi
T=$(mktemp -d /tmp/fl-study-fleet.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

# shard NAME ARGS...: one shard's study into $T/NAME.
shard() {
	n=$1
	shift
	"$M" study --footprint 8K,32K --alphas flat --calls 1000 --requests 1 --warmup 0 \
		--no-mrc --no-leaf --jobs 1 --quiet --out "$T/$n" "$@" >"$T/$n.log" 2>&1 ||
		fail "study $* exit $?: $(tail -n 3 "$T/$n.log")"
}
shard a --shard 0/2
shard b --shard 1/2
shard c --cpu golden-cove
J=$T/a/study.json
[ "$(jq -r '[.points[].status] | join(",")' "$J")" = "ok,other_shard" ] ||
	fail "shard 0/2's points: $(jq -c '[.points[].status]' "$J")"
[ "$(jq -r '[.points[].status] | join(",")' "$T/b/study.json")" = "other_shard,ok" ] ||
	fail "shard 1/2's points: $(jq -c '[.points[].status]' "$T/b/study.json")"
[ "$(jq -r '"\(.shard.index)/\(.shard.count) \(.cpu_model) \(.geometry.i1_bytes)"' "$J")" = \
	"0/2 zen4 32768" ] || fail "shard 0/2's study.json: $(jq -c '{shard, cpu_model, geometry}' "$J")"
jq -e '.shard == null and .cpu_model == "golden-cove"' "$T/c/study.json" >/dev/null ||
	fail "the whole golden-cove study: $(jq -c '{shard, cpu_model}' "$T/c/study.json")"

# The merge.
"$M" study --merge "$T/a,$T/b,$T/c" --out "$T/m" >"$T/m.log" 2>&1 ||
	fail "merge exit $?: $(cat "$T/m.log")"
MJ=$T/m/study.json
for f in study.json study.csv summary.md report.html; do
	[ -s "$T/m/$f" ] || fail "the merge wrote no $f"
done
[ "$(jq -r '"\(.status) \(.groups | length) \([.points[] | select(.status == "ok")] | length)"' "$MJ")" = \
	"complete 2 4" ] || fail "merged: $(jq -c '{status, g: [.groups[].cpu_model], p: [.points[].status]}' "$MJ")"
for i in 0 1; do
	d=$T/a
	[ "$i" = 1 ] && d=$T/b
	got=$(jq -r ".points[] | select(.cpu_model == \"zen4\" and .index == $i) | \"\(.shard_dir) \(.shard) \(.l1i_mpki)\"" "$MJ")
	want="$d $i/2 $(jq -r ".points[$i].l1i_mpki" "$d/study.json")"
	[ "$got" = "$want" ] || fail "zen4 point $i: got '$got', want '$want'"
done
jq -e '[.points[] | .host != null and .host_cpu != null and (.l1i_mpki | type) == "number"] | all' \
	"$MJ" >/dev/null || fail "a point without host, host CPU or L1i MPKI"
grep -q '^## Side by side' "$T/m/summary.md" || fail "summary.md has no side-by-side table"
grep -q '| sweep 32 KiB, flat, 1000 calls | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |' \
	"$T/m/summary.md" || fail "no side-by-side row for the 32 KiB point"
grep -q '^Reading: over the 2 points both measured' "$T/m/summary.md" ||
	fail "no reading under the side-by-side table"
[ "$(wc -l <"$T/m/study.csv")" = 5 ] || fail "study.csv: $(wc -l <"$T/m/study.csv") lines, want 5"
z4=$(jq -r '.points[] | select(.cpu_model == "zen4" and .index == 1) | .l1i_mpki * 1000 | round / 1000' "$MJ")
gc=$(jq -r '.points[] | select(.cpu_model == "golden-cove" and .index == 1) | .l1i_mpki * 1000 | round / 1000' "$MJ")

# A shard not given: exit 1, the point named missing with no figures, files written.
"$M" study --merge "$T/a,$T/c" --out "$T/m2" >"$T/m2.log" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "merge without shard 1/2: exit $rc, want 1"
jq -e '.status == "incomplete" and ([.points[] | select(.status == "missing")] | length) == 1 and
	([.points[] | select(.status == "missing") | .l1i_mpki] == [null])' "$T/m2/study.json" \
	>/dev/null || fail "merge without shard 1/2: $(jq -c '[.points[] | {status, l1i_mpki}]' "$T/m2/study.json")"
grep -q 'no shard 1/2 of zen4' "$T/m2/summary.md" || fail "summary.md does not name the missing shard"

# Refused input.
refuse() {
	want=$1
	shift
	"$M" study "$@" >"$T/r.log" 2>&1
	rc=$?
	[ "$rc" != 0 ] || fail "study $* exited 0"
	grep -q -- "$want" "$T/r.log" || fail "study $*: no '$want' in: $(cat "$T/r.log")"
}
refuse "are both shard 0/2" --merge "$T/a,$T/a" --out "$T/r1"
refuse "study.json" --merge "$T/nope" --out "$T/r2"
refuse "calls is a study option" --merge "$T/a" --out "$T/r3" --calls 5
refuse "needs --out" --merge "$T/a"
refuse "expected K/N" --shard 2/2
echo "3 shards (zen4 0/2, 1/2; golden-cove 0/1) merged: 4 points, 32 KiB point L1i MPKI" \
	"zen4 $z4 / golden-cove $gc; a missing shard exits 1 with the point named"

#!/bin/sh
# deploy_study_netns.sh: runtime/deploy/study.yml, a study over a fleet, across "hosts"
# made on this one (netns_hosts.inc: a namespace and an sshd each, a key made for the test,
# ansible-playbook in a controller namespace):
#
#   ctl 10.80.0.1 (bridge) --- zen4a 10.80.0.2, golden 10.80.0.3, zen4b 10.80.0.4
#
# The group `study` lists zen4a, golden, zen4b in that order; zen4a and zen4b simulate zen4
# (fl_study_cpu), so they split the study (shards 0/2 and 1/2: the place among the hosts
# of the model, not in the group), golden simulates golden-cove alone (0/1). The study is
# tiny: --footprint 8K,32K --alphas flat --calls 1000 --requests 1 --warmup 0 --no-mrc
# --no-leaf (two points under callgrind per model). Checks:
#   - ansible-playbook exits 0; each host's run directory came back with study/, study.log
#     and study.info, and the merged report <run>/study/ has study.json, study.csv,
#     summary.md and report.html;
#   - the merged study.json: status complete, two groups (zen4 with shards 0/2 and 1/2,
#     golden-cove with 0/1), four points measured, two per model; zen4 point 0 from
#     zen4a's directory (shard 0/2), point 1 from zen4b's (1/2), both golden-cove points
#     from golden's; every point tagged with a host and its CPU; the zen4 and golden-cove
#     L1i MPKI of every point are numbers;
#   - each host's study ran in its namespace: the network namespace of the study process,
#     recorded by the shell that became it (study.info), is the host's, and each host's
#     own directory (fl_root) holds its shard's study.json; each sshd logged the
#     controller's key;
#   - summary.md has the side-by-side table of the two models;
#   - afterwards no process of the test is left in any namespace, and after teardown no
#     namespace and no sshd of the test is left.
# Skipped (exit 77, reason last) without root, ip netns, a veth pair or a bridge,
# ansible-playbook, sshd, taskset or valgrind, and in a sanitizer build (valgrind cannot run
# it).
FL_WATCHDOG_S=${FL_WATCHDOG_S:-900}  # the playbook gets 720 s
. "$(dirname "$0")/common.inc"
. "$(dirname "$0")/netns_hosts.inc"

[ -z "${FL_SANITIZERS:-}" ] ||
	skip "valgrind cannot run a sanitizer build ($FL_SANITIZERS)"
command -v valgrind >/dev/null 2>&1 || skip "valgrind not installed (apt-get install valgrind)"
command -v jq >/dev/null 2>&1 || fail "jq not installed"
for f in frontload frontload-measure frontload-simreq; do
	[ -x "$B/$f" ] || fail "$B/$f not built"
done
PLAYBOOK=$FL_SRCDIR/runtime/deploy/study.yml
P=$$
HOSTS="zen4a golden zen4b"
ARGS="--footprint 8K,32K --alphas flat --calls 1000 --requests 1 --warmup 0 --no-mrc --no-leaf --jobs 1 --budget-min 30"

nh_require taskset
nh_up "fl-st-$P" 10.80.0 zen4a=2 golden=3 zen4b=4

cat >"$T/inventory.yml" <<EOF
all:
  vars:
$(nh_inventory_vars)
    fl_study_args: "$ARGS"
    fl_study_timeout_s: 700
    fl_study_poll_s: 2
  children:
    study:
      hosts:
        zen4a: { ansible_host: $(nh_ip zen4a), fl_study_cpu: zen4 }
        golden: { ansible_host: $(nh_ip golden), fl_study_cpu: golden-cove }
        zen4b: { ansible_host: $(nh_ip zen4b) }
EOF
export ANSIBLE_FORKS=3

t0=$(date +%s)
nh_playbook "$PLAYBOOK" -e fl_run_id=r1 >"$T/play.log" 2>&1 &
ppid=$!
FL_PIDS="$FL_PIDS $ppid"
FL_SERVERS="$FL_SERVERS play"  # fail() shows the log's end
wait_run "$ppid" "$t0" 720 "ansible-playbook (study)"
took=$(($(date +%s) - t0))
[ "$rc" = 0 ] || fail "ansible-playbook exit status $rc:" \
	"$(grep -E 'fatal|FAILED|ERROR|msg' "$T/play.log" | head -n 8)"
note "playbook done in $took s"

D=$T/results/r1
for h in $HOSTS; do
	for f in study/study.json study.log study.info config.json; do
		[ -e "$D/$h/$f" ] || fail "no $h/$f in the run directory:" \
			"$(cd "$D" && find . -type f | tr '\n' ' ')"
	done
done
M=$D/study
for f in study.json study.csv summary.md report.html; do
	[ -s "$M/$f" ] || fail "the merged report has no $f: $(find "$M" 2>&1 | tr "\n" " ")"
done
MJ=$M/study.json

# The merged study: complete, two models, each point from the shard that owns it.
got=$(jq -r '"\(.status) \(.fleet) \(.groups | length) \([.points[] | select(.status == "ok")] | length)"' "$MJ")
assert_eq "$got" "complete true 2 4" "merged status, fleet, groups, points measured"
got=$(jq -r '[.groups[] | "\(.cpu_model):\([.shards[] | "\(.index)/\(.count)"] | sort | join("+"))"] | sort | join(" ")' "$MJ")
assert_eq "$got" "golden-cove:0/1 zen4:0/2+1/2" "groups and their shards"
for m in zen4 golden-cove; do
	n=$(jq "[.points[] | select(.cpu_model == \"$m\" and .status == \"ok\")] | length" "$MJ")
	assert_eq "$n" 2 "$m points measured"
done
for w in "zen4 0 zen4a 0/2" "zen4 1 zen4b 1/2" "golden-cove 0 golden 0/1" "golden-cove 1 golden 0/1"; do
	# shellcheck disable=SC2086
	set -- $w
	got=$(jq -r ".points[] | select(.cpu_model == \"$1\" and .index == $2) | \"\(.shard_dir) \(.shard)\"" "$MJ")
	assert_eq "$got" "$D/$3/study $4" "$1 point $2's shard"
	hn=$(jq -r ".points[] | select(.cpu_model == \"$1\" and .index == $2) | .host" "$MJ")
	assert_eq "$hn" "$(jq -r .host.hostname "$D/$3/study/study.json")" "$1 point $2's host"
done
jq -e '[.points[] | .host != null and .host_cpu != null and (.l1i_mpki | type) == "number"]
	| all' "$MJ" >/dev/null ||
	fail "a point without host, host CPU or L1i MPKI: $(jq -c '[.points[] | {cpu_model, index, host, host_cpu, l1i_mpki}]' "$MJ")"
mpki() {
	jq -r ".points[] | select(.cpu_model == \"$1\" and .index == $2) | .l1i_mpki * 1000 | round / 1000" "$MJ"
}
z0=$(mpki zen4 0) z1=$(mpki zen4 1) g0=$(mpki golden-cove 0) g1=$(mpki golden-cove 1)
for v in "$z0" "$z1" "$g0" "$g1"; do
	flt "$v" ">=" 0 || fail "an L1i MPKI is not a number: zen4 $z0 $z1, golden-cove $g0 $g1"
done
grep -q '^## Side by side' "$M/summary.md" || fail "summary.md has no side-by-side table"
grep -q '| sweep 32 KiB, flat, 1000 calls | [0-9.]* | [0-9.]* |' "$M/summary.md" ||
	fail "no side-by-side row for the 32 KiB point: $(grep -A4 '^## Side by side' "$M/summary.md")"

# Each study ran in its host's namespace, in that host's own directory, reached over ssh.
for h in $HOSTS; do
	want=$(stat -L -c %i "/run/netns/$(nh_ns "$h")") || fail "stat /run/netns/$(nh_ns "$h")"
	got=$(sed -n 's/^netns net:\[\([0-9]*\)\]$/\1/p' "$D/$h/study.info")
	assert_eq "$got" "$want" "network namespace inode of $h's study process"
	[ -s "$T/hosts/$h/runs/r1/study/study.json" ] || fail "$h's own directory has no study.json"
	grep -q "Accepted publickey for root from 10.80.0.1" "$T/sshd-$h.log" ||
		fail "$h's sshd saw no login from the controller: $(tail -n 3 "$T/sshd-$h.log")"
done
assert_eq "$(sed -n 's/^shard //p' "$D/zen4b/study.info")" 1/2 "zen4b's shard (study.info)"
# golden's --shard 0/1 is the whole study (its study.json records no shard).
assert_eq "$(sed -n 's/^shard //p' "$D/golden/study.info")" 0/1 "golden's shard (study.info)"
assert_eq "$(jq -r '"\(.cpu_model) \([.points[] | select(.status == "ok")] | length)"' \
	"$D/golden/study/study.json")" "golden-cove 2" "golden's study.json model and points"

# Nothing of the study left in any namespace: only the sshds.
for h in $HOSTS; do
	left=$(nh_left "$h")
	[ -z "$left" ] || fail "processes left in the $h namespace: $left"
done

nh_teardown
nh_check_gone
echo "study over 3 hosts in $took s: zen4 shards 0/2 on zen4a and 1/2 on zen4b, golden-cove" \
	"0/1 on golden, merged complete (4 points); L1i MPKI 8 KiB / 32 KiB: zen4 $z0 / $z1," \
	"golden-cove $g0 / $g1; each study in its namespace"

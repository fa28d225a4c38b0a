#!/bin/sh
# deploy_netns.sh: runtime/deploy/site.yml across "hosts" made on this one.
#
# Four network namespaces (leaf, mock, two drivers), each with its own sshd on its own
# address and a key made for the test, hang off a bridge in a fifth (ctl) namespace, where
# ansible-playbook runs with an inventory naming them:
#
#   ctl 10.79.0.1 (bridge) --- leaf 10.79.0.2, mock 10.79.0.3, driver 10.79.0.4,
#                              driver2 10.79.0.5
#
# The namespaces share this host's filesystem, so each "host" gets its own directory
# (fl_root = $T/hosts/<host>); copying the build is checked by the build id stamped into
# the bundle's config.json (each host's copy must carry the controller's).
# The playbook runs a short fixed-rate run (10 qps, 3 s, leaf pinned to CPU 0). Checks:
#   - ansible-playbook exits 0 and the run directory holds every host's files: the leaf's
#     and the mock's logs, stats and process notes, the driver's run directory, and
#     result.json beside them (status complete);
#   - the leaf and the mock ran in their namespaces (the network namespace of each
#     process, recorded while it ran, is the namespace's), the leaf on CPU 0 with one
#     ranker thread (fl_cpus);
#   - result.json carries the remote stats (leaf_stats.source "wire", the final window's
#     stage CPU, the mock's end stats) and both remote clocks, and its build id is the
#     controller's, as is every host's installed config.json;
#   - the second driver host ran the run's second driver: the first driver host ssh'ed
#     into it (its sshd logged the key from 10.79.0.4), result.json names it
#     (instances[0].drivers[1].host) and that driver's OK replies are in the merged step;
#   - re-running the install part changes nothing (PLAY RECAP changed=0 on every host);
#   - afterwards no frontload process is left in any namespace, and after teardown no
#     namespace and no sshd of the test is left.
# The namespaces, sshds and teardown are netns_hosts.inc's (shared with
# deploy_study_netns.sh).
# Skipped (exit 77, reason last) without root, ip netns, a veth pair or a bridge,
# ansible-playbook, sshd, start-stop-daemon or taskset.
FL_WATCHDOG_S=${FL_WATCHDOG_S:-660}  # the run playbook gets 420 s, the re-run the rest
. "$(dirname "$0")/common.inc"
. "$(dirname "$0")/netns_hosts.inc"

RUN=$B/frontload
[ -x "$RUN" ] || fail "$RUN not built"
[ -x "$B/frontload-driver" ] || fail "$B/frontload-driver not built"
PLAYBOOK=$FL_SRCDIR/runtime/deploy/site.yml
P=$$
HOSTS="leaf mock driver driver2"
ip_of() {
	nh_ip "$1"
}

nh_require start-stop-daemon taskset
nh_up "fl-dep-$P" 10.79.0 leaf=2 mock=3 driver=4 driver2=5

cat >"$T/inventory.yml" <<EOF
all:
  vars:
$(nh_inventory_vars)
    fl_tls: true
  children:
    leaf:
      hosts:
        leafhost: { ansible_host: $(ip_of leaf), fl_cpus: "0" }
    mock:
      hosts:
        mockhost: { ansible_host: $(ip_of mock), fl_mock_threads: 1 }
    driver:
      hosts:
        driverhost:
          ansible_host: $(ip_of driver)
          fl_run_args: "--qps 10 --duration 3 --warmup-seconds 1"
          fl_driver_ssh: "$SSH"
        driver2host: { ansible_host: $(ip_of driver2) }
EOF
export ANSIBLE_FORKS=4
playbook() {
	nh_playbook "$PLAYBOOK" "$@"
}

t0=$(date +%s)
playbook -e fl_run_id=r1 >"$T/play1.log" 2>&1 &
ppid=$!
FL_PIDS="$FL_PIDS $ppid"
FL_SERVERS="$FL_SERVERS play1"  # fail() shows the log's end
# 420 s: on a 2-core VM where the leaf holds about 60 qps the playbook took 197 s idle
# and over 170 s in CI (every task starts Python over ssh on each host; 4 forks share the
# 2 CPUs), and the install re-run below about 100 s.
wait_run "$ppid" "$t0" 420 "ansible-playbook (run)"
[ "$rc" = 0 ] || fail "ansible-playbook exit status $rc: $(grep -E 'fatal|FAILED|ERROR' "$T/play1.log" | head -n 5)"
note "playbook run done in $(($(date +%s) - t0)) s"

D=$T/results/r1
for f in leafhost/leaf.log leafhost/leaf-stats.json leafhost/leaf.info mockhost/mock.log \
	mockhost/mock-stats.json mockhost/mock.info driverhost/run/result.json \
	driverhost/run/steps.csv result.json; do
	[ -e "$D/$f" ] || fail "no $f in the run directory: $(cd "$D" && find . -type f | tr '\n' ' ')"
done
R=$D/result.json
assert_eq "$(get "$R" status)" complete "result status"

# Each server ran in its namespace, the leaf on CPU 0.
for h in leaf mock; do
	want=$(stat -L -c %i "/run/netns/fl-dep-$P-$h") || fail "stat /run/netns/fl-dep-$P-$h"
	got=$(sed -n 's/^netns net:\[\([0-9]*\)\]$/\1/p' "$D/${h}host/$h.info")
	assert_eq "$got" "$want" "network namespace inode of the $h process"
done
assert_eq "$(sed -n 's/^cpus //p' "$D/leafhost/leaf.info")" 0 "leaf CPU affinity (fl_cpus)"
assert_eq "$(get "$D/leafhost/leaf-stats.json" config.ranker_threads)" 1 \
	"leaf ranker threads from fl_cpus"

# The remote stats and clocks, and one build everywhere.
I=instances.0
assert_eq "$(get "$R" $I.leaf_stats.source)" wire "leaf_stats.source"
cpu=$(get "$R" $I.leaf_stats.final_window.stages.extract.cpu_ns)
assert_gt "$cpu" 0 "final window extract cpu_ns over the wire"
assert_gt "$(get "$R" $I.mock_stats.end.requests)" 0 "the mock's end stats over the wire"
assert_eq "$(get "$R" clocks.hosts.0.role)" leaf "clocks.hosts.0"
assert_eq "$(get "$R" clocks.hosts.1.role)" mock "clocks.hosts.1"
[ "$(get "$R" clocks.within_bound)" != false ] || fail "clocks.within_bound false on one host"
id=$(get "$T/results/.deploy/bundle/bin/config.json" build_id)
[ ${#id} = 64 ] || fail "bundle build id '$id'"
assert_eq "$(get "$R" build.build_id)" "$id" "result.json build.build_id"
for h in leafhost mockhost driverhost driver2host; do
	assert_eq "$(get "$D/$h/config.json" build_id)" "$id" "$h's installed build id"
done

# The second driver, started over ssh from the first driver host on the second.
assert_eq "$(jq '.config.drivers' "$R")" 2 "config.drivers (one per driver host)"
assert_eq "$(jq -r '.instances[0].drivers[1].host' "$R")" "root@$(ip_of driver2)" \
	"the second driver's host"
ok2=$(jq '.steps[-1].instances[0].drivers[1].ok' "$R")
assert_gt "$ok2" 0 "OK replies of the driver on driver2host"
grep -q "Accepted publickey for root from $(ip_of driver)" "$T/sshd-driver2.log" ||
	fail "driver2host's sshd saw no login from the first driver host: $(tail -n 3 "$T/sshd-driver2.log")"

# Nothing of the run left in any namespace: only the sshds.
for h in $HOSTS; do
	left=$(nh_left "$h")
	[ -z "$left" ] || fail "processes left in the $h namespace: $left"
done

# The install part again: nothing to change.
FL_SERVERS="$FL_SERVERS play2"
playbook -e fl_run_id=r2 --tags install >"$T/play2.log" 2>&1 ||
	fail "ansible-playbook --tags install: $(grep -E 'fatal|ERROR' "$T/play2.log" | head -n 3)"
recap=$(sed -n '/PLAY RECAP/,$p' "$T/play2.log" | grep -c 'changed=0')
assert_eq "$recap" 5 "hosts with changed=0 on re-running the install (localhost + 4)"

nh_teardown
nh_check_gone
echo "deploy: leaf in its namespace on CPU 0, final window extract $cpu ns over the wire," \
	"build ${id%"${id#????????????}"} on 4 hosts, driver 2 over ssh ($ok2 OK), install" \
	"re-run changed=0"

#!/bin/sh
# netns.sh: mock, leaf and driver in three network namespaces, over veth pairs.
#
#   ns A (mock)  10.77.1.1 --veth-- 10.77.1.2  ns B (leaf)  10.77.2.2 --veth-- 10.77.2.1  ns C (driver)
#
# The mock listens on 10.77.1.1; the leaf listens (TLS) on 10.77.2.2 and fans out to the
# mock at 10.77.1.1 over TLS; the driver in C sends 20 QPS (fixed gaps) for 5 s to
# 10.77.2.2. A and C have no route to each other, so all traffic crosses B.
# Checks: the driver cannot reach the mock from C (the topology is real); every driver
# request OK; the leaf made fanout calls (> 0, all OK, as many as the mock answered) with
# a TLS cipher, and its listener negotiated TLS with the driver.
# Skipped (common.inc's skip: exit 77, last line "skipped: ...") only when this
# environment cannot create network namespaces or veth pairs (not root, no iproute2, no
# CAP_SYS_ADMIN/CAP_NET_ADMIN, no veth driver). The namespaces are deleted on exit, failure included.
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"

NSA=fl-it-$$-a
NSB=fl-it-$$-b
NSC=fl-it-$$-c
FL_NETNS=""
A_IP=10.77.1.1
BA_IP=10.77.1.2
B_IP=10.77.2.2
C_IP=10.77.2.1
QPS=20
WARMUP=1
DURATION=5
N=$((QPS * DURATION))
NALL_MIN=$((QPS * (WARMUP + DURATION) - 1))  # the warm-up may hold one fewer

ns_cleanup() {
	for ns in $FL_NETNS; do
		ip netns del "$ns" 2>/dev/null
	done
	FL_NETNS=""
}
# Processes first (common.inc's cleanup), then the namespaces they ran in.
trap 'fl_cleanup; ns_cleanup' EXIT

# Can this environment make namespaces and veth pairs at all?
[ "$(id -u)" = 0 ] || skip "network namespaces need root (uid $(id -u))"
command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
if ! ip netns add "$NSA" 2>"$T/ns.err"; then
	skip "ip netns add failed: $(head -n 1 "$T/ns.err")"
fi
FL_NETNS="$NSA"
if ! ip netns exec "$NSA" true 2>"$T/ns.err"; then
	skip "ip netns exec failed: $(head -n 1 "$T/ns.err")"
fi
ip netns add "$NSB" || fail "ip netns add $NSB failed (after $NSA worked)"
FL_NETNS="$FL_NETNS $NSB"
ip netns add "$NSC" || fail "ip netns add $NSC failed (after $NSA worked)"
FL_NETNS="$FL_NETNS $NSC"
if ! ip -n "$NSA" link add va type veth peer name vba netns "$NSB" 2>"$T/ns.err"; then
	skip "cannot create a veth pair: $(head -n 1 "$T/ns.err")"
fi
ip -n "$NSB" link add vbc type veth peer name vc netns "$NSC" ||
	fail "second veth pair could not be created"
setup() {
	ip -n "$1" link set lo up &&
		ip -n "$1" link set "$2" up &&
		ip -n "$1" addr add "$3/24" dev "$2"
}
setup "$NSA" va "$A_IP" || fail "setting up $NSA"
setup "$NSB" vba "$BA_IP" || fail "setting up $NSB (towards A)"
ip -n "$NSB" link set vbc up && ip -n "$NSB" addr add "$B_IP/24" dev vbc ||
	fail "setting up $NSB (towards C)"
setup "$NSC" vc "$C_IP" || fail "setting up $NSC"
note "namespaces $NSA ($A_IP), $NSB ($BA_IP, $B_IP), $NSC ($C_IP)"

# start_server puts --port-file first, so each namespace gets a wrapper that execs its
# program inside it (ip netns exec execs too: the PID is the server's).
for w in mock:"$NSA":"$MOCK" leaf:"$NSB":"$LEAF"; do
	name=${w%%:*}
	rest=${w#*:}
	printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "${rest%%:*}" "${rest#*:}" \
		>"$T/$name-in-ns"
	chmod +x "$T/$name-in-ns"
done

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$T/mock-in-ns" --host "$A_IP" --port 0 --tls-dir "$T/tls" --threads 1 \
	--corpus-mb 16 --latency-cap-us 2000 --stats-file "$T/mock.json" --quiet
start_server leaf "$T/leaf-in-ns" --host "$B_IP" --port 0 --tls --tls-dir "$T/tls" \
	--lib "$LIB" --mock "$A_IP:$mock_port" --extractors-per-story 20 --ranker-threads 2 \
	--io-threads 1 --fanout-threads 1 --rpc-fanout-scale 0.01 --rpc-channels 2 \
	--stats-file "$T/leaf.json" --quiet

# A and C share no link: the mock must be unreachable from C.
if ip netns exec "$NSC" "$DRIVER" --leaf "$A_IP:$mock_port" --qps 1 --warmup 0 \
	--duration 0.1 --quiet >"$T/unreach.log" 2>&1; then
	fail "the driver in $NSC reached the mock in $NSA directly: namespaces not isolated"
fi
note "mock unreachable from $NSC: $(head -n 1 "$T/unreach.log")"

note "driver in $NSC: $QPS qps (TLS) to $B_IP:$leaf_port for $DURATION s"
ip netns exec "$NSC" "$DRIVER" --leaf "$B_IP:$leaf_port" --tls --tls-dir "$T/tls" \
	--qps "$QPS" --arrival fixed --warmup "$WARMUP" --duration "$DURATION" \
	--connections 2 --depth 8 --timeout-s 10 --json "$T/driver.json" \
	>"$T/driver.log" 2>&1 &
dpid=$!
FL_PIDS="$FL_PIDS $dpid"
wait "$dpid"
drc=$?
forget "$dpid"
[ "$drc" = 0 ] || fail "driver exit status $drc: $(tail -n 3 "$T/driver.log" | tr '\n' ' ')"

J=$T/driver.json
assert_eq "$(get "$J" leaf)" "$B_IP:$leaf_port" "driver's leaf address"
assert_eq "$(get "$J" steps.0.sent)" "$N" "requests sent"
assert_eq "$(get "$J" steps.0.ok)" "$N" "requests OK"
assert_eq "$(get "$J" steps.0.timeouts)" 0 "timeouts"
assert_eq "$(get "$J" steps.0.errors.total)" 0 "driver errors ($(get "$J" steps.0.errors))"
p95=$(get "$J" steps.0.latency_ms.p95)

stop_server leaf
assert_eq "$leaf_rc" 0 "leaf exit status after SIGTERM"
stop_server mock
assert_eq "$mock_rc" 0 "mock exit status after SIGTERM"
L=$T/leaf.json
lrecv=$(get "$L" requests.received)
assert_ge "$lrecv" "$NALL_MIN" "leaf requests received (measured + warm-up)"
assert_eq "$(get "$L" requests.ok)" "$lrecv" "leaf requests OK (warm-up included)"
calls=$(get "$L" fanout.calls)
assert_gt "$calls" 0 "leaf fanout calls"
assert_eq "$(get "$L" fanout.ok)" "$calls" "leaf fanout calls OK"
assert_eq "$(get "$L" fanout.errors)" 0 "leaf fanout errors"
assert_eq "$(get "$T/mock.json" requests)" "$calls" "mock requests (the leaf's fanout calls)"
cipher=$(get "$L" fanout.cipher)
case $cipher in *TLS*) ;; *) fail "leaf-to-mock channels negotiated no TLS cipher: '$cipher'" ;; esac
lc=$(get "$L" connections.listener_cipher)
case $lc in *TLS*) ;; *) fail "leaf listener negotiated no TLS cipher with the driver: '$lc'" ;; esac

echo "3 namespaces: $N/$N OK from $C_IP to $B_IP, p95 $(printf %.1f "$p95") ms," \
	"$calls fanout calls to $A_IP over $cipher, $(elapsed) s"

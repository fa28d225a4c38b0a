#!/bin/sh
# leaf_shed_unread.sh: the leaf judges a request on its header. One it sheds is answered
# before its payload has arrived, and the payload is dropped unread (on plain TCP the
# kernel drops it: recv with MSG_TRUNC), the stream kept in step.
#
# mock + leaf (small knobs, plain TCP listener). Steps:
#   1. expired-head: leaf-client sends a request whose deadline passed long ago, its
#      header and half of its 4 MiB payload, and leaves the connection open. The leaf
#      answers DEADLINE_EXCEEDED ("deadline: passed on arrival") without the rest; a leaf
#      that waited for the whole frame would stay silent until the client's timeout.
#      Stats: requests.shed_unread and expired_at_admit 1, bytes_skipped = the payload
#      length, 0 < bytes_skipped_kernel <= bytes_skipped (what the kernel dropped of the
#      half that came).
#   2. large requests past capacity: a leaf with one RANKER thread, 2,000 extractor calls
#      per story and --inflight-limit 1; frontload-driver offers 60 qps of 1 MiB requests
#      on one connection for 4 s. Requests arriving while one runs are shed OVERLOADED on
#      their header, their payloads dropped in the kernel, and the next frame on the same
#      connection must be read from its first byte: the driver sees OK and OVERLOADED
#      replies and nothing else (no protocol errors, timeouts or lost connections, which a
#      stream out of step would give), both kinds > 0; the leaf's shed_unread grew by at
#      least the driver's OVERLOADED count in the measured window, and its
#      bytes_skipped_kernel by more than half of bytes_skipped.
#   3. step 2 over TLS (leaf --tls, driver --tls): the same replies and counts, but the
#      kernel drops nothing (bytes_skipped_kernel 0): the shed payloads are decrypted and
#      drained.
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"
MIB=1048576

# 1. A request whose deadline passed, half its payload sent.
start_small 16 --stats-file "$T/leaf.json"
"$CLIENT" --port "$leaf_port" --garbage expired-head --request-size $((4 * MIB)) \
	--timeout-s 10 --json "$T/g.json" >"$T/g.log" 2>&1 ||
	fail "1: expired-head: $(tail -n 2 "$T/g.log" | tr '\n' ' ')"
assert_eq "$(get "$T/g.json" outcome)" reply "1: the leaf answered before the rest came"
assert_eq "$(get "$T/g.json" status)" 6 "1: status DEADLINE_EXCEEDED"
assert_eq "$(get "$T/g.json" message)" "deadline: passed on arrival" "1: error message"
snapshot leaf "$T/leaf.json" "$T/s1.json"
assert_eq "$(get "$T/s1.json" requests.shed_unread)" 1 "1: requests.shed_unread"
assert_eq "$(get "$T/s1.json" requests.expired_at_admit)" 1 "1: requests.expired_at_admit"
skipped=$(get "$T/s1.json" bytes_skipped)
kernel=$(get "$T/s1.json" bytes_skipped_kernel)
assert_ge "$skipped" $((4 * MIB - 64 * 1024)) "1: bytes_skipped (the payload's length)"
assert_le "$skipped" $((4 * MIB)) "1: bytes_skipped (the payload's length)"
assert_gt "$kernel" 0 "1: bytes_skipped_kernel"
assert_le "$kernel" "$skipped" "1: bytes_skipped_kernel <= bytes_skipped"
note "1: answered on the header; $skipped payload bytes skipped, $kernel of them in the kernel"
stop_server leaf
stop_server mock

# past STEP [--tls]: a leaf that sheds (one RANKER thread, 2,000 calls per story, inflight
# limit 1) and the driver at 60 qps of 1 MiB requests on one connection for 4 s. Checks
# the driver saw OK and OVERLOADED replies only and the leaf shed at least that many on
# the header; sets ok, ovl and, over the step, shed, dsk (bytes_skipped) and dkern
# (bytes_skipped_kernel).
past() {
	p_step=$1
	shift
	start_small 16 --stats-file "$T/leaf$p_step.json" --ranker-threads 1 \
		--extractors-per-story 2000 --inflight-limit 1 "$@"
	snapshot leaf "$T/leaf$p_step.json" "$T/a$p_step.json"
	p_tls=""
	[ $# -eq 0 ] || p_tls="--tls --tls-dir $T/tls"
	# shellcheck disable=SC2086 # p_tls: two flags or none
	start_driver "$DRIVER" --leaf "127.0.0.1:$leaf_port" $p_tls --qps 60 --warmup 1 \
		--duration 4 --connections 1 --depth 256 --threads 1 --timeout-s 10 \
		--request-size "$MIB" --json "$T/driver$p_step.json"
	wait_driver
	assert_eq "$drc" 0 "$p_step: driver exit status"
	snapshot leaf "$T/leaf$p_step.json" "$T/b$p_step.json"
	p_j=$T/driver$p_step.json
	ok=$(get "$p_j" steps.0.ok)
	ovl=$(get "$p_j" steps.0.overloaded)
	assert_gt "$ok" 0 "$p_step: OK replies"
	assert_gt "$ovl" 0 "$p_step: OVERLOADED replies"
	assert_eq "$(get "$p_j" steps.0.errors.total)" 0 "$p_step: errors (protocol, lost connections...)"
	assert_eq "$(get "$p_j" steps.0.timeouts)" 0 "$p_step: timeouts"
	shed=$(delta requests.shed_unread)
	dsk=$(delta bytes_skipped)
	dkern=$(delta bytes_skipped_kernel)
	assert_ge "$shed" "$ovl" "$p_step: the leaf's shed_unread (warm-up included) >= the driver's OVERLOADED"
	stop_server leaf
	stop_server mock
}
delta() { echo $(($(get "$T/b$p_step.json" "$1") - $(get "$T/a$p_step.json" "$1"))); }

# 2. Large requests past the leaf's capacity, one connection: dropped in the kernel.
past 2
assert_gt "$((2 * dkern))" "$dsk" "2: bytes_skipped_kernel > half of bytes_skipped"
line2="$ok OK, $ovl OVERLOADED, $shed shed unread ($dkern of $dsk payload bytes dropped in the kernel)"

# 3. The same over TLS: the payloads are decrypted and drained, not dropped in the kernel.
past 3 --tls
assert_gt "$dsk" 0 "3: bytes_skipped (TLS)"
assert_eq "$dkern" 0 "3: bytes_skipped_kernel (TLS: drained)"
echo "shed on the header: expired request answered before its payload; 60 qps of 1 MiB on one connection: $line2; over TLS $ok OK, $ovl OVERLOADED, $shed shed and drained; no errors, $(elapsed) s"

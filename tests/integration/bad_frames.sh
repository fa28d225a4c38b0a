#!/bin/sh
# bad_frames.sh: every leaf-client --garbage mode against the leaf and the mock; both stay up and count it.
#
# 1. each bad input to the leaf gets an error reply or a close, and 2 normal requests
#    afterwards get OK replies; an unknown inbound method is refused
# 2. the same against the mock (TLS, RpcRequests), plus an unknown outbound method and
#    plain bytes sent to its TLS port
# 3. the bad-frame counters of both servers' stats match what was sent
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

MODES="bad-magic bad-version bad-type bad-flags truncated oversized random bad-payload bad-zstd"

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 8 \
	--stats-file "$T/mock.json" --quiet
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--extractors-per-story 50 --ranker-threads 2 --fanout-threads 1 --rpc-channels 2 \
	--stats-file "$T/leaf.json" --quiet

# garbage NAME MODE ARGS...: one bad input, then a normal run on a new connection.
replies=0
closes=0
garbage() {
	g_name=$1
	g_mode=$2
	shift 2
	"$CLIENT" --garbage "$g_mode" --timeout-s 5 --json "$T/g.json" "$@" >"$T/client.log" 2>&1 ||
		fail "$g_name, --garbage $g_mode: $(tail -n 2 "$T/client.log" | tr '\n' ' ')"
	case $(get "$T/g.json" outcome) in
	reply) replies=$((replies + 1)) ;;
	*) closes=$((closes + 1)) ;;
	esac
	note "$g_name: $(head -n 1 "$T/client.log")"
	eval "g_pid=\$${g_name}_pid"
	running "$g_pid" || fail "$g_name died after --garbage $g_mode"
}

# 1. The leaf.
for m in $MODES; do
	garbage leaf "$m" --port "$leaf_port"
	client --port "$leaf_port" --requests 2 --request-size 4096 --seed 11 --json "$T/ok.json"
	assert_eq "$(get "$T/ok.json" status.ok)" 2 "1: leaf OK replies after --garbage $m"
done
client --port "$leaf_port" --requests 3 --request-size 4096 --method 9 --json "$T/m9.json"
refused=$(($(get "$T/m9.json" status.bad_request) + $(get "$T/m9.json" status.denied)))
assert_eq "$refused" 3 "1: leaf replies to inbound method 9 refused (bad_request or denied)"
leaf_replies=$replies leaf_closes=$closes

# 2. The mock.
replies=0
closes=0
for m in $MODES; do
	garbage mock "$m" --port "$mock_port" --tls --tls-dir "$T/tls" --rpc
	client --port "$mock_port" --tls --tls-dir "$T/tls" --rpc --requests 2 --request-size 256 \
		--reply-bytes 1000 --seed 11 --json "$T/ok.json"
	assert_eq "$(get "$T/ok.json" status.ok)" 2 "2: mock OK replies after --garbage $m"
done
client --port "$mock_port" --tls --tls-dir "$T/tls" --rpc --requests 2 --method 25 \
	--request-size 256 --json "$T/m25.json"
assert_eq "$(get "$T/m25.json" status.bad_request)" 2 "2: mock replies to outbound method 25"
garbage mock random --port "$mock_port"
client --port "$mock_port" --tls --tls-dir "$T/tls" --rpc --requests 2 --request-size 256 \
	--json "$T/ok.json"
assert_eq "$(get "$T/ok.json" status.ok)" 2 "2: mock OK replies after plain bytes on TLS"
mock_replies=$replies mock_closes=$closes

# 3. Counters.
stop_server leaf
assert_eq "$leaf_rc" 0 "3: leaf exit status after SIGTERM"
L=$T/leaf.json
# random's first four bytes are not the magic: two bad-magic frames.
assert_eq "$(get "$L" frames.bad_magic)" 2 "3: leaf frames.bad_magic (bad-magic, random)"
assert_eq "$(get "$L" frames.bad_version)" 1 "3: leaf frames.bad_version"
assert_eq "$(get "$L" frames.bad_type)" 1 "3: leaf frames.bad_type"
assert_eq "$(get "$L" frames.bad_flags)" 1 "3: leaf frames.bad_flags"
assert_eq "$(get "$L" frames.too_long)" 1 "3: leaf frames.too_long (oversized)"
assert_ge "$(get "$L" requests.bad_request)" 5 "3: leaf requests.bad_request (bad-payload, bad-zstd, method 9)"
assert_eq "$(get "$L" requests.ok)" 18 "3: leaf requests.ok"
assert_eq "$(get "$L" requests.internal)" 0 "3: leaf requests.internal"
stop_server mock
assert_eq "$mock_rc" 0 "3: mock exit status after SIGTERM"
M=$T/mock.json
assert_eq "$(get "$M" bad_frames_by_kind.bad_magic)" 2 "3: mock bad_magic (bad-magic, random)"
assert_eq "$(get "$M" bad_frames_by_kind.bad_version)" 1 "3: mock bad_version"
assert_eq "$(get "$M" bad_frames_by_kind.bad_type)" 1 "3: mock bad_type"
assert_eq "$(get "$M" bad_frames_by_kind.bad_flags)" 1 "3: mock bad_flags"
assert_eq "$(get "$M" bad_frames_by_kind.too_long)" 1 "3: mock too_long (oversized)"
assert_eq "$(get "$M" bad_payloads)" 2 "3: mock bad_payloads (bad-payload, bad-zstd)"
assert_eq "$(get "$M" unknown_methods)" 2 "3: mock unknown_methods (method 25)"
assert_ge "$(get "$M" handshake_failures)" 1 "3: mock handshake failures (plain bytes on TLS)"
assert_eq "$(get "$M" internal_errors)" 0 "3: mock internal errors"

echo "leaf: $leaf_replies error replies, $leaf_closes closed; mock: $mock_replies error replies," \
	"$mock_closes closed; both served normal requests after each; counters match, $(elapsed) s"

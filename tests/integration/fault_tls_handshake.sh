#!/bin/sh
# fault_tls_handshake.sh: TLS clients stuck mid-handshake block nobody.
#
# The mock (TLS) and a --tls leaf fanning out to it. A stuck client is a few lines of
# perl (perl-base, IO::Socket::INET only) holding HOLD connections to one server: half
# connect and send nothing, half send the first 31 bytes of a ClientHello (a record
# header announcing 512 bytes, then stop) and wait. Both servers get HOLD each. While they
# hang:
#   - 100 requests over TLS to the leaf (new connections, so new handshakes) are all OK,
#     with fanout calls to the mock and no fanout errors, p95 <= 3 x the p95 before the
#     stuck clients + 100 ms;
#   - 40 RpcRequests over TLS straight to the mock (a new handshake there) are all OK;
#   - the leaf counts the stuck connections: connections.accepted - tls_handshakes >= HOLD.
# When the stuck clients go (SIGKILL: the kernel closes their sockets):
#   - the leaf closes every one of them (connections.closed = accepted within 5 s);
#   - the mock, stopped with SIGTERM while a second batch of HOLD stuck connections is
#     open, exits 0 within 5 s (its 1 s grace), its final stats count a handshake failure
#     for each stuck connection of the first batch (>= HOLD) and no internal errors;
#   - the leaf, also stopped with a second batch stuck on it, exits 0 within 5 s.
# Neither server bounds how long a handshake may take: a stuck client holds one fd until
# it goes (see tests/reliability/README.md).
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

command -v perl >/dev/null 2>&1 || fail "perl not found (perl-base)"
HOLD=16

# stuck.pl PORT N HOLD_S: N connections, odd ones silent, even ones a partial ClientHello.
cat >"$T/stuck.pl" <<'EOF'
use strict;
use warnings;
use IO::Socket::INET;
my ($port, $n, $hold) = @ARGV;
$SIG{PIPE} = 'IGNORE';
# TLS record: handshake (22), version 3.1, length 512; ClientHello (1), length 508;
# client_version 3.3 and 20 of the 32 random bytes. The rest never comes.
my $partial = pack('C n n', 22, 0x0301, 512) . pack('C C n', 1, 0, 508) .
	pack('n', 0x0303) . ('r' x 20);
my @socks;
for my $i (1 .. $n) {
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp')
		or die "connect $i: $!\n";
	syswrite($s, $partial) if $i % 2 == 0;
	push @socks, $s;
}
print "held ", scalar(@socks), "\n";
STDOUT->flush();
sleep $hold;
EOF

# stuck NAME PORT: start a stuck client (pid in NAME_pid), wait until it holds HOLD.
stuck() {
	perl "$T/stuck.pl" "$2" $HOLD 120 >"$T/$1.out" 2>&1 &
	eval "$1_pid=$!"
	FL_PIDS="$FL_PIDS $!"
	s_i=0
	until grep -q '^held' "$T/$1.out" 2>/dev/null; do
		s_i=$((s_i + 1))
		[ "$s_i" -le 100 ] || fail "stuck client $1: $(cat "$T/$1.out")"
		sleep 0.1
	done
	assert_eq "$(cat "$T/$1.out")" "held $HOLD" "stuck client $1 connections"
}
unstuck() {
	eval "u_pid=\$$1_pid"
	kill -9 "$u_pid"
	{ wait "$u_pid"; } 2>/dev/null
	forget "$u_pid"
}
# stop_within NAME LIMIT_S: SIGTERM NAME and check it exits 0 within LIMIT_S.
stop_within() {
	sw_t0=$(date +%s%N)
	stop_server "$1"
	sw_ms=$((($(date +%s%N) - sw_t0) / 1000000))
	eval "sw_rc=\$$1_rc"
	assert_eq "$sw_rc" 0 "$1 exit status after SIGTERM with $HOLD stuck handshakes"
	assert_le "$sw_ms" $(($2 * 1000)) "$1 stop time (ms) with $HOLD stuck handshakes"
	note "$1 stopped in $sw_ms ms"
}

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 8 \
	--latency-cap-us 5000 --stats-file "$T/mock.json" --quiet
start_server leaf "$LEAF" --port 0 --tls --lib "$LIB" --tls-dir "$T/tls" \
	--mock "127.0.0.1:$mock_port" --extractors-per-story 50 --ranker-threads 2 \
	--fanout-threads 1 --rpc-channels 2 --stats-file "$T/leaf.json" --quiet
tls="--tls --tls-dir $T/tls"

note "baseline: 60 TLS requests to the leaf"
# shellcheck disable=SC2086
client --port "$leaf_port" $tls --requests 60 --depth 2 --connections 2 --request-size 20000 \
	--reply-bytes 10000 --seed 1 --json "$T/base.json" --timeout-s 40
assert_eq "$(get "$T/base.json" status.ok)" 60 "baseline OK replies"
p95_base=$(get "$T/base.json" latency_us.p95)

note "$HOLD stuck handshakes on the mock and $HOLD on the leaf"
stuck sm "$mock_port"
stuck sl "$leaf_port"
sleep 1

# shellcheck disable=SC2086
client --port "$leaf_port" $tls --requests 100 --depth 2 --connections 2 --request-size 20000 \
	--reply-bytes 10000 --seed 2 --json "$T/c.json" --timeout-s 40
C=$T/c.json
assert_eq "$(get "$C" status.ok)" 100 "TLS leaf OK replies beside stuck handshakes"
assert_eq "$(get "$C" errors.total)" 0 "TLS leaf client errors ($(get "$C" first_error))"
assert_gt "$(get "$C" fanout_calls.min)" 0 "fanout calls per reply"
assert_eq "$(get "$C" fanout_errors.sum)" 0 "fanout errors beside stuck handshakes on the mock"
p95=$(get "$C" latency_us.p95)
assert_le "$p95" $((3 * p95_base + 100000)) "TLS leaf p95 (us) beside stuck handshakes (before: $p95_base)"
# shellcheck disable=SC2086
client --port "$mock_port" $tls --rpc --requests 40 --depth 4 --request-size 256 \
	--reply-bytes 1000 --json "$T/m.json" --timeout-s 30
assert_eq "$(get "$T/m.json" status.ok)" 40 "mock OK replies over a new TLS connection"

snapshot leaf "$T/leaf.json" "$T/s1.json"
acc=$(get "$T/s1.json" connections.accepted)
hs=$(get "$T/s1.json" connections.tls_handshakes)
assert_ge $((acc - hs)) $HOLD "leaf connections accepted ($acc) - TLS handshakes ($hs)"
running "$sm_pid" && running "$sl_pid" || fail "a stuck client was disconnected"

note "stuck clients go"
unstuck sm
unstuck sl
i=0
while :; do
	snapshot leaf "$T/leaf.json" "$T/s2.json"
	[ "$(get "$T/s2.json" connections.closed)" = "$(get "$T/s2.json" connections.accepted)" ] && break
	i=$((i + 1))
	[ "$i" -le 25 ] || fail "leaf: $(get "$T/s2.json" connections.closed) of" \
		"$(get "$T/s2.json" connections.accepted) connections closed 5 s after the stuck clients left"
	sleep 0.2
done

note "a second batch, then SIGTERM to both servers"
stuck sm2 "$mock_port"
stuck sl2 "$leaf_port"
sleep 0.5
stop_within leaf 5
stop_within mock 5
unstuck sm2
unstuck sl2
M=$T/mock.json
hf=$(get "$M" handshake_failures)
assert_ge "$hf" $HOLD "mock handshake_failures (first batch of $HOLD)"
assert_eq "$(get "$M" internal_errors)" 0 "mock internal errors"
assert_ge "$(get "$M" requests)" 40 "mock OK requests"
assert_eq "$(get "$T/leaf.json" requests.ok)" 160 "leaf OK requests in all"

echo "$HOLD stuck TLS handshakes on each server (silent / partial ClientHello): leaf 100/100 ok" \
	"(p95 $((p95 / 1000)) ms, before $((p95_base / 1000)) ms), mock 40/40 ok, leaf closed all" \
	"on release, mock handshake_failures $hf, both stop in < 5 s while stuck, $(elapsed) s"

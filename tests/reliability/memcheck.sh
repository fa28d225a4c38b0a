#!/bin/sh
# memcheck.sh: the leaf under valgrind memcheck: no memory errors, nothing definitely lost.
#
# Not run by `ninja test` (slow: ~1-3 min). Usage, from anywhere:
#   FL_BUILDDIR=/path/to/build sh tests/reliability/memcheck.sh
# (FL_SRCDIR defaults to this tree; the build should be `configure --copies=2`, so the
# library the leaf loads is small.) Keeps valgrind's log as MEMCHECK_LOG (default
# $FL_BUILDDIR/memcheck-leaf.log).
#
# The mock runs natively; the leaf runs under
#   valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite
#     --soname-synonyms=somalloc=libjemalloc.so*  (memcheck's malloc replaces jemalloc's
#     too, in a configure --malloc=jemalloc build; nothing to replace with glibc)
# with small knobs (1 thread per pool, 1 mock channel, 20 extractor calls per story, a
# 1 MiB corpus from a directory, 512 DLRM rows) and sees, on plain TCP:
#   - 20 requests (sampled sizes capped at 256 KiB, zstd replies for half);
#   - a bad-magic frame and an undecodable payload (error paths);
#   - a client SIGKILLed with 16 requests in flight (dropped replies);
#   - a client that never reads 24 replies of 256 KiB (dropped as slow: --max-output-bytes
#     1 MiB; 64 KiB would also drop clients that read, slowed by valgrind);
#   - a stuck connection still open at SIGTERM;
# then SIGTERM. Passes when the leaf exits 0, the valgrind log says "definitely lost: 0
# bytes" (or "no leaks are possible") and "ERROR SUMMARY: 0 errors".
# The last line printed is the summary (definitely / indirectly / possibly lost, errors).
# shellcheck disable=SC2154 # NAME_port, NAME_pid, NAME_rc: set by start_server, stop_server
set -u
: "${FL_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
export FL_SRCDIR
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
export FL_WATCHDOG_S=${FL_WATCHDOG_S:-900}
. "$FL_SRCDIR/tests/integration/common.inc"

command -v valgrind >/dev/null 2>&1 || fail "valgrind not installed (apt-get install valgrind)"
command -v perl >/dev/null 2>&1 || fail "perl not found (perl-base)"
LOG=${MEMCHECK_LOG:-$B/memcheck-leaf.log}

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 8 \
	--latency-cap-us 2000 --quiet
# A 1 MiB corpus from a directory: generating the default 64 MiB under memcheck is slow.
mkdir -p "$T/corpus"
head -c 1048576 /dev/urandom >"$T/corpus/a.bin" || fail "cannot make the corpus"

note "leaf under valgrind (log $LOG)"
# start_server puts --port-file first: a wrapper keeps it on the leaf's command line.
cat >"$T/leaf-vg.sh" <<EOF2
#!/bin/sh
OPENBLAS_NUM_THREADS=1 exec valgrind --tool=memcheck --leak-check=full \\
	--soname-synonyms=somalloc=libjemalloc.so* --errors-for-leak-kinds=definite --num-callers=30 --log-file="$LOG" "$LEAF" "\$@"
EOF2
chmod +x "$T/leaf-vg.sh"
start_server leaf "$T/leaf-vg.sh" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock "127.0.0.1:$mock_port" \
	--io-threads 1 --ranker-threads 1 --fanout-threads 1 --rpc-channels 1 \
	--extractors-per-story 20 --emb-rows 512 --sessions-max 1000 --corpus-dir "$T/corpus" \
	--max-frame-bytes 4194304 --max-reply-bytes 262144 --max-output-bytes 1048576 \
	--stats-file "$T/leaf.json" --quiet
note "leaf up under memcheck"

client --port "$leaf_port" --requests 10 --depth 2 --max-request-bytes 262144 --seed 1 \
	--json "$T/c1.json" --timeout-s 240
assert_eq "$(get "$T/c1.json" status.ok)" 10 "OK replies"
client --port "$leaf_port" --requests 10 --depth 2 --max-request-bytes 262144 --seed 2 --zstd \
	--method-mix --json "$T/c2.json" --timeout-s 240
assert_eq "$(get "$T/c2.json" status.ok)" 10 "OK replies (zstd, method mix)"
for g in bad-magic bad-payload; do
	"$CLIENT" --port "$leaf_port" --garbage $g --timeout-s 60 --json "$T/g.json" >"$T/client.log" 2>&1 ||
		fail "--garbage $g: $(tail -n 2 "$T/client.log" | tr '\n' ' ')"
done

note "a client killed with 16 requests in flight"
"$CLIENT" --port "$leaf_port" --requests 1000 --depth 16 --request-size 20000 \
	--reply-bytes 10000 --timeout-s 240 --json "$T/k.json" >"$T/client.log" 2>&1 &
kpid=$!
FL_PIDS="$FL_PIDS $kpid"
i=0
while :; do
	snapshot leaf "$T/leaf.json" "$T/s.json"
	[ "$(get "$T/s.json" overheads.inflight)" -ge 8 ] && break
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "the leaf never held 8 requests of the killed client"
	sleep 0.2
done
kill -9 "$kpid"
{ wait "$kpid"; } 2>/dev/null
forget "$kpid"
i=0
while :; do
	snapshot leaf "$T/leaf.json" "$T/s.json"
	[ "$(get "$T/s.json" overheads.inflight)" = 0 ] && break
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "inflight not back to 0 after the killed client"
	sleep 0.5
done
assert_gt "$(get "$T/s.json" requests.dropped_disconnected)" 0 "dropped_disconnected"

note "a client that never reads"
cat >"$T/slow.pl" <<'EOF2'
use strict;
use warnings;
use IO::Socket::INET;
my ($port, $n, $reply) = @ARGV;
$SIG{PIPE} = 'IGNORE';
sub varint { my $v = shift; my $s = ''; while ($v >= 0x80) { $s .= chr(($v & 0x7f) | 0x80); $v >>= 7; } return $s . chr($v); }
my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or die "connect: $!\n";
for my $i (1 .. $n) {
	my $req = chr(0x10) . varint(7) . chr(0x18) . varint(7) . chr(0x38) . varint($reply);
	syswrite($s, pack('N C C n N N Q> Q> Q>', 0x464c5731, 1, 1, 0, length $req, 0, $i, 1 << 62, 0) . $req);
}
print "sent\n";
STDOUT->flush();
sleep 600;
EOF2
perl "$T/slow.pl" "$leaf_port" 24 262144 >"$T/slow.out" 2>&1 &
slpid=$!
FL_PIDS="$FL_PIDS $slpid"
i=0
while :; do
	snapshot leaf "$T/leaf.json" "$T/s.json"
	[ "$(get "$T/s.json" connections.dropped_slow)" -ge 1 ] &&
		[ "$(get "$T/s.json" overheads.inflight)" = 0 ] && break
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "the slow client was not dropped ($(cat "$T/slow.out"))"
	sleep 0.5
done
kill -9 "$slpid"
{ wait "$slpid"; } 2>/dev/null
forget "$slpid"

# A connection left open (half a frame header) at SIGTERM.
perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(PeerAddr => "127.0.0.1",
	PeerPort => $ARGV[0]) or die; syswrite($s, "FLW1"); print "held\n"; STDOUT->flush(); sleep 600' \
	"$leaf_port" >"$T/stuck.out" 2>&1 &
spid=$!
FL_PIDS="$FL_PIDS $spid"
i=0
until grep -q held "$T/stuck.out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "stuck client: $(cat "$T/stuck.out")"
	sleep 0.1
done

note "SIGTERM"
kill -TERM "$leaf_pid"
i=0
while running "$leaf_pid" && [ "$i" -lt 1200 ]; do
	sleep 0.1
	i=$((i + 1))
done
running "$leaf_pid" && fail "leaf under valgrind still running 120 s after SIGTERM"
wait "$leaf_pid"
rc=$?
forget "$leaf_pid"
kill -9 "$spid"
{ wait "$spid"; } 2>/dev/null
forget "$spid"
stop_server mock
assert_eq "$rc" 0 "leaf (valgrind) exit status after SIGTERM"
assert_eq "$(get "$T/leaf.json" overheads.inflight)" 0 "final stats: inflight"
assert_ge "$(get "$T/leaf.json" requests.ok)" 20 "final stats: requests OK"

[ -s "$LOG" ] || fail "no valgrind log $LOG"
lost() { # KIND: bytes lost of that kind (0 when valgrind found no leaks at all)
	v=$(sed -n "s/.*$1 lost: \([0-9,]*\) bytes.*/\1/p" "$LOG" | tail -n 1 | tr -d ,)
	echo "${v:-0}"
}
if grep -q "no leaks are possible" "$LOG"; then
	def=0 ind=0 pos=0
else
	grep -q "LEAK SUMMARY" "$LOG" || fail "no LEAK SUMMARY in $LOG (did valgrind finish?)"
	def=$(lost definitely) ind=$(lost indirectly) pos=$(lost possibly)
fi
errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$LOG" | tail -n 1 | tr -d ,)
[ -n "$errs" ] || fail "no ERROR SUMMARY in $LOG"
note "definitely lost $def, indirectly $ind, possibly $pos bytes; $errs errors"
if [ "$def" != 0 ] || [ "$errs" != 0 ]; then
	grep -n "definitely lost in\|Invalid\|uninitialised\|Mismatched" "$LOG" | head -n 20 >&2
	fail "memcheck: definitely lost $def bytes, $errs errors (see $LOG)"
fi

echo "memcheck: leaf exit 0; definitely lost: $def bytes, indirectly $ind, possibly $pos;" \
	"ERROR SUMMARY: $errs errors; $(elapsed) s (log $LOG)"

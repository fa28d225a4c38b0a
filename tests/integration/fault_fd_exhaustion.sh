#!/bin/sh
# fault_fd_exhaustion.sh: idle connections use up a server's descriptors; it neither spins
# nor stops serving, and takes the waiting connections once descriptors free up.
#
# 1. The leaf runs with `ulimit -n 64` (no fanout, so its own fds are ~10). A driver keeps
#    one connection busy at 20 QPS for 10 s. Then a perl client (perl-base,
#    IO::Socket::INET) opens 80 idle connections: ~54 are accepted, the rest wait in the
#    listen backlog and every accept() fails with EMFILE. Checks:
#    - the leaf pauses accepting rather than spinning on the readable listener: its IO
#      thread (leaf-io-0) uses < 500 ms of CPU over 3 s with descriptors exhausted, read
#      from /proc/PID/task/TID/stat (no stats file can be written then: no descriptor).
#      Without the pause it burns all the CPU it can get (2.2 s of the 3 s, seen here);
#    - a new client started meanwhile waits in the backlog, and is served (3 OK replies)
#      once the idle connections go; the leaf's stats then count the failed accepts
#      (connections.accept_errors >= 1);
#    - the driver's connection, open from before, is served throughout: every request OK,
#      no errors or timeouts; the leaf exits 0 on SIGTERM.
# 2. The mock, the same way: `ulimit -n 64`, 80 idle connections (TLS handshakes never
#    started). Its IO thread (mock-io-0) uses < 500 ms of CPU over 3 s; a new TLS client
#    of 3 RpcRequests waits and is served once the idle connections go; it exits 0 on
#    SIGTERM and its final stats count accept_errors >= 1.
# shellcheck disable=SC2154 # NAME_port, NAME_rc: set by start_server, stop_server
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"
command -v perl >/dev/null 2>&1 || fail "perl not found (perl-base)"
NOFILE=64
IDLE=80
CPU_MAX_MS=500

# idle PORT: IDLE connections that never send a byte (pid in idle_pid).
idle() {
	perl -MIO::Socket::INET -e '
		for (1 .. $ARGV[1]) {
			push @s, IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $ARGV[0])
				or die "connect $_: $!\n";
		}
		print "held ", scalar(@s), "\n"; STDOUT->flush(); sleep 120' "$1" $IDLE \
		>"$T/idle.out" 2>&1 &
	idle_pid=$!
	FL_PIDS="$FL_PIDS $idle_pid"
	i=0
	until grep -q '^held' "$T/idle.out" 2>/dev/null; do
		running "$idle_pid" || fail "idle client: $(cat "$T/idle.out")"
		i=$((i + 1))
		[ "$i" -le 100 ] || fail "idle client: no connections within 10 s"
		sleep 0.1
	done
	sleep 1
}
unidle() {
	kill -9 "$idle_pid"
	{ wait "$idle_pid"; } 2>/dev/null
	forget "$idle_pid"
}
# thread_cpu_ms PID NAME SECONDS: CPU (ms) that thread NAME of PID uses over SECONDS
# (utime + stime ticks from /proc).
thread_cpu_ms() {
	tc_tid=
	for d in /proc/"$1"/task/*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = "$2" ] && tc_tid=${d##*/}
	done
	[ -n "$tc_tid" ] || fail "no $2 thread in /proc/$1/task"
	tc0=$(sed 's/.*) //' "/proc/$1/task/$tc_tid/stat" | awk '{ print $12 + $13 }')
	sleep "$3"
	tc1=$(sed 's/.*) //' "/proc/$1/task/$tc_tid/stat" | awk '{ print $12 + $13 }')
	echo $(((tc1 - tc0) * 1000 / $(getconf CLK_TCK)))
}
# nofile BIN: print the path of a wrapper running BIN under ulimit -n NOFILE.
nofile() {
	nf=$T/$(basename "$1")-nofile.sh
	printf '#!/bin/sh\nulimit -n %s || exit 1\nexec "%s" "$@"\n' $NOFILE "$1" >"$nf"
	chmod +x "$nf"
	echo "$nf"
}

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"

# 1. The leaf.
start_server leaf "$(nofile "$LEAF")" --port 0 --lib "$LIB" --tls-dir "$T/tls" --mock none \
	--extractors-per-story 20 --ranker-threads 2 --stats-file "$T/leaf.json" --quiet
assert_eq "$(sed -n 's/^Max open files[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$leaf_pid/limits")" \
	$NOFILE "the leaf's open-file limit"
note "leaf fds at start: $(ls "/proc/$leaf_pid/fd" | wc -l) of $NOFILE"

start_driver "$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps 20 --arrival fixed --warmup 0 \
	--duration 10 --connections 1 --depth 4 --threads 1 --timeout-s 5 --request-size 4096 \
	--reply-bytes 4096 --json "$T/driver.json"

note "1. $IDLE idle connections to the leaf"
idle "$leaf_port"
fds=$(ls "/proc/$leaf_pid/fd" | wc -l)
note "leaf fds: $fds of $NOFILE"
assert_ge "$fds" $((NOFILE - 2)) "leaf fds with $IDLE idle connections (exhausted)"
io_ms=$(thread_cpu_ms "$leaf_pid" leaf-io-0 3)
note "leaf IO thread CPU over 3 s with descriptors exhausted: $io_ms ms"
assert_le "$io_ms" $CPU_MAX_MS "leaf IO thread CPU (ms) over 3 s with descriptors exhausted"

note "a new client while exhausted; the idle connections go 2 s later"
"$CLIENT" --port "$leaf_port" --requests 3 --request-size 4096 --reply-bytes 4096 \
	--timeout-s 30 --json "$T/new.json" >"$T/client.log" 2>&1 &
new_pid=$!
FL_PIDS="$FL_PIDS $new_pid"
sleep 2
running "$new_pid" || fail "the new client finished while descriptors were exhausted:" \
	"$(tail -n 1 "$T/client.log")"
unidle
t0=$(date +%s%N)
wait "$new_pid"
nrc=$?
forget "$new_pid"
new_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$nrc" = 0 ] || fail "new client exit $nrc: $(tail -n 2 "$T/client.log" | tr '\n' ' ')"
assert_eq "$(get "$T/new.json" status.ok)" 3 "new client's OK replies once descriptors freed up"
note "new client served $new_ms ms after the idle connections went"
snapshot leaf "$T/leaf.json" "$T/s1.json"
errs=$(get "$T/s1.json" connections.accept_errors)
assert_ge "$errs" 1 "leaf connections.accept_errors (descriptors were exhausted)"

i=0
while running "$driver_pid" && [ "$i" -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
wait_driver
[ "$drc" = 0 ] || fail "driver exit status $drc"
J=$T/driver.json
dok=$(get "$J" steps.0.ok)
assert_eq "$dok" "$(get "$J" steps.0.sent)" "driver: OK replies (of sent) on its connection"
assert_eq "$(get "$J" steps.0.errors.total)" 0 "driver errors"
assert_eq "$(get "$J" steps.0.timeouts)" 0 "driver timeouts"
stop_server leaf
assert_eq "$leaf_rc" 0 "leaf exit status after SIGTERM"

# 2. The mock.
start_server mock "$(nofile "$MOCK")" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 8 \
	--stats-file "$T/mock.json" --quiet
note "2. $IDLE idle connections to the mock"
idle "$mock_port"
mio_ms=$(thread_cpu_ms "$mock_pid" mock-io-0 3)
note "mock IO thread CPU over 3 s with descriptors exhausted: $mio_ms ms"
assert_le "$mio_ms" $CPU_MAX_MS "mock IO thread CPU (ms) over 3 s with descriptors exhausted"
"$CLIENT" --port "$mock_port" --tls --tls-dir "$T/tls" --rpc --requests 3 --request-size 256 \
	--reply-bytes 1000 --timeout-s 30 --json "$T/mnew.json" >"$T/client.log" 2>&1 &
new_pid=$!
FL_PIDS="$FL_PIDS $new_pid"
sleep 2
running "$new_pid" || fail "the new mock client finished while descriptors were exhausted:" \
	"$(tail -n 1 "$T/client.log")"
unidle
wait "$new_pid"
nrc=$?
forget "$new_pid"
[ "$nrc" = 0 ] || fail "new mock client exit $nrc: $(tail -n 2 "$T/client.log" | tr '\n' ' ')"
assert_eq "$(get "$T/mnew.json" status.ok)" 3 "new mock client's OK replies once descriptors freed up"
stop_server mock
assert_eq "$mock_rc" 0 "mock exit status after SIGTERM"
merrs=$(get "$T/mock.json" accept_errors)
assert_ge "$merrs" 1 "mock accept_errors (descriptors were exhausted)"

echo "fds exhausted ($IDLE idle connections, ulimit -n $NOFILE): leaf $errs accept errors, IO" \
	"thread ${io_ms} ms CPU in 3 s (no spin), existing connection $dok/$dok ok, new client" \
	"served ${new_ms} ms after release; mock $merrs accept errors, IO thread ${mio_ms} ms," \
	"new client served after release; $(elapsed) s"

#!/bin/sh
# run_driver_ssh.sh: `frontload run --drivers 2 --driver-ssh HOST=DIR`: a driver over ssh.
#
# Starts a mock and a leaf by hand, an sshd of its own on 127.0.0.1 (a free port, a host
# key and a client key made for the test) and a "remote" frontload directory DIR
# (DIR/bin/frontload-driver, DIR/tls) whose driver records that it ran. Then runs
# `frontload run --leaf ... --mock ... --qps 20 --duration 3 --drivers 2 --driver-ssh
# root@127.0.0.1=DIR --ssh "ssh -p PORT -i KEY ..."` and checks:
#   - exit 0, status complete; driver 1 ran through sshd (the record written by DIR's
#     driver, started by sshd's shell, with seed 2 and --tls-dir DIR/tls), driver 0 here;
#   - result.json's instances[0].drivers[1].host is the ssh destination and its step
#     figures came back over ssh: the merged counts are the two drivers' summed, both
#     drivers measured OK replies, and the merged p95 lies within theirs;
#   - clocks.hosts[] has the ssh driver's clock (5 samples, offset within its
#     uncertainty: one host's clock, so verdict ok);
#   - no frontload-driver, and no ssh or sshd of the test, is left.
# Skipped (exit 77, reason last) without root or sshd.
. "$(dirname "$0")/common.inc"

RUN=$B/frontload
SSHD=/usr/sbin/sshd
for f in "$RUN" "$B/frontload-driver"; do
	[ -x "$f" ] || fail "$f not built"
done
[ "$(id -u)" = 0 ] || skip "sshd needs root (uid $(id -u))"
[ -x "$SSHD" ] || skip "no $SSHD (apt-get install openssh-server)"
for c in ssh ssh-keygen jq python3; do
	command -v "$c" >/dev/null 2>&1 || skip "no $c (apt-get install openssh-client jq)"
done

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 16 \
	--latency-cap-us 2000 --quiet
# shellcheck disable=SC2154 # mock_port, leaf_port: set by start_server
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" \
	--mock "127.0.0.1:$mock_port" --ranker-threads 2 --io-threads 1 --fanout-threads 1 \
	--extractors-per-story 50 --quiet

# The "remote" directory: its driver notes its arguments, then is the real one.
D=$T/remote
mkdir -p "$D/bin" "$D/tls"
cp "$T/tls/"* "$D/tls/"
cat >"$D/bin/frontload-driver" <<EOF
#!/bin/sh
echo "\$@" >"$T/remote-driver.args"
exec "$B/frontload-driver" "\$@"
EOF
chmod +x "$D/bin/frontload-driver"

# An sshd on a free loopback port, keys made here.
sshd_setup
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sshd_conf "127.0.0.1:$port" sshd >"$T/ssh/sshd.conf"
"$SSHD" -D -e -f "$T/ssh/sshd.conf" >"$T/sshd.log" 2>&1 &
FL_PIDS="$FL_PIDS $!"
SSH="ssh -p $port -i $T/ssh/id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=5 -o LogLevel=ERROR"
i=0
# shellcheck disable=SC2086
until $SSH root@127.0.0.1 true 2>"$T/ssh.err"; do
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "no ssh to 127.0.0.1:$port: $(tail -n 2 "$T/ssh.err") $(tail -n 3 "$T/sshd.log")"
	sleep 0.1
done

O=$T/run
note "frontload run --drivers 2 --driver-ssh root@127.0.0.1=$D"
t0=$(date +%s)
(cd "$T" && exec "$RUN" run --leaf "127.0.0.1:$leaf_port" --mock "127.0.0.1:$mock_port" \
	--tls-dir "$T/tls" --qps 20 --duration 3 --warmup-seconds 1 --drivers 2 \
	--driver-ssh "root@127.0.0.1=$D" --ssh "$SSH" --out "$O") >"$T/run.out" 2>"$T/run.log" &
rpid=$!
FL_PIDS="$FL_PIDS $rpid"
FL_SERVERS="$FL_SERVERS run"
wait_run "$rpid" "$t0" 60 "frontload run --driver-ssh"
[ "$rc" = 0 ] || fail "frontload run exit status $rc: $(tail -n 4 "$T/run.log")" \
	"$(tail -n 5 "$O/driver0.1.log" 2>/dev/null)"
R=$O/result.json
assert_eq "$(get "$R" status)" complete "result status"

[ -s "$T/remote-driver.args" ] || fail "the remote directory's driver never ran"
args=$(cat "$T/remote-driver.args")
case " $args " in
*" --seed 2 "*) ;;
*) fail "remote driver not given seed 2: $args" ;;
esac
case " $args " in
*" --tls-dir $D/tls "*) ;;
*) fail "remote driver not given --tls-dir $D/tls: $args" ;;
esac
case " $args " in
*" --json "*) fail "remote driver told to write --json (a file on the other host): $args" ;;
esac
assert_eq "$(jq -r '.instances[0].drivers[1].host' "$R")" "root@127.0.0.1" "driver 1's host"
assert_eq "$(jq -r '.instances[0].drivers[0].host' "$R")" null "driver 0's host (this one)"

# The driver over ssh had its clock read against ours (run_drvclock.h): the same host's
# clock, so the offset lies within its uncertainty (half the round trip) and the verdict
# against --clock-bound-ms 10 is ok.
C='[.clocks.hosts[] | select(.role == "driver")]'
assert_eq "$(jq "$C | length" "$R")" 1 "clock entries for remote drivers"
assert_eq "$(jq -r "$C[0] | \"\(.driver) \(.address) \(.samples) \(.verdict)\"" "$R")" \
	"1 root@127.0.0.1 5 ok" "the ssh driver's clock entry (driver, address, samples, verdict)"
jq -e "$C[0] | (.offset_ms | fabs) <= .uncertainty_ms + 0.001 and .rtt_ms > 0" "$R" \
	>/dev/null || fail "the ssh driver's clock offset exceeds its uncertainty on one host: $(jq -c "$C[0]" "$R")"

I='.steps[-1].instances[0]'
for k in sent ok completed; do
	assert_eq "$(jq "$I.$k" "$R")" "$(jq "[$I.drivers[].$k] | add" "$R")" "merged $k"
done
ok0=$(jq "$I.drivers[0].ok" "$R")
ok1=$(jq "$I.drivers[1].ok" "$R")
assert_gt "$ok1" 0 "OK replies of the driver over ssh"
assert_gt "$ok0" 0 "OK replies of the local driver"
jq -e "$I | .latency.p95_ms >= ([.drivers[].latency.p95_ms] | min) and
	.latency.p95_ms <= ([.drivers[].latency.p95_ms] | max)" "$R" >/dev/null ||
	fail "merged p95 outside the drivers': $(jq -c "[$I.latency.p95_ms, $I.drivers[].latency.p95_ms]" "$R")"

sleep 0.5
! pgrep -f "$T/remote/bin/frontload-driver" >/dev/null 2>&1 || fail "the remote driver was left running"
! pgrep -f "ssh -p $port" >/dev/null 2>&1 || fail "an ssh of the run was left running"
echo "driver 1 over ssh (127.0.0.1:$port): $ok1 OK, driver 0 here: $ok0 OK, merged p95" \
	"$(jq "$I.latency.p95_ms" "$R") ms; its clock $(jq -r "$C[0] | \"\(.offset_ms) ms +- \(.uncertainty_ms) ms (rtt \(.rtt_ms) ms)\"" "$R"); $(elapsed) s"

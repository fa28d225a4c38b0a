#!/bin/sh
# driver_draws.sh: --draws common replays one sample in every step; fresh draws anew.
#
# One mock + leaf (no extraction: only the driver's schedule is under test) and three
# frontload-driver runs of three 2 s steps at 40 qps (Poisson gaps, seed 3):
#   common: every step starts the same arrival and request streams, so the requests due
#           in each measured window are the same ones: `sent` is equal in all three steps
#           (a Poisson count of ~80 +- 9: three equal by chance about 1 time in 400,
#           and the seed makes it the same every time);
#   fresh:  each step's streams are seeded by its number: the counts differ (checked,
#           so the test can tell the two apart);
#   bogus:  --draws sometimes is refused with an error naming the flag, exit status 2.
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"

"$MOCK" --gen-cert "$T/tls" >/dev/null 2>&1 || fail "frontload-mock --gen-cert $T/tls failed"
start_server mock "$MOCK" --port 0 --tls-dir "$T/tls" --threads 1 --corpus-mb 16 --quiet
start_server leaf "$LEAF" --port 0 --lib "$LIB" --tls-dir "$T/tls" \
	--mock "127.0.0.1:$mock_port" --extractors-per-story 0 --ranker-threads 1 \
	--io-threads 1 --fanout-threads 1 --rpc-fanout-scale 0.001 --quiet

for draws in common fresh; do
	"$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps 40,40,40 --warmup 0.5 --duration 2 \
		--draws "$draws" --seed 3 --request-size 4k --reply-bytes 4k --timeout-s 10 \
		--json "$T/$draws.json" --quiet >"$T/driver-$draws.log" 2>&1 ||
		fail "$draws: driver exit status $? ($(tail -n 3 "$T/driver-$draws.log" | tr '\n' ' '))"
	for i in 0 1 2; do
		assert_eq "$(get "$T/$draws.json" steps.$i.errors.total)" 0 "$draws: step $i errors"
	done
done
c0=$(get "$T/common.json" steps.0.sent)
c1=$(get "$T/common.json" steps.1.sent)
c2=$(get "$T/common.json" steps.2.sent)
f0=$(get "$T/fresh.json" steps.0.sent)
f1=$(get "$T/fresh.json" steps.1.sent)
f2=$(get "$T/fresh.json" steps.2.sent)
assert_gt "$c0" 40 "common: requests sent in step 0's 2 s at 40 qps"
assert_eq "$c1" "$c0" "common: step 1 sent what step 0 sent (the same draws)"
assert_eq "$c2" "$c0" "common: step 2 sent what step 0 sent (the same draws)"
[ "$f0" != "$f1" ] || [ "$f0" != "$f2" ] ||
	fail "fresh: all three steps sent $f0 requests: the steps did not draw anew"
# Step 0 of fresh draws is seeded as every step of common draws is.
assert_eq "$f0" "$c0" "fresh: step 0 sent what common's steps sent"


"$DRIVER" --leaf "127.0.0.1:$leaf_port" --qps 40 --duration 1 --draws sometimes \
	>"$T/bogus.log" 2>&1
rc=$?

assert_eq "$rc" 2 "--draws sometimes: exit status"
grep -q -- "--draws: 'sometimes'" "$T/bogus.log" ||
	fail "--draws sometimes: no error naming the flag ($(head -n 2 "$T/bogus.log"))"

echo "common draws: $c0, $c1, $c2 sent in three 2 s steps at 40 qps; fresh: $f0, $f1, $f2;" \
	"--draws sometimes refused (exit 2), $(elapsed) s"

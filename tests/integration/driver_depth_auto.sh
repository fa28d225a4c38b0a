#!/bin/sh
# driver_depth_auto.sh: the driver's --depth auto sizes its in-flight ceiling from rate x
# the request deadline before each step, so it never holds back a request that could
# still be answered in time; a step line's INFLIGHT and a fixed --depth still win.
#
# mock + leaf (small knobs) + frontload-driver --control over 4 connections, deadline 4 s:
#   1. step at 40 qps, no INFLIGHT: ceiling = ceil(40 x 4) = 160 (depth 40 x 4);
#   2. step at 2 qps: the rule gives 64 (the least), but a ceiling is never lowered by it,
#      so it stays 160;
#   3. step at 2 qps with INFLIGHT 8: exactly 8 (depth 2 x 4), the line's word wins;
#   4. step at 60 qps: 240;
#   5. a second driver with --depth 3 (fixed) at 40.123457 qps: 12, whatever the rate;
#      its result line gives requested_qps 40.123457, every digit the step line had
#      (frontload run compares the final window's echoed rate with its sla_bound_qps).
# Every step's requests are all answered OK (the rates are far below the leaf's capacity).
. "$(dirname "$0")/common.inc"

DRIVER=$B/frontload-driver
[ -x "$DRIVER" ] || fail "$DRIVER not built"

start_small 8

# drive ARGS...: control steps from stdin; one JSON line per step in $T/steps.jsonl.
drive() {
	"$DRIVER" --leaf "127.0.0.1:$leaf_port" --control --connections 4 --threads 1 \
		--timeout-s 10 --deadline-ms 4000 --stories 4 --request-size 4096 \
		--reply-bytes 4096 --quiet "$@" >"$T/steps.jsonl" 2>"$T/driver.log" ||
		fail "driver exit status $?: $(tail -n 3 "$T/driver.log" | tr '\n' ' ')"
}

# ceiling N: step N's in-flight ceiling (1-based), after checking it ran clean.
ceiling() {
	line=$(sed -n "${1}p" "$T/steps.jsonl")
	[ -n "$line" ] || fail "step $1: no result line"
	printf '%s\n' "$line" | jq -e '.error == null and .timeouts == 0 and .errors.total == 0 and
		.ok == .sent' >/dev/null || fail "step $1 did not run clean: $(printf '%s' "$line" |
		jq -c '{error, sent, ok, timeouts, errors}')"
	printf '%s\n' "$line" | jq '.inflight_ceiling'
}

printf 'step 40 0.5 1\nstep 2 0 1\nstep 2 0 1 8\nstep 60 0.5 1\nquit\n' | drive
assert_eq "$(ceiling 1)" 160 "1: auto ceiling at 40 qps x 4 s deadline"
assert_eq "$(ceiling 2)" 160 "2: auto ceiling at 2 qps (never lowered)"
assert_eq "$(ceiling 3)" 8 "3: INFLIGHT 8 on the step line"
assert_eq "$(ceiling 4)" 240 "4: auto ceiling at 60 qps x 4 s deadline"

printf 'step 40.123457 0.5 1\nquit\n' | drive --depth 3
assert_eq "$(ceiling 1)" 12 "5: fixed --depth 3 over 4 connections"
assert_eq "$(sed -n 1p "$T/steps.jsonl" | jq '.requested_qps')" 40.123457 \
	"5: requested_qps echoed with the step line's digits"

stop_server leaf
stop_server mock
echo "auto ceilings 160, 160, 8 (INFLIGHT), 240; fixed depth 3: 12, requested_qps 40.123457 kept; $(elapsed) s"

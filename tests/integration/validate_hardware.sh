#!/bin/sh
# validate_hardware.sh: the hardware path's verdicts from counters, on any host.
#
# frontload-measure runs the frontload-simreq found beside it; here that is a stand-in
# script (in a copy's directory) that writes a canned summary as a host with counters
# would. Checks: front-end bound is judged from the top-down slot figure
# (pmu.metrics.frontend_bound_slots, x100) with its formula printed; where the CPU has no
# slot events it is unmeasurable with the reason, and the stalled-cycles-frontend / cycles
# ratio is reported beside it as frontend_stall_cycle_ratio, never as front-end bound.
# Env: FL_BUILDDIR, FL_SRCDIR. Exit 0/1; the last line is a one-line summary.
set -u
: "${FL_SRCDIR:?FL_SRCDIR must name the source tree}"
: "${FL_BUILDDIR:?FL_BUILDDIR must name the build directory}"
B=$(cd "$FL_BUILDDIR" && pwd) || exit 1
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$B/frontload-measure" ] || fail "$B/frontload-measure not built"
command -v jq >/dev/null 2>&1 || fail "jq not installed"
T=$(mktemp -d /tmp/fl-vh.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
cp "$B/frontload-measure" "$T/frontload-measure"

# fake_simreq FE_BOUND_JSON: the stand-in writes a summary with these metrics to --json.
fake_simreq() {
	cat >"$T/summary.json" <<JSON
{"program": "frontload-simreq", "plan_functions": 1398, "library_functions": 1398,
 "extract_calls_per_request": 5440, "cpu_ns_per_request": 2000000, "requests": 2,
 "extract_cpu_share": 0.33,
 "stages": {"decode": {"cpu_share": 0.3}, "extract": {"cpu_share": 0.33},
            "rank": {"cpu_share": 0.37}},
 "instructions": 12000000,
 "pmu": {"supported": true, "user_only": true, "events": {},
   "metrics": {"ipc": {"supported": true, "value": 0.7},
     "l1i_mpki": {"supported": true, "value": 20.0},
     "frontend_stall_cycle_ratio": {"supported": true, "value": 0.9},
     "frontend_bound_slots": $1}}}
JSON
	cat >"$T/frontload-simreq" <<SH
#!/bin/sh
while [ \$# -gt 0 ]; do
	[ "\$1" = --json ] && cp "$T/summary.json" "\$2"
	shift
done
exit 0
SH
	chmod +x "$T/frontload-simreq"
}

run() { # tag
	"$T/frontload-measure" validate --harness --hardware --quick \
		--targets "$FL_SRCDIR/results/targets/production.json" --json "$T/$1.json" \
		>"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "$1: validate exited $rc: $(tail -n 3 "$T/$1.err")"
}
fe() { jq -c ".targets[] | select(.metric == \"frontend_bound_pct\") | $2" "$T/$1.json"; }

# A CPU with slot events: judged, formula printed.
fake_simreq '{"supported": true, "value": 0.2, "formula": "topdown-fe-bound / slots"}'
run slots
[ "$(fe slots .verdict)" = '"pass"' ] || fail "slots: verdict $(fe slots .)"
[ "$(fe slots .measured)" = 20 ] || fail "slots: measured $(fe slots .measured), want 20"
grep -q 'frontend_bound_pct = 100 \* topdown-fe-bound / slots' "$T/slots.out" ||
	fail "slots: formula not printed"
jq -e '.hardware.frontend_stall_cycle_ratio == 0.9 and
	.hardware.frontend_bound_formula == "topdown-fe-bound / slots"' "$T/slots.json" \
	>/dev/null || fail "slots: hardware section $(jq -c .hardware "$T/slots.json")"

# No slot events: unmeasurable with the reason; the stall ratio is beside it, unjudged.
fake_simreq '{"supported": false, "why": "topdown-slots unsupported: no top-down slot events on this CPU"}'
run stall
[ "$(fe stall .verdict)" = '"unmeasurable"' ] || fail "stall: verdict $(fe stall .)"
fe stall .why | grep -q "no top-down slot events" || fail "stall: reason $(fe stall .why)"
jq -e '.metrics.frontend_bound_pct == null and .hardware.frontend_stall_cycle_ratio == 0.9' \
	"$T/stall.json" >/dev/null || fail "stall: $(jq -c '{m: .metrics.frontend_bound_pct, h: .hardware}' "$T/stall.json")"
grep -q 'frontend_stall_cycle_ratio (stalled-cycles-frontend / cycles, no target' \
	"$T/stall.out" || fail "stall: ratio not printed as its own figure"
[ "$(jq -c '.targets[] | select(.metric == "l1i_mpki") | .measured' "$T/stall.json")" = 20 ] ||
	fail "stall: L1i MPKI not taken from the counters"
echo "hardware path (stand-in simreq): front-end bound 20% of slots judged pass with its formula; without slot events unmeasurable, stall-cycle ratio 0.9 reported unjudged"

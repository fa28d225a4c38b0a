#!/bin/sh
# crypto_cpuid.sh: what valgrind's CPUID hides from OpenSSL, and what that costs natively.
# Prints figures; asserts nothing. Usage: tests/bench/crypto_cpuid.sh BUILD_DIR [QPS] [WINDOW_S]
#
# Under valgrind the leaf's OpenSSL sees valgrind's CPUID, not the host's, so it takes other
# code paths (on an AVX-512 host: no AVX-512, VAES, VPCLMULQDQ or SHA extensions) and the
# simulated instruction counts of libcrypto are not the native ones. Native instruction
# counts need hardware counters; this host may have none, so the cost is measured as CPU
# time instead: the leaf runs natively twice under `frontload-measure validate --hardware`
# (same rate, window and seed), once with the host's capabilities and once with
# OPENSSL_ia32cap set to what OpenSSL detects under valgrind, and the encryption samples of
# the cpu-clock profile per request are compared (one sample = 1/perf-hz s of CPU).
set -eu
B=${1:?usage: crypto_cpuid.sh BUILD_DIR [QPS] [WINDOW_S]}
qps=${2:-20}
win=${3:-20}
M=$B/frontload-measure
cap_of() { sed -n 's/^OPENSSL_ia32cap=//p'; }
host=$(openssl info -cpusettings | cap_of)
vg=$(valgrind --tool=none -q openssl info -cpusettings 2>/dev/null | cap_of)
echo "OPENSSL_ia32cap natively: $host"
echo "OPENSSL_ia32cap under valgrind $(valgrind --version): $vg"
echo "host CPU flags valgrind does not report: $(grep -o 'avx512[a-z_0-9]*\|vaes\|vpclmulqdq\|sha_ni\|gfni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
tmp=$(mktemp -d /tmp/crypto-cpuid.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run() {
	if [ "$1" = host ]; then
		"$M" validate --hardware --quiet --qps "$qps" --window "$win" --json "$tmp/$1.json" \
			>/dev/null 2>&1 || true
	else
		OPENSSL_ia32cap=$vg "$M" validate --hardware --quiet --qps "$qps" --window "$win" \
			--json "$tmp/$1.json" >/dev/null 2>&1 || true
	fi
	jq -r --arg w "$1" '
		(.native.driver_step.sent) as $n | (.profile | if type == "string" then . else
		(.categories.encryption.samples) as $e | (.samples) as $t |
		"\($w): \($n) requests, \($e) of \($t) samples in encryption (\(.categories.encryption.pct | . * 100 | round / 100)%), \($e / $n * 1000 / 999 | . * 1000 | round / 1000) ms of libcrypto/libssl CPU per request" end)' \
		"$tmp/$1.json"
}
run host
run valgrind-caps

#!/bin/sh
# ninja_phases.sh: where a finished build's time went, read from its .ninja_log. Prints one
# row per phase: edges, edge-seconds (the sum of each edge's duration: its CPU time when the
# edge is one single-threaded process and the CPUs were not oversubscribed; more than that
# on a busy host), and the wall span from the first edge's start to the last one's end.
# Asserts nothing. Usage: tests/bench/ninja_phases.sh BUILD_DIR
#
# Phases, by an edge's first output: probe (gen/probes/*.s: cc -S of the probe copies),
# clone (gen/clone_NN.json: the cloner's parts), as (obj/shard_*.o from the cloned
# assembly; gen-c under --clone=none, where they are compiled from C), fallback
# (obj/fallback_*.o: copies compiled from C), link (libfrontload-extract.so and, with
# --lib-parts, its parts), verify (manifest.json: frontload-gen verify over the library),
# and tools (everything else: generator, runtime, tests). The .ninja_log keeps the last run of each
# output, so run it on a build made from scratch in one ninja invocation.
set -eu
B=${1:?usage: ninja_phases.sh BUILD_DIR}
L=$B/.ninja_log
[ -s "$L" ] || { echo "ninja_phases.sh: no $L" >&2; exit 2; }
mode=$(sed -n 's/.*"clone": *"\([a-z]*\)".*/\1/p' "$B/config.json" 2>/dev/null | head -n 1)
# A multi-output edge is one line per output with the same start, end and hash: count it once.
awk -F '\t' -v shard_ph="$([ "$mode" = none ] && echo gen-c || echo as)" '
	/^#/ { next }
	{
		key = $1 " " $2 " " $5
		if (key in seen) next
		seen[key] = 1
		out = $4
		ph = "tools"
		if (out ~ /^gen\/probes\/.*\.s$/) ph = "probe"
		else if (out ~ /^gen\/(shards\/|clone_)/) ph = "clone"
		else if (out ~ /^obj\/fallback_/) ph = "fallback"
		else if (out ~ /^obj\/shard_/) ph = shard_ph
		else if (out ~ /^libfrontload-extract(-[0-9]+)?\.so$/) ph = "link"
		else if (out == "manifest.json") ph = "verify"
		n[ph]++
		sum[ph] += ($2 - $1) / 1000
		if (!(ph in lo) || $1 < lo[ph]) lo[ph] = $1
		if ($2 > hi[ph]) hi[ph] = $2
		if (!started || $1 < t0) { t0 = $1; started = 1 }
		if ($2 > t1) t1 = $2
	}
	END {
		printf "%-9s %7s %12s %18s\n", "phase", "edges", "edge-s", "wall span (s)"
		split("probe clone as gen-c fallback link verify tools", order, " ")
		for (i = 1; i <= 8; i++) {
			p = order[i]
			if (!(p in n)) continue
			printf "%-9s %7d %12.1f %8.1f .. %6.1f\n", p, n[p], sum[p],
				(lo[p] - t0) / 1000, (hi[p] - t0) / 1000
		}
		printf "all       %7s %12s %8.1f s wall\n", "", "", (t1 - t0) / 1000
	}' "$L"
echo "build: $B (clone mode ${mode:-unknown})"

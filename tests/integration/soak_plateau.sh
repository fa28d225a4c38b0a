#!/bin/sh
# fl-test: retries=1
# soak_plateau.sh: a 100 s tests/reliability/soak.sh: leaf and mock memory level off.
#
# The method mix (1,000 sessions, the programs' default sizes: requests to 4 MiB, replies
# to 16 MiB, outbound bodies to 32 MiB) at 8 qps: 20 s warm-up, then 80 s sampled every
# second. soak.sh's verdict must be PASS: the lowest RSS of the leaf and of the mock in the
# last 40 s at most 5% (of the mean) above the lowest in the first 40 s (SOAK_JUDGE=floor:
# the messages in flight swing RSS by tens of MiB a second, so a 40 s slope read up to
# 8.8% on a build that levels off). Halves of 40 s, not 20: a 20 s half can go by without
# one moment free of large messages in flight and freed pages not yet purged; on 12-07 a
# 160 s soak of a leaf that levels off read 20 s lows of 147-158 MiB, and 20 s halves
# failed three of four one-minute runs (drift 5.4-8.6%) where 40 s halves of that soak
# read 0.7% and 2%. Fds and threads must not grow, no driver errors, OK >= 99%. Then the leaf's and the mock's stats must carry the memory
# block with the allocator settings in force (tuning "frontload", at most arena_max
# arenas; the allocator configure chose, and with jemalloc its decay in force and pages
# purged) and the owners' bytes (corpus, sessions, scratch).
# In a configure --malloc=glibc build with FL_MALLOC=default (glibc's dynamic mmap
# threshold, an arena per thread, grow-only scratch buffers, as before issue 17) the
# leaf's RSS climbs in steps through this window.
# Skipped under sanitizers: ASan's quarantine and shadow memory keep freed memory, so RSS
# says nothing about the program's own.
if [ -n "${FL_SANITIZERS:-}" ]; then
	echo "skipped: judges RSS, which ASan's quarantine and shadow memory inflate ($FL_SANITIZERS)"
	exit 77
fi
export FL_WATCHDOG_S=240
. "$FL_SRCDIR/tests/integration/common.inc"

OUT=$T/soak
note "soak.sh: 8 qps, 20 s warm-up + 80 s"
SOAK_SECONDS=80 SOAK_WARMUP=20 SOAK_EVERY=1 SOAK_QPS=8 SOAK_JUDGE=floor SOAK_OUT=$OUT \
	sh "$FL_SRCDIR/tests/reliability/soak.sh" >"$T/soak.out" 2>"$T/soak.err"
rc=$?
verdict=$(tail -n 1 "$T/soak.out")
[ "$rc" = 0 ] || {
	sed 's/^/  /' "$OUT/samples.csv" >&2
	tail -n 20 "$T/soak.err" >&2
	fail "soak.sh exit $rc: $verdict"
}

malloc=$(get "$B/config.json" malloc)
for who in leaf mock; do
	J=$OUT/$who.json
	assert_eq "$(get "$J" memory.allocator.name)" "$malloc" "$who allocator (configure --malloc)"
	assert_eq "$(get "$J" memory.allocator.tuning)" frontload "$who allocator tuning"
	if [ "$malloc" = jemalloc ]; then
		assert_eq "$(get "$J" memory.allocator.dirty_decay_ms)" 10000 "$who jemalloc decay"
		assert_eq "$(get "$J" memory.allocator.background_thread)" true "$who jemalloc background thread"
		assert_gt "$(get "$J" memory.allocator.purged_bytes)" 0 "$who jemalloc purged bytes"
		# The built-in malloc_conf's 8-page slabs, as jemalloc laid them out.
		assert_eq "$(get "$J" memory.allocator.regions_per_slab_4KiB)" 8 "$who jemalloc 4 KiB slab"
		assert_eq "$(get "$J" memory.allocator.regions_per_slab_8KiB)" 4 "$who jemalloc 8 KiB slab"
	fi
	arenas=$(get "$J" memory.allocator.arenas)
	assert_le "$arenas" "$(get "$J" memory.allocator.arena_max)" "$who malloc arenas"
	assert_gt "$(get "$J" memory.rss_bytes)" 0 "$who rss_bytes"
	assert_gt "$(get "$J" memory.owners.corpus_bytes)" 0 "$who corpus_bytes"
	assert_gt "$(get "$J" memory.owners.tls_heap_bytes)" 0 "$who tls_heap_bytes"
done
J=$OUT/leaf.json
assert_gt "$(get "$J" memory.owners.sessions_bytes)" 0 "leaf sessions_bytes"
assert_eq "$(get "$J" memory.owners.sessions_bytes)" "$(get "$J" sessions.bytes)" "sessions bytes"
assert_gt "$(get "$J" memory.owners.dlrm_bytes)" 0 "leaf dlrm_bytes"
# Scratch at rest: what one request or call may keep (1 MiB per buffer) per thread, and
# the zstd contexts; grow-only it would hold the largest message seen (many MiB).
assert_le "$(get "$J" memory.owners.ranker_scratch_bytes)" $((64 << 20)) "leaf ranker scratch"
echo "$verdict" | sed 's/ out .*//'

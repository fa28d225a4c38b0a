/* overheads.c: stage 2, compound key, MurmurHash2, ACL map, inflight and counters. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "murmur.h"
#include "overheads.h"
#include "rng.h"

#define OVH_METHODS 5u           /* InboundMethod values 0..4 */
#define OVH_KEY_BYTES 96u        /* "feed:" + 4 numbers of <= 20 digits + separators */
#define OVH_PREFIX_BYTES 24u     /* longest ACL prefix stored */
#define OVH_KEY_SEED_MIX 0x5bd1e995u

/* One ACL slot: the prefix bytes and their hash (0 length = empty slot). */
struct ovh_acl_slot {
	uint32_t hash;                  /* fl_murmur2 of prefix[0..len) */
	uint32_t len;                   /* prefix bytes; 0 = empty */
	char prefix[OVH_PREFIX_BYTES];  /* "feed:3" or a decoy */
};

struct fl_overheads {
	struct fl_overheads_config cfg;
	uint32_t hash_seed;             /* seed of every fl_murmur2 here */
	struct ovh_acl_slot *acl;       /* acl_mask + 1 slots, read-only after new */
	uint32_t acl_mask;
	/* Shared counters; inflight sits on its own line since every request touches it twice. */
	_Alignas(64) atomic_uint inflight;
	atomic_uint inflight_peak;
	_Alignas(64) atomic_uint_least64_t admitted;
	atomic_uint_least64_t overloaded;
	atomic_uint_least64_t denied;
	atomic_uint_least64_t stale;
	atomic_uint_least64_t per_method[OVH_METHODS];
};

/* Append v in decimal at p; returns the end. The hot path avoids snprintf's parser. */
static char *ovh_put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10u);
		v /= 10u;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

static char *ovh_put_str(char *p, const char *s)
{
	while (*s != '\0')
		*p++ = *s++;
	return p;
}

/* Insert a prefix into the ACL map (linear probing); duplicates are kept once. */
static void ovh_acl_add(struct fl_overheads *o, const char *prefix, size_t len)
{
	uint32_t h = fl_murmur2(prefix, len, o->hash_seed);

	for (uint32_t i = h & o->acl_mask;; i = (i + 1u) & o->acl_mask) {
		struct ovh_acl_slot *s = &o->acl[i];

		if (s->len == 0) {
			s->hash = h;
			s->len = (uint32_t)len;
			memcpy(s->prefix, prefix, len);
			return;
		}
		if (s->hash == h && s->len == len && memcmp(s->prefix, prefix, len) == 0)
			return;
	}
}

/* Is prefix in the ACL map? Probes from its hash until a match or an empty slot. */
static int ovh_acl_has(const struct fl_overheads *o, const char *prefix, size_t len)
{
	uint32_t h = fl_murmur2(prefix, len, o->hash_seed);

	for (uint32_t i = h & o->acl_mask;; i = (i + 1u) & o->acl_mask) {
		const struct ovh_acl_slot *s = &o->acl[i];

		if (s->len == 0)
			return 0;
		if (s->hash == h && s->len == len && memcmp(s->prefix, prefix, len) == 0)
			return 1;
	}
}

/* The map holds the five allowed prefixes and acl_entries - 5 decoys ("svcNN:<hex>", never
 * of the "feed:" form) at a load factor of at most 1/2, so probe chains stay realistic. */
struct fl_overheads *fl_overheads_new(const struct fl_overheads_config *cfg, char *err,
	size_t errlen)
{
	struct fl_overheads *o;
	struct fl_rng rng;
	size_t slots = 1;

	if (cfg == NULL || cfg->inflight_limit < 1 || cfg->acl_entries < 16 ||
		cfg->acl_entries > (1u << 24)) {
		fl_errf(err, errlen, "overheads: need inflight_limit >= 1 and acl_entries in "
			"16..16777216");
		return NULL;
	}
	while (slots < 2u * (size_t)cfg->acl_entries)
		slots <<= 1;
	o = aligned_alloc(64, (sizeof(*o) + 63u) & ~(size_t)63u);
	if (o == NULL) {
		fl_errf(err, errlen, "overheads: out of memory");
		return NULL;
	}
	memset(o, 0, sizeof(*o));
	o->acl = calloc(slots, sizeof(*o->acl));
	if (o->acl == NULL) {
		free(o);
		fl_errf(err, errlen, "overheads: out of memory (%zu ACL slots)", slots);
		return NULL;
	}
	o->cfg = *cfg;
	o->acl_mask = (uint32_t)(slots - 1u);
	o->hash_seed = (uint32_t)(cfg->seed ^ (cfg->seed >> 32)) ^ OVH_KEY_SEED_MIX;
	atomic_init(&o->inflight, 0);
	atomic_init(&o->inflight_peak, 0);
	atomic_init(&o->admitted, 0);
	atomic_init(&o->overloaded, 0);
	atomic_init(&o->denied, 0);
	atomic_init(&o->stale, 0);
	for (unsigned m = 0; m < OVH_METHODS; m++) {
		char prefix[OVH_PREFIX_BYTES];
		char *e = ovh_put_u64(ovh_put_str(prefix, "feed:"), m);

		atomic_init(&o->per_method[m], 0);
		ovh_acl_add(o, prefix, (size_t)(e - prefix));
	}
	fl_rng_seed(&rng, fl_rng_derive(cfg->seed, 0xac1));
	for (uint32_t i = OVH_METHODS; i < cfg->acl_entries; i++) {
		static const char hex[] = "0123456789abcdef";
		char prefix[OVH_PREFIX_BYTES];
		char *e = ovh_put_u64(ovh_put_str(prefix, "svc"), i % 100u);
		uint64_t r = fl_rng_next(&rng);

		*e++ = ':';
		for (int k = 0; k < 12; k++, r >>= 4)
			*e++ = hex[r & 15u];
		ovh_acl_add(o, prefix, (size_t)(e - prefix));
	}
	return o;
}

void fl_overheads_free(struct fl_overheads *o)
{
	if (o == NULL)
		return;
	free(o->acl);
	free(o);
}

/* Raise the peak to at least v (a CAS loop: peaks only grow). */
static void ovh_peak(struct fl_overheads *o, unsigned v)
{
	unsigned peak = atomic_load_explicit(&o->inflight_peak, memory_order_relaxed);

	while (v > peak && !atomic_compare_exchange_weak_explicit(&o->inflight_peak, &peak, v,
		memory_order_relaxed, memory_order_relaxed))
		;
}

/* A CAS loop rather than add-then-undo, so inflight never reads above the limit. */
enum fl_ovh_verdict fl_overheads_enter(struct fl_overheads *o)
{
	unsigned cur = atomic_load_explicit(&o->inflight, memory_order_relaxed);

	do {
		if (cur >= o->cfg.inflight_limit) {
			atomic_fetch_add_explicit(&o->overloaded, 1, memory_order_relaxed);
			return FL_OVH_OVERLOADED;
		}
	} while (!atomic_compare_exchange_weak_explicit(&o->inflight, &cur, cur + 1u,
		memory_order_acq_rel, memory_order_relaxed));
	ovh_peak(o, cur + 1u);
	return FL_OVH_ADMIT;
}

enum fl_ovh_verdict fl_overheads_peek(struct fl_overheads *o)
{
	if (atomic_load_explicit(&o->inflight, memory_order_relaxed) < o->cfg.inflight_limit)
		return FL_OVH_ADMIT;
	atomic_fetch_add_explicit(&o->overloaded, 1, memory_order_relaxed);
	return FL_OVH_OVERLOADED;
}

/* Key "feed:<method>:<user>:<session>:<request>"; its prefix up to the second ':' is what
 * the ACL allows. admitted counts requests passing every check here. */
enum fl_ovh_verdict fl_overheads_run(struct fl_overheads *o, const struct fl_ovh_req *r,
	struct fl_ovh_out *out)
{
	char key[OVH_KEY_BYTES];
	char *p = ovh_put_u64(ovh_put_str(key, "feed:"), r->method);
	size_t prefix_len = (size_t)(p - key);

	*p++ = ':';
	p = ovh_put_u64(p, r->user_id);
	*p++ = ':';
	p = ovh_put_u64(p, r->session_id);
	*p++ = ':';
	p = ovh_put_u64(p, r->request_id);
	out->key_hash = fl_murmur2(key, (size_t)(p - key), o->hash_seed);
	out->admit_ns = r->now_ns;
	out->deadline_ns = o->cfg.stale_ns != 0 ? r->now_ns + o->cfg.stale_ns : 0;

	if (!ovh_acl_has(o, key, prefix_len)) {
		atomic_fetch_add_explicit(&o->denied, 1, memory_order_relaxed);
		return FL_OVH_DENIED;
	}
	/* The ACL holds only feed:0..feed:4, so the method indexes per_method safely. */
	atomic_fetch_add_explicit(&o->per_method[r->method % OVH_METHODS], 1, memory_order_relaxed);
	if (o->cfg.stale_ns != 0 && r->now_ns > r->client_ts_ns &&
		r->now_ns - r->client_ts_ns > o->cfg.stale_ns) {
		atomic_fetch_add_explicit(&o->stale, 1, memory_order_relaxed);
		return FL_OVH_STALE;
	}
	atomic_fetch_add_explicit(&o->admitted, 1, memory_order_relaxed);
	return FL_OVH_ADMIT;
}

/* Never below zero: an unmatched leave is ignored rather than wrapping the counter. */
void fl_overheads_leave(struct fl_overheads *o)
{
	unsigned cur = atomic_load_explicit(&o->inflight, memory_order_relaxed);

	while (cur > 0 && !atomic_compare_exchange_weak_explicit(&o->inflight, &cur, cur - 1u,
		memory_order_acq_rel, memory_order_relaxed))
		;
}

void fl_overheads_stats(const struct fl_overheads *o, struct fl_overheads_stats *s)
{
	/* The counters are read-only here; atomic loads need a non-const object in C11. */
	struct fl_overheads *m = (struct fl_overheads *)o;

	s->admitted = atomic_load_explicit(&m->admitted, memory_order_relaxed);
	s->overloaded = atomic_load_explicit(&m->overloaded, memory_order_relaxed);
	s->denied = atomic_load_explicit(&m->denied, memory_order_relaxed);
	s->stale = atomic_load_explicit(&m->stale, memory_order_relaxed);
	for (unsigned i = 0; i < OVH_METHODS; i++)
		s->per_method[i] = atomic_load_explicit(&m->per_method[i], memory_order_relaxed);
	s->inflight = atomic_load_explicit(&m->inflight, memory_order_relaxed);
	s->inflight_peak = atomic_load_explicit(&m->inflight_peak, memory_order_relaxed);
}

/* session.c: a bounded, lock-striped LRU + TTL session store. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "session.h"

#define SESS_MAX_STRIPES 16u
#define SESS_MIN_PER_STRIPE 64u  /* fewer stripes for small stores, so LRU stays near-global */
#define SESS_EXPIRE_SCAN 2u      /* idle tail sessions dropped per put, bounding the work */

/* One stored session: the state plus its hash chain and LRU links. */
struct sess_node {
	struct fl_session s;
	struct sess_node *hnext;               /* next in the bucket's chain */
	struct sess_node *prev, *next;         /* LRU list: head is most recently used */
};

/* One stripe: a chained hash map and an LRU list under one mutex, with its own stats so
 * the request path touches no shared counter. */
struct sess_stripe {
	_Alignas(64) pthread_mutex_t lock;
	struct sess_node **buckets;            /* bmask + 1 chains */
	uint32_t bmask;
	struct sess_node *head, *tail;         /* LRU order */
	size_t live, capacity;                 /* sessions stored, most allowed */
	uint64_t hits, misses, created, evicted_lru, expired_ttl;
};

struct fl_session_store {
	struct sess_stripe *stripes;           /* nstripes, a power of two */
	uint32_t nstripes;
	size_t capacity;
	uint64_t ttl_ns;                       /* 0 = no idle expiry */
	size_t bucket_bytes;                   /* every stripe's bucket array */
};

/* splitmix64's finaliser (rng.h): spreads sequential ids over stripes and buckets. */
static uint64_t sess_hash(uint64_t id)
{
	return fl_rng_mix64(id);
}

static void sess_free_stripes(struct fl_session_store *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct sess_stripe *st = &s->stripes[i];
		struct sess_node *nd = st->head;

		while (nd != NULL) {
			struct sess_node *next = nd->next;

			free(nd);
			nd = next;
		}
		free(st->buckets);
		pthread_mutex_destroy(&st->lock);
	}
	free(s->stripes);
}

/* Capacity is split evenly over the stripes; nodes are allocated on first use, so a large
 * idle store costs only its bucket arrays. */
struct fl_session_store *fl_session_store_new(size_t capacity, uint64_t ttl_ms)
{
	struct fl_session_store *s;
	uint32_t n = 1;

	if (capacity < 1 || capacity > ((size_t)1 << 31) || ttl_ms > UINT64_MAX / 1000000u)
		return NULL;
	while (n < SESS_MAX_STRIPES && (size_t)n * 2u * SESS_MIN_PER_STRIPE <= capacity)
		n *= 2u;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->stripes = aligned_alloc(64, n * sizeof(*s->stripes));
	if (s->stripes == NULL) {
		free(s);
		return NULL;
	}
	memset(s->stripes, 0, n * sizeof(*s->stripes));
	s->nstripes = n;
	s->capacity = capacity;
	s->ttl_ns = ttl_ms * 1000000u;
	for (uint32_t i = 0; i < n; i++) {
		struct sess_stripe *st = &s->stripes[i];
		size_t nb = 1;

		st->capacity = capacity / n + (i < capacity % n);
		while (nb < st->capacity)
			nb <<= 1;
		st->buckets = calloc(nb, sizeof(*st->buckets));
		if (st->buckets == NULL || pthread_mutex_init(&st->lock, NULL) != 0) {
			free(st->buckets);
			sess_free_stripes(s, i);
			free(s);
			return NULL;
		}
		st->bmask = (uint32_t)(nb - 1u);
		s->bucket_bytes += nb * sizeof(*st->buckets);
	}
	return s;
}

size_t fl_session_node_bytes(void)
{
	return sizeof(struct sess_node);
}

void fl_session_store_free(struct fl_session_store *s)
{
	if (s == NULL)
		return;
	sess_free_stripes(s, s->nstripes);
	free(s);
}

static struct sess_stripe *sess_stripe_of(struct fl_session_store *s, uint64_t h)
{
	return &s->stripes[h & (s->nstripes - 1u)];
}

static struct sess_node **sess_bucket(struct sess_stripe *st, uint64_t h)
{
	return &st->buckets[(h >> 32) & st->bmask];
}

static void sess_lru_unlink(struct sess_stripe *st, struct sess_node *nd)
{
	if (nd->prev != NULL)
		nd->prev->next = nd->next;
	else
		st->head = nd->next;
	if (nd->next != NULL)
		nd->next->prev = nd->prev;
	else
		st->tail = nd->prev;
	nd->prev = nd->next = NULL;
}

static void sess_lru_push_front(struct sess_stripe *st, struct sess_node *nd)
{
	nd->prev = NULL;
	nd->next = st->head;
	if (st->head != NULL)
		st->head->prev = nd;
	st->head = nd;
	if (st->tail == NULL)
		st->tail = nd;
}

static struct sess_node *sess_find(struct sess_stripe *st, uint64_t id, uint64_t h)
{
	struct sess_node *nd = *sess_bucket(st, h);

	while (nd != NULL && nd->s.id != id)
		nd = nd->hnext;
	return nd;
}

/* Take nd out of its chain and the LRU list (the caller frees or reuses it). */
static void sess_remove(struct sess_stripe *st, struct sess_node *nd)
{
	struct sess_node **pp = sess_bucket(st, sess_hash(nd->s.id));

	while (*pp != nd)
		pp = &(*pp)->hnext;
	*pp = nd->hnext;
	sess_lru_unlink(st, nd);
	st->live--;
}

static int sess_expired(const struct fl_session_store *s, const struct sess_node *nd,
	uint64_t now_ns)
{
	return s->ttl_ns != 0 && now_ns > nd->s.touched_ns && now_ns - nd->s.touched_ns > s->ttl_ns;
}

/* A node for a new session: a fresh allocation below capacity, else the LRU tail's. */
static struct sess_node *sess_node_for_insert(struct sess_stripe *st)
{
	struct sess_node *nd;

	if (st->live < st->capacity)
		return malloc(sizeof(struct sess_node));
	nd = st->tail;
	sess_remove(st, nd);
	st->evicted_lru++;
	return nd;
}

/* Insert a copy of *in (not present yet) at the LRU head. Returns the node, or NULL when
 * out of memory (the session is then simply not remembered). */
static struct sess_node *sess_insert(struct sess_stripe *st, const struct fl_session *in,
	uint64_t h)
{
	struct sess_node *nd = sess_node_for_insert(st);
	struct sess_node **b = sess_bucket(st, h);

	if (nd == NULL)
		return NULL;
	nd->s = *in;
	nd->hnext = *b;
	*b = nd;
	sess_lru_push_front(st, nd);
	st->live++;
	return nd;
}

/* Drop up to SESS_EXPIRE_SCAN idle sessions from the LRU tail (the oldest are there). */
static void sess_expire_tail(struct fl_session_store *s, struct sess_stripe *st, uint64_t now_ns)
{
	for (unsigned i = 0; i < SESS_EXPIRE_SCAN && st->tail != NULL; i++) {
		struct sess_node *nd = st->tail;

		if (!sess_expired(s, nd, now_ns))
			return;
		sess_remove(st, nd);
		st->expired_ttl++;
		free(nd);
	}
}

/* A fresh session is stored at once, so concurrent requests of that session find it. */
int fl_session_get(struct fl_session_store *s, uint64_t id, uint64_t now_ns, int create,
	struct fl_session *out)
{
	uint64_t h = sess_hash(id);
	struct sess_stripe *st = sess_stripe_of(s, h);
	struct sess_node *nd;

	pthread_mutex_lock(&st->lock);
	nd = sess_find(st, id, h);
	if (nd != NULL && !create && sess_expired(s, nd, now_ns)) {
		sess_remove(st, nd);
		st->expired_ttl++;
		free(nd);
		nd = NULL;
	}
	if (nd != NULL && !create) {
		nd->s.touched_ns = now_ns;
		sess_lru_unlink(st, nd);
		sess_lru_push_front(st, nd);
		*out = nd->s;
		st->hits++;
		pthread_mutex_unlock(&st->lock);
		return 1;
	}
	memset(out, 0, sizeof(*out));
	out->id = id;
	out->created_ns = out->touched_ns = now_ns;
	if (!create)
		st->misses++;
	st->created++;
	if (nd != NULL) {
		nd->s = *out;
		sess_lru_unlink(st, nd);
		sess_lru_push_front(st, nd);
	} else {
		sess_expire_tail(s, st, now_ns);
		sess_insert(st, out, h);
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

void fl_session_put(struct fl_session_store *s, const struct fl_session *in, uint64_t now_ns)
{
	uint64_t h = sess_hash(in->id);
	struct sess_stripe *st = sess_stripe_of(s, h);
	struct sess_node *nd;

	pthread_mutex_lock(&st->lock);
	nd = sess_find(st, in->id, h);
	if (nd != NULL) {
		nd->s = *in;
		sess_lru_unlink(st, nd);
		sess_lru_push_front(st, nd);
	} else {
		sess_expire_tail(s, st, now_ns);
		nd = sess_insert(st, in, h);
	}
	if (nd != NULL) {
		nd->s.touched_ns = now_ns;
		if (nd->s.nstories > FL_SESSION_STORIES)
			nd->s.nstories = FL_SESSION_STORIES;
		nd->s.story_head %= FL_SESSION_STORIES;
	}
	pthread_mutex_unlock(&st->lock);
}

void fl_session_stats(struct fl_session_store *s, struct fl_session_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < s->nstripes; i++) {
		struct sess_stripe *st = &s->stripes[i];

		pthread_mutex_lock(&st->lock);
		out->hits += st->hits;
		out->misses += st->misses;
		out->created += st->created;
		out->evicted_lru += st->evicted_lru;
		out->expired_ttl += st->expired_ttl;
		out->live += st->live;
		pthread_mutex_unlock(&st->lock);
	}
	out->capacity = s->capacity;
	out->bytes_per_session = sizeof(struct sess_node);
	out->bytes = out->live * sizeof(struct sess_node) + s->bucket_bytes;
	out->max_bytes = s->capacity * sizeof(struct sess_node) + s->bucket_bytes;
}

/* fanout_slots.h: a FANOUT thread's in-flight call slots (fanout.c).
 *
 * A pool hands out slots, each under a fresh id: (generation << 32) | index, where index
 * is the slot's fixed position in the pool and the generation (31 bits, never 0) advances
 * on every get. So an id is never 0, never sets bit 63 (left to the caller's pings), and
 * a late reply for a slot since put back or reused finds a changed id. Slots are never
 * freed before the pool is, so a reply's id is matched with one array lookup. A slot in
 * use sits on one in-flight list (a channel's), doubly linked, so a reply, a deadline or
 * a lost channel takes it off in O(1). A put slot goes on the free list and is handed out
 * again first (last put, first got).
 *
 * The pool knows nothing of libevent: a new slot is given to the init hook once (fanout.c
 * makes its deadline event there and sets owner), and each slot to the fini hook once when
 * the pool is freed. Not locked: one FANOUT thread owns a pool and its lists.
 */
#ifndef FL_FANOUT_SLOTS_H
#define FL_FANOUT_SLOTS_H

#include <stdint.h>

struct event;
struct fl_fslot_list;

struct fl_fslot {
	uint32_t index;                 /* position in the pool; the id's low 32 bits */
	uint64_t id;                    /* request_id on the wire; 0 while free */
	struct fl_fslot_list *list;     /* in-flight list it is on; NULL while off */
	struct fl_fslot *prev, *next;   /* list links; next also links the free list */
	/* The caller's (never read here): set by the init hook, kept for the slot's life. */
	void *owner;
	struct event *deadline;
	/* The caller's call in flight: set after get, cleared by put. */
	void *req;
	void *call;
};

/* A channel's in-flight slots, newest first. */
struct fl_fslot_list {
	struct fl_fslot *head;
	unsigned n;
};

/* Called once per new slot (before its first id); nonzero: the slot is dropped and
 * fl_fslot_get fails. */
typedef int (*fl_fslot_init_fn)(struct fl_fslot *s, void *arg);
typedef void (*fl_fslot_fini_fn)(struct fl_fslot *s, void *arg);

struct fl_fslots {
	struct fl_fslot **v;            /* every slot made, by index */
	uint32_t n, cap;                /* slots made, room in v (grows 64, 128, ...) */
	struct fl_fslot *free;          /* put slots, last put first */
	uint32_t gen;                   /* the last id's generation (bits 32..62) */
	fl_fslot_init_fn init;          /* NULL: none */
	void *arg;                      /* passed to init */
};

/* An empty pool; init (may be NULL) is called with arg on every new slot. */
void fl_fslots_init(struct fl_fslots *p, fl_fslot_init_fn init, void *arg);

/* Free every slot (fini, when not NULL, first, with arg) and the pool's array. */
void fl_fslots_free(struct fl_fslots *p, fl_fslot_fini_fn fini, void *arg);

/* A free slot under a new id, on no list, req and call NULL: the last one put, else a new
 * one. NULL when out of memory or the init hook fails (the pool is unchanged but for a
 * larger array). */
struct fl_fslot *fl_fslot_get(struct fl_fslots *p);

/* Give s back (not on a list): its id becomes 0 and req and call NULL. */
void fl_fslot_put(struct fl_fslots *p, struct fl_fslot *s);

/* Put s (from get, on no list) at the head of l. */
void fl_fslot_link(struct fl_fslot_list *l, struct fl_fslot *s);

/* The slot in use under id on list l, or NULL: id 0, bit 63 set, an index never handed
 * out, a stale id (the slot was put or reused since), or a slot on another list. */
struct fl_fslot *fl_fslot_find(const struct fl_fslots *p, const struct fl_fslot_list *l,
	uint64_t id);

/* Take s off its list and put it back; the slot is free on return. */
void fl_fslot_detach(struct fl_fslots *p, struct fl_fslot *s);

#endif

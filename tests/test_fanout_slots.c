/* test_fanout_slots.c: tests for runtime/leaf/fanout_slots.c, the FANOUT thread's in-flight
 * call slots: the pool and its free list, ids (never 0, bit 63 clear, index in the low
 * bits, a new generation on every get), lookup by id on a channel's list, and the
 * doubly linked in-flight lists. Build: ninja tests/test_fanout_slots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fanout_slots.h"

#define FIRST_CAP 64u              /* the pool's first array (fanout_slots.c) */
#define PING_BIT (1ull << 63)      /* the fanout's ping ids set it; slot ids never do */

/* The init hook's record: how often it ran, and whether it should refuse. */
struct hook {
	unsigned inits, finis;
	int refuse;
};

static int hook_init(struct fl_fslot *s, void *arg)
{
	struct hook *h = arg;

	if (h->refuse)
		return -1;
	h->inits++;
	s->owner = h;
	return 0;
}

static void hook_fini(struct fl_fslot *s, void *arg)
{
	struct hook *h = arg;

	assert_ptr_equal(s->owner, h);
	h->finis++;
}

/* Walk l from its head: links agree both ways, every slot says it is on l and has an id,
 * and l->n counts them. Writes the slots in list order into out (when not NULL). */
static unsigned check_list(const struct fl_fslot_list *l, struct fl_fslot **out, unsigned max)
{
	unsigned n = 0;
	const struct fl_fslot *prev = NULL;

	for (struct fl_fslot *s = l->head; s; s = s->next) {
		assert_ptr_equal(s->prev, prev);
		assert_ptr_equal(s->list, l);
		assert_int_not_equal(s->id, 0);
		assert_true(n < max);
		if (out)
			out[n] = s;
		n++;
		prev = s;
	}
	assert_int_equal(n, l->n);
	return n;
}

/* The pool's invariant: slot i has index i; a slot is free (id 0, on no list, on the free
 * list once) or in use (an id naming it, bit 63 clear); free + in use = every slot. */
static void check_pool(const struct fl_fslots *p, unsigned want_in_use)
{
	unsigned nfree = 0, in_use = 0;

	assert_true(p->n <= p->cap);
	for (const struct fl_fslot *s = p->free; s; s = s->next) {
		assert_int_equal(s->id, 0);
		assert_null(s->list);
		assert_null(s->req);
		assert_null(s->call);
		assert_true(++nfree <= p->n);  /* no cycle */
	}
	for (uint32_t i = 0; i < p->n; i++) {
		const struct fl_fslot *s = p->v[i];
		assert_int_equal(s->index, i);
		if (s->id == 0)
			continue;
		in_use++;
		assert_int_equal((uint32_t)s->id, i);
		assert_int_equal(s->id & PING_BIT, 0);
	}
	assert_int_equal(in_use, want_in_use);
	assert_int_equal(nfree + in_use, p->n);
}

static void test_get_from_empty_grows(void **state)
{
	struct hook h = { 0 };
	struct fl_fslots p;

	(void)state;
	fl_fslots_init(&p, hook_init, &h);
	assert_int_equal(p.n, 0);
	assert_null(p.free);
	struct fl_fslot *s = fl_fslot_get(&p);
	assert_non_null(s);
	assert_int_equal(h.inits, 1);
	assert_ptr_equal(s->owner, &h);  /* the hook saw the slot before get returned it */
	assert_int_equal(p.n, 1);
	assert_int_equal(p.cap, FIRST_CAP);
	assert_ptr_equal(p.v[0], s);
	assert_int_equal(s->index, 0);
	assert_int_not_equal(s->id, 0);
	assert_int_equal((uint32_t)s->id, 0);
	assert_null(s->list);
	assert_null(s->prev);
	assert_null(s->next);
	assert_null(s->req);
	assert_null(s->call);
	check_pool(&p, 1);
	fl_fslots_free(&p, hook_fini, &h);
	assert_int_equal(h.finis, 1);
	assert_int_equal(p.n, 0);
	assert_null(p.v);
}

/* A put slot is the next one got (last put, first got), under a new id, with no new slot
 * made and the caller's req and call cleared. */
static void test_put_then_get_reuses(void **state)
{
	struct hook h = { 0 };
	struct fl_fslots p;
	int req, call;

	(void)state;
	fl_fslots_init(&p, hook_init, &h);
	struct fl_fslot *a = fl_fslot_get(&p), *b = fl_fslot_get(&p);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_int_equal(b->index, 1);
	a->req = &req;
	a->call = &call;
	uint64_t old = a->id;
	fl_fslot_put(&p, a);
	assert_int_equal(a->id, 0);
	assert_null(a->req);
	assert_null(a->call);
	check_pool(&p, 1);
	struct fl_fslot *c = fl_fslot_get(&p);
	assert_ptr_equal(c, a);
	assert_int_equal(c->index, 0);
	assert_int_not_equal(c->id, old);
	assert_int_equal((uint32_t)c->id, 0);
	assert_int_equal(p.n, 2);
	assert_int_equal(h.inits, 2);
	assert_ptr_equal(c->owner, &h);  /* the hook's fields outlive a put */

	/* Last put, first got. */
	fl_fslot_put(&p, a);
	fl_fslot_put(&p, b);
	check_pool(&p, 0);
	assert_ptr_equal(fl_fslot_get(&p), b);
	assert_ptr_equal(fl_fslot_get(&p), a);
	assert_null(p.free);
	assert_int_equal(h.inits, 2);
	check_pool(&p, 2);
	fl_fslots_free(&p, hook_fini, &h);
	assert_int_equal(h.finis, 2);
}

/* Every get takes a new 31-bit generation; it wraps past 0x7fffffff to 1, never 0, so an
 * id never is 0 and never sets bit 63. */
static void test_id_generations(void **state)
{
	struct fl_fslots p;

	(void)state;
	fl_fslots_init(&p, NULL, NULL);
	struct fl_fslot *s = fl_fslot_get(&p);
	assert_non_null(s);
	uint64_t first = s->id;
	fl_fslot_put(&p, s);
	s = fl_fslot_get(&p);
	assert_int_equal(s->id >> 32, (first >> 32) + 1);
	fl_fslot_put(&p, s);

	p.gen = 0x7ffffffeu;
	s = fl_fslot_get(&p);
	assert_int_equal(s->id, 0x7fffffffull << 32);
	assert_int_equal(s->id & PING_BIT, 0);
	fl_fslot_put(&p, s);
	s = fl_fslot_get(&p);
	assert_int_equal(s->id, 1ull << 32);  /* wrapped, skipping generation 0 */
	struct fl_fslot *t = fl_fslot_get(&p);
	assert_int_equal(t->id, (2ull << 32) | 1);
	check_pool(&p, 2);
	fl_fslots_free(&p, NULL, NULL);
}

/* find: the slot in use under an id on its own list; nothing for id 0, a ping id, an index
 * never handed out, another list, a slot got but not linked, or a stale id. */
static void test_find(void **state)
{
	struct fl_fslots p;
	struct fl_fslot_list l1 = { 0 }, l2 = { 0 };

	(void)state;
	fl_fslots_init(&p, NULL, NULL);
	struct fl_fslot *a = fl_fslot_get(&p), *b = fl_fslot_get(&p), *c = fl_fslot_get(&p);
	fl_fslot_link(&l1, a);
	fl_fslot_link(&l2, b);
	assert_ptr_equal(fl_fslot_find(&p, &l1, a->id), a);
	assert_ptr_equal(fl_fslot_find(&p, &l2, b->id), b);
	assert_null(fl_fslot_find(&p, &l2, a->id));     /* sent on another channel */
	assert_null(fl_fslot_find(&p, &l1, b->id));
	assert_null(fl_fslot_find(&p, &l1, c->id));     /* got, not linked */
	assert_null(fl_fslot_find(&p, &l1, 0));
	assert_null(fl_fslot_find(&p, &l1, a->id | PING_BIT));
	assert_null(fl_fslot_find(&p, &l1, (a->id & ~0xffffffffull) | 3));  /* index 3: none */
	assert_null(fl_fslot_find(&p, &l1, (a->id & ~0xffffffffull) | 0xffffffffull));
	assert_null(fl_fslot_find(&p, &l1, a->id + (1ull << 32)));  /* other generation */

	/* A late reply: its slot was taken off, then reused for another call on the same list. */
	uint64_t late = a->id;
	fl_fslot_detach(&p, a);
	assert_null(fl_fslot_find(&p, &l1, late));
	struct fl_fslot *again = fl_fslot_get(&p);
	assert_ptr_equal(again, a);
	fl_fslot_link(&l1, again);
	assert_null(fl_fslot_find(&p, &l1, late));
	assert_ptr_equal(fl_fslot_find(&p, &l1, again->id), a);
	check_pool(&p, 3);
	fl_fslots_free(&p, NULL, NULL);
}

/* Five calls on one list (newest first), taken off from the middle, the head and the tail:
 * the rest keep their order and links, and each one taken off is free. */
static void test_detach_positions(void **state)
{
	struct fl_fslots p;
	struct fl_fslot_list l = { 0 };
	struct fl_fslot *s[5], *got[5];

	(void)state;
	fl_fslots_init(&p, NULL, NULL);
	for (unsigned i = 0; i < 5; i++) {
		s[i] = fl_fslot_get(&p);
		assert_non_null(s[i]);
		fl_fslot_link(&l, s[i]);
	}
	assert_int_equal(check_list(&l, got, 5), 5);
	for (unsigned i = 0; i < 5; i++)
		assert_ptr_equal(got[i], s[4 - i]);

	fl_fslot_detach(&p, s[2]);  /* middle */
	assert_int_equal(s[2]->id, 0);
	assert_null(s[2]->list);
	assert_int_equal(check_list(&l, got, 5), 4);
	assert_ptr_equal(got[0], s[4]);
	assert_ptr_equal(got[1], s[3]);
	assert_ptr_equal(got[2], s[1]);
	assert_ptr_equal(got[3], s[0]);

	fl_fslot_detach(&p, s[4]);  /* head */
	assert_int_equal(check_list(&l, got, 5), 3);
	assert_ptr_equal(l.head, s[3]);
	assert_ptr_equal(got[1], s[1]);
	assert_ptr_equal(got[2], s[0]);

	fl_fslot_detach(&p, s[0]);  /* tail */
	assert_int_equal(check_list(&l, got, 5), 2);
	assert_ptr_equal(got[0], s[3]);
	assert_ptr_equal(got[1], s[1]);
	assert_null(s[1]->next);
	check_pool(&p, 2);
	assert_ptr_equal(p.free, s[0]);  /* the last taken off is the next got */

	fl_fslot_detach(&p, s[1]);
	fl_fslot_detach(&p, s[3]);  /* the only one: head and tail */
	assert_null(l.head);
	assert_int_equal(l.n, 0);
	check_pool(&p, 0);
	fl_fslots_free(&p, NULL, NULL);
}

/* Past the first array: 1000 slots on two lists, every id found on its own list only;
 * all taken off and got again, no new slot is made. */
#define MANY 1000u

static void test_many_slots(void **state)
{
	struct hook h = { 0 };
	struct fl_fslots p;
	struct fl_fslot_list l[2] = { { 0 }, { 0 } };
	static struct fl_fslot *s[MANY];

	(void)state;
	fl_fslots_init(&p, hook_init, &h);
	for (unsigned i = 0; i < MANY; i++) {
		s[i] = fl_fslot_get(&p);
		assert_non_null(s[i]);
		assert_int_equal(s[i]->index, i);
		if (i == FIRST_CAP)  /* the 65th slot doubles the array; the first 64 stay put */
			assert_int_equal(p.cap, 2 * FIRST_CAP);
		fl_fslot_link(&l[i % 2], s[i]);
	}
	for (unsigned i = 0; i < MANY; i++)
		assert_ptr_equal(p.v[i], s[i]);
	assert_int_equal(p.n, MANY);
	assert_int_equal(p.cap, 1024);  /* 64 doubled four times */
	assert_int_equal(h.inits, MANY);
	assert_int_equal(check_list(&l[0], NULL, MANY), MANY / 2);
	assert_int_equal(check_list(&l[1], NULL, MANY), MANY / 2);
	check_pool(&p, MANY);
	for (unsigned i = 0; i < MANY; i++) {
		assert_ptr_equal(fl_fslot_find(&p, &l[i % 2], s[i]->id), s[i]);
		assert_null(fl_fslot_find(&p, &l[1 - i % 2], s[i]->id));
	}
	/* Ids are unique: generations rose by one per get. */
	for (unsigned i = 1; i < MANY; i++)
		assert_int_equal(s[i]->id >> 32, (s[i - 1]->id >> 32) + 1);

	for (unsigned i = 0; i < MANY; i += 2)  /* every other one first: middles */
		fl_fslot_detach(&p, s[i]);
	assert_int_equal(check_list(&l[0], NULL, MANY), 0);
	assert_int_equal(check_list(&l[1], NULL, MANY), MANY / 2);
	for (unsigned i = 1; i < MANY; i += 2)
		fl_fslot_detach(&p, s[i]);
	check_pool(&p, 0);
	for (unsigned i = 0; i < MANY; i++)
		assert_non_null(fl_fslot_get(&p));
	assert_int_equal(p.n, MANY);
	assert_int_equal(h.inits, MANY);
	check_pool(&p, MANY);
	fl_fslots_free(&p, hook_fini, &h);
	assert_int_equal(h.finis, MANY);
}

/* A refused init hook (fanout.c: no deadline event) fails the get and leaves the pool as
 * it was: no slot, no generation used; the next get makes the slot at the same index. */
static void test_init_refused(void **state)
{
	struct hook h = { .refuse = 1 };
	struct fl_fslots p;

	(void)state;
	fl_fslots_init(&p, hook_init, &h);
	assert_null(fl_fslot_get(&p));
	assert_int_equal(p.n, 0);
	assert_int_equal(p.gen, 0);
	h.refuse = 0;
	struct fl_fslot *a = fl_fslot_get(&p);
	assert_non_null(a);
	assert_int_equal(a->index, 0);
	assert_int_equal(a->id, 1ull << 32);
	h.refuse = 1;
	assert_null(fl_fslot_get(&p));
	assert_int_equal(p.n, 1);
	fl_fslot_put(&p, a);
	assert_ptr_equal(fl_fslot_get(&p), a);  /* reuse needs no hook */
	check_pool(&p, 1);
	fl_fslots_free(&p, hook_fini, &h);
	assert_int_equal(h.finis, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_from_empty_grows),
		cmocka_unit_test(test_put_then_get_reuses),
		cmocka_unit_test(test_id_generations),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_detach_positions),
		cmocka_unit_test(test_many_slots),
		cmocka_unit_test(test_init_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

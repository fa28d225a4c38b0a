/* test_session.c: tests for runtime/request/session.c, the leaf's LRU/TTL session store. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "session.h"

#define MS 1000000ull          /* ns per ms */

/* Get (create when absent) and store back, as the pipeline does. Returns get's result. */
static int sess_touch(struct fl_session_store *s, uint64_t id, uint64_t now_ns)
{
	struct fl_session se;
	int rc = fl_session_get(s, id, now_ns, 0, &se);

	se.requests++;
	fl_session_put(s, &se, now_ns);
	return rc;
}

/* 1: a full store evicts the least recently used session, and a get refreshes recency. */
static void test_session_lru_order(void **state)
{
	struct fl_session_store *s = fl_session_store_new(4, 0);
	struct fl_session_stats st;
	struct fl_session se;

	(void)state;
	assert_non_null(s);
	for (uint64_t id = 1; id <= 4; id++)
		assert_int_equal(sess_touch(s, id, id * MS), 0);
	assert_int_equal(sess_touch(s, 1, 5 * MS), 1);     /* 1 is now the most recent */
	assert_int_equal(sess_touch(s, 5, 6 * MS), 0);     /* evicts 2 */
	for (uint64_t id = 3; id <= 5; id++)
		assert_int_equal(sess_touch(s, id, (6 + id) * MS), 1);
	assert_int_equal(sess_touch(s, 1, 20 * MS), 1);
	assert_int_equal(fl_session_get(s, 2, 21 * MS, 0, &se), 0);  /* gone; evicts 3 */
	assert_int_equal(se.requests, 0);
	assert_int_equal(fl_session_get(s, 3, 22 * MS, 0, &se), 0);  /* evicts 4 */
	assert_int_equal(fl_session_get(s, 5, 23 * MS, 0, &se), 1);
	assert_int_equal(se.requests, 2);
	assert_int_equal(fl_session_get(s, 1, 24 * MS, 0, &se), 1);
	assert_int_equal(se.requests, 3);
	fl_session_stats(s, &st);
	assert_int_equal(st.evicted_lru, 3);
	assert_int_equal(st.misses, 7);
	assert_int_equal(st.created, 7);
	assert_int_equal(st.hits, 7);
	assert_int_equal(st.live, 4);
	assert_int_equal(st.capacity, 4);
	fl_session_store_free(s);
}

/* 2: sessions idle beyond the TTL are dropped; create = 1 always starts fresh. */
static void test_session_ttl(void **state)
{
	struct fl_session_store *s = fl_session_store_new(8, 10);
	struct fl_session se, got;
	struct fl_session_stats st;

	(void)state;
	assert_non_null(s);
	assert_int_equal(fl_session_get(s, 7, 100 * MS, 1, &se), 0);
	se.requests = 3;
	se.story_ids[0] = 42;
	se.nstories = 1;
	se.story_head = 1;
	fl_session_put(s, &se, 100 * MS);
	assert_int_equal(fl_session_get(s, 7, 105 * MS, 0, &got), 1);
	assert_int_equal(got.requests, 3);
	assert_int_equal(got.story_ids[0], 42);
	assert_int_equal(got.touched_ns, 105 * MS);
	assert_int_equal(fl_session_get(s, 7, 116 * MS, 0, &got), 0);  /* idle 11 ms */
	assert_int_equal(got.requests, 0);
	assert_int_equal(got.nstories, 0);
	assert_int_equal(got.id, 7);
	fl_session_put(s, &se, 117 * MS);
	assert_int_equal(fl_session_get(s, 7, 118 * MS, 1, &got), 0);  /* create: fresh */
	assert_int_equal(got.requests, 0);
	fl_session_stats(s, &st);
	assert_int_equal(st.expired_ttl, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.created, 3);
	assert_int_equal(st.live, 1);
	fl_session_store_free(s);
}

/* 3: 10x capacity distinct sessions never hold more than capacity. */
static void test_session_capacity(void **state)
{
	const size_t cap = 1000;
	struct fl_session_store *s = fl_session_store_new(cap, 0);
	struct fl_session_stats st;

	(void)state;
	assert_non_null(s);
	for (uint64_t i = 0; i < 10 * cap; i++) {
		sess_touch(s, 0x1000 + i * 7919, i);
		if (i % 97 == 0) {
			fl_session_stats(s, &st);
			assert_true(st.live <= cap);
		}
	}
	fl_session_stats(s, &st);
	assert_int_equal(st.live, cap);
	/* Full: the store's bytes are its bound, a node per session plus the buckets. */
	assert_true(st.bytes_per_session >= sizeof(struct fl_session));
	assert_int_equal(st.bytes_per_session, fl_session_node_bytes());
	assert_int_equal(st.bytes, st.max_bytes);
	assert_true(st.max_bytes >= cap * st.bytes_per_session);
	assert_true(st.max_bytes <= cap * (st.bytes_per_session + 2 * sizeof(void *)));
	assert_int_equal(st.misses, 10 * cap);
	assert_int_equal(st.created, 10 * cap);
	assert_int_equal(st.evicted_lru, 9 * cap);
	assert_int_equal(st.hits, 0);
	assert_null(fl_session_store_new(0, 0));
	fl_session_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_lru_order),
		cmocka_unit_test(test_session_ttl),
		cmocka_unit_test(test_session_capacity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

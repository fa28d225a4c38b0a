/* test_ranker_queue.c: tests for runtime/leaf/ranker_queue.c, the RANKER pool's job order:
 * replies before new jobs, FIFO within each, new jobs bounded by the capacity, replies
 * never refused. Build: ninja tests/test_ranker_queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ranker.h"
#include "ranker_queue.h"

#define NJOBS 8

static struct fl_job jobs[NJOBS];

static void reset_jobs(void)
{
	memset(jobs, 0, sizeof(jobs));
	for (unsigned i = 0; i < NJOBS; i++)
		jobs[i].request_id = i + 1;
}

/* Pop everything, writing the request ids in pop order into ids; returns how many. */
static unsigned drain(struct fl_rqueue *q, uint64_t *ids, unsigned max)
{
	unsigned n = 0;
	struct fl_job *j;

	while (n < max && (j = fl_rqueue_pop(q)) != NULL) {
		assert_null(j->next);
		ids[n++] = j->request_id;
	}
	return n;
}

static void test_empty(void **state)
{
	struct fl_rqueue q;

	(void)state;
	fl_rqueue_init(&q, 4);
	assert_true(fl_rqueue_empty(&q));
	assert_null(fl_rqueue_pop(&q));
	assert_int_equal(q.nfresh, 0);
}

static void test_fifo_fresh(void **state)
{
	struct fl_rqueue q;
	uint64_t ids[NJOBS];

	(void)state;
	reset_jobs();
	fl_rqueue_init(&q, NJOBS);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[i]), 0);
	assert_int_equal(q.nfresh, 5);
	assert_int_equal(drain(&q, ids, NJOBS), 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(ids[i], i + 1);
	assert_int_equal(q.nfresh, 0);
	assert_true(fl_rqueue_empty(&q));
}

/* Replies first, whatever the order they arrived in; each queue FIFO. */
static void test_replies_first(void **state)
{
	struct fl_rqueue q;
	uint64_t ids[NJOBS];
	const uint64_t want[] = { 2, 4, 5, 1, 3 };

	(void)state;
	reset_jobs();
	fl_rqueue_init(&q, NJOBS);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[0]), 0);  /* 1 new */
	fl_rqueue_push_reply(&q, &jobs[1]);                        /* 2 reply */
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[2]), 0);  /* 3 new */
	fl_rqueue_push_reply(&q, &jobs[3]);                        /* 4 reply */
	fl_rqueue_push_reply(&q, &jobs[4]);                        /* 5 reply */
	assert_int_equal(q.nfresh, 2);
	assert_int_equal(drain(&q, ids, NJOBS), 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(ids[i], want[i]);
}

/* A reply arriving between pops still overtakes the new jobs left. */
static void test_reply_overtakes(void **state)
{
	struct fl_rqueue q;

	(void)state;
	reset_jobs();
	fl_rqueue_init(&q, NJOBS);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[0]), 0);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[1]), 0);
	assert_ptr_equal(fl_rqueue_pop(&q), &jobs[0]);
	fl_rqueue_push_reply(&q, &jobs[0]);  /* back from its fanout */
	assert_ptr_equal(fl_rqueue_pop(&q), &jobs[0]);
	assert_ptr_equal(fl_rqueue_pop(&q), &jobs[1]);
	assert_null(fl_rqueue_pop(&q));
}

/* New jobs stop at the capacity and fit again once one is taken; replies never stop. */
static void test_capacity(void **state)
{
	struct fl_rqueue q;

	(void)state;
	reset_jobs();
	fl_rqueue_init(&q, 2);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[0]), 0);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[1]), 0);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[2]), -1);
	assert_int_equal(q.nfresh, 2);
	for (unsigned i = 3; i < NJOBS; i++)
		fl_rqueue_push_reply(&q, &jobs[i]);  /* over the capacity: replies are not bounded */
	for (unsigned i = 3; i < NJOBS; i++)
		assert_ptr_equal(fl_rqueue_pop(&q), &jobs[i]);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[2]), -1);  /* still full */
	assert_ptr_equal(fl_rqueue_pop(&q), &jobs[0]);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[2]), 0);
	assert_ptr_equal(fl_rqueue_pop(&q), &jobs[1]);
	assert_ptr_equal(fl_rqueue_pop(&q), &jobs[2]);
	assert_true(fl_rqueue_empty(&q));
	assert_int_equal(q.nfresh, 0);
}

/* A zero capacity is taken as 1 (the pool refuses 0 earlier; the queue stays usable). */
static void test_zero_capacity(void **state)
{
	struct fl_rqueue q;

	(void)state;
	reset_jobs();
	fl_rqueue_init(&q, 0);
	assert_int_equal(q.cap, 1);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[0]), 0);
	assert_int_equal(fl_rqueue_push_fresh(&q, &jobs[1]), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_fifo_fresh),
		cmocka_unit_test(test_replies_first),
		cmocka_unit_test(test_reply_overtakes),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_zero_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

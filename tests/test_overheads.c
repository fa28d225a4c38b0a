/* test_overheads.c: tests for runtime/request/overheads.c: admission, ACL, staleness. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "overheads.h"

#define MS 1000000ull          /* ns per ms */
#define ERRLEN 256u

static struct fl_overheads *ovh_new(uint32_t limit, uint64_t stale_ns)
{
	struct fl_overheads_config c = { .inflight_limit = limit, .stale_ns = stale_ns,
		.acl_entries = 256, .seed = 11 };
	char err[ERRLEN];
	struct fl_overheads *o = fl_overheads_new(&c, err, sizeof(err));

	if (o == NULL)
		fail_msg("fl_overheads_new: %s", err);
	return o;
}

/* 4: at the inflight limit requests are shed; a leave makes room again. */
static void test_ovh_inflight(void **state)
{
	struct fl_overheads *o = ovh_new(3, 0);
	struct fl_overheads_stats st;

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(fl_overheads_enter(o), FL_OVH_ADMIT);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_OVERLOADED);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_OVERLOADED);
	fl_overheads_leave(o);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_ADMIT);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_OVERLOADED);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.overloaded, 3);
	assert_int_equal(st.inflight, 3);
	assert_int_equal(st.inflight_peak, 3);
	for (int i = 0; i < 5; i++)
		fl_overheads_leave(o);   /* unmatched leaves never wrap */
	fl_overheads_stats(o, &st);
	assert_int_equal(st.inflight, 0);
	fl_overheads_free(o);
}

/* 4b: peek gives enter's verdict without admitting: below the limit nothing changes, at
 * it the shed is counted once, as enter counts it. */
static void test_ovh_peek(void **state)
{
	struct fl_overheads *o = ovh_new(2, 0);
	struct fl_overheads_stats st;

	(void)state;
	assert_int_equal(fl_overheads_peek(o), FL_OVH_ADMIT);
	assert_int_equal(fl_overheads_peek(o), FL_OVH_ADMIT);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.overloaded, 0);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_ADMIT);
	assert_int_equal(fl_overheads_enter(o), FL_OVH_ADMIT);
	assert_int_equal(fl_overheads_peek(o), FL_OVH_OVERLOADED);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.overloaded, 1);
	fl_overheads_leave(o);
	assert_int_equal(fl_overheads_peek(o), FL_OVH_ADMIT);
	fl_overheads_free(o);
}

/* 5: the ACL admits the five methods and denies any other; the key hash follows the key. */
static void test_ovh_acl(void **state)
{
	struct fl_overheads *o = ovh_new(8, 0);
	struct fl_overheads_stats st;
	struct fl_ovh_req r = { .user_id = 77, .session_id = 88, .request_id = 1,
		.client_ts_ns = 1000, .now_ns = 2000 };
	struct fl_ovh_out out, out2;
	struct fl_overheads_config bad = { .inflight_limit = 1, .acl_entries = 8 };
	char err[ERRLEN] = "";

	(void)state;
	for (uint32_t m = 0; m < 5; m++) {
		r.method = m;
		assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_ADMIT);
		assert_int_equal(out.admit_ns, 2000);
		assert_int_equal(out.deadline_ns, 0);
	}
	r.method = 5;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_DENIED);
	r.method = 1234567;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_DENIED);
	r.method = 2;
	fl_overheads_run(o, &r, &out);
	fl_overheads_run(o, &r, &out2);
	assert_int_equal(out.key_hash, out2.key_hash);
	r.request_id = 2;
	fl_overheads_run(o, &r, &out2);
	assert_int_not_equal(out.key_hash, out2.key_hash);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.admitted, 8);
	assert_int_equal(st.denied, 2);
	assert_int_equal(st.per_method[0], 1);
	assert_int_equal(st.per_method[2], 4);
	assert_int_equal(st.per_method[4], 1);
	fl_overheads_free(o);
	assert_null(fl_overheads_new(&bad, err, sizeof(err)));
	assert_true(strlen(err) > 0);
}

/* 6: a client stamp older than stale_ns is stale; a future stamp is not. */
static void test_ovh_stale(void **state)
{
	struct fl_overheads *o = ovh_new(8, 5 * MS);
	struct fl_overheads *never = ovh_new(8, 0);
	struct fl_ovh_req r = { .method = 1, .now_ns = 1000 * MS };
	struct fl_ovh_out out;
	struct fl_overheads_stats st;

	(void)state;
	r.client_ts_ns = r.now_ns - 6 * MS;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_STALE);
	assert_int_equal(fl_overheads_run(never, &r, &out), FL_OVH_ADMIT);
	r.client_ts_ns = r.now_ns - 4 * MS;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_ADMIT);
	assert_int_equal(out.deadline_ns, r.now_ns + 5 * MS);
	r.client_ts_ns = r.now_ns + 60000 * MS;
	assert_int_equal(fl_overheads_run(o, &r, &out), FL_OVH_ADMIT);
	fl_overheads_stats(o, &st);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.admitted, 2);
	fl_overheads_free(o);
	fl_overheads_free(never);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ovh_inflight),
		cmocka_unit_test(test_ovh_peek),
		cmocka_unit_test(test_ovh_acl),
		cmocka_unit_test(test_ovh_stale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_run_remote.c: tests for runtime/run/run_clock.c (clock offset from one exchange's
 * stamps, its verdict) and runtime/run/run_remote.c (the STATS reply, and one real
 * exchange with a small server thread on loopback). Build: ninja tests/test_run_remote.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "clock.h"
#include "frontload.pb-c.h"
#include "run_clock.h"
#include "run_remote.h"
#include "wire.h"

#define MS 1000000ull
#define T0 1764633600000000000ull  /* 2025-12-02 in ns: realistic magnitudes */

/* 1. Server 5 ms ahead, stamp taken mid-way through a 2 ms round trip: offset 5 ms,
 * uncertainty 1 ms. */
static void test_clock_offset(void **state)
{
	(void)state;
	struct fl_clock_sample c = { 0 };
	fl_clock_add(&c, T0, T0 + 1 * MS + 5 * MS, T0 + 2 * MS);
	assert_int_equal(c.samples, 1);
	assert_float_equal(c.offset_ms, 5.0, 1e-9);
	assert_float_equal(c.uncert_ms, 1.0, 1e-9);
	assert_float_equal(c.rtt_ms, 2.0, 1e-9);
	/* Behind: negative offset. */
	struct fl_clock_sample b = { 0 };
	fl_clock_add(&b, T0, T0 - 30 * MS, T0 + 4 * MS);
	assert_float_equal(b.offset_ms, -32.0, 1e-9);
	assert_float_equal(b.uncert_ms, 2.0, 1e-9);
}

/* 2. The shortest round trip wins; a longer one only counts as a sample; a reply before
 * its request (our clock stepped back) is ignored. */
static void test_clock_best_sample(void **state)
{
	(void)state;
	struct fl_clock_sample c = { 0 };
	fl_clock_add(&c, T0, T0 + 10 * MS, T0 + 8 * MS);        /* rtt 8, offset 6 */
	fl_clock_add(&c, T0, T0 + 3 * MS, T0 + 20 * MS);        /* rtt 20: not kept */
	assert_float_equal(c.offset_ms, 6.0, 1e-9);
	fl_clock_add(&c, T0, T0 + 2 * MS, T0 + 2 * MS);         /* rtt 2, offset 1 */
	assert_float_equal(c.offset_ms, 1.0, 1e-9);
	assert_float_equal(c.rtt_ms, 2.0, 1e-9);
	assert_int_equal(c.samples, 3);
	fl_clock_add(&c, T0 + 5 * MS, T0, T0);
	assert_int_equal(c.samples, 3);
}

/* 3. Verdicts: surely within, straddling, surely beyond, nothing known. */
static void test_clock_judge(void **state)
{
	(void)state;
	struct fl_clock_sample c = { 0 };
	assert_int_equal(fl_clock_judge(&c, 10), FL_CLOCK_UNKNOWN);
	c = (struct fl_clock_sample){ 1, 8.0, 1.0, 2.0 };
	assert_int_equal(fl_clock_judge(&c, 10), FL_CLOCK_OK);
	c.offset_ms = -9.5;
	assert_int_equal(fl_clock_judge(&c, 10), FL_CLOCK_UNSURE);
	c.offset_ms = -11.5;
	assert_int_equal(fl_clock_judge(&c, 10), FL_CLOCK_BEYOND);
	assert_string_equal(fl_clock_verdict_name(FL_CLOCK_BEYOND), "beyond");
}

static struct fl_frame_hdr reply_hdr(uint64_t id, uint32_t status)
{
	struct fl_frame_hdr h;
	fl_hdr_init(&h, FL_MSG_REPLY, id, 0);
	h.status = status;
	return h;
}

/* 4. A good reply is the JSON object; anything else is NULL with a reason. */
static void test_parse_reply(void **state)
{
	(void)state;
	char err[256];
	const char ok[] = "{\"snapshot_wall_ns\": 5, \"requests\": {\"ok\": 3}}";
	struct fl_frame_hdr h = reply_hdr(7, FL_STATUS_OK);
	json_t *j = fl_remote_parse_reply(&h, 7, (const uint8_t *)ok, strlen(ok), err,
		sizeof err);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "requests"),
		"ok")), 3);
	json_decref(j);

	assert_null(fl_remote_parse_reply(&h, 8, (const uint8_t *)ok, strlen(ok), err,
		sizeof err));
	assert_non_null(strstr(err, "not the reply"));
	assert_null(fl_remote_parse_reply(&h, 7, (const uint8_t *)"[1]", 3, err, sizeof err));
	assert_non_null(strstr(err, "not a JSON object"));
	assert_null(fl_remote_parse_reply(&h, 7, (const uint8_t *)"{\"a\":", 5, err,
		sizeof err));
	assert_non_null(strstr(err, "not a JSON object"));
	h.flags = FL_FRAME_ZSTD;
	assert_null(fl_remote_parse_reply(&h, 7, (const uint8_t *)ok, strlen(ok), err,
		sizeof err));
	assert_non_null(strstr(err, "compressed"));

	/* The server's refusal, with its ErrorReply text. */
	Frontload__ErrorReply er = FRONTLOAD__ERROR_REPLY__INIT;
	uint8_t buf[128];
	er.message = (char *)"bad stats request: STATS takes no payload and no flags";
	size_t n = frontload__error_reply__pack(&er, buf);
	h = reply_hdr(7, FL_STATUS_BAD_REQUEST);
	assert_null(fl_remote_parse_reply(&h, 7, buf, n, err, sizeof err));
	assert_non_null(strstr(err, "bad request"));
	assert_non_null(strstr(err, "takes no payload"));
}

/* A one-shot plain TCP server: reads one frame header, answers with reply (a STATS
 * answer when stats, else it closes without a word). */
struct mini_server {
	int lfd;
	uint16_t port;
	int stats;
	int64_t skew_ns;        /* added to the snapshot stamp */
	uint8_t got_type;
	pthread_t tid;
};

static void *mini_main(void *arg)
{
	struct mini_server *s = arg;
	uint8_t raw[FL_WIRE_HDR_BYTES];
	struct fl_frame_hdr h;
	int fd = accept(s->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	if (read(fd, raw, sizeof raw) == (ssize_t)sizeof raw &&
	    fl_hdr_decode(raw, &h, 0) == FL_WIRE_FRAME) {
		s->got_type = h.type;
		if (s->stats) {
			char body[128];
			int n = snprintf(body, sizeof body, "{\"snapshot_wall_ns\": %llu}",
				(unsigned long long)(fl_wall_ns() + (uint64_t)s->skew_ns));
			struct fl_frame_hdr r;
			fl_hdr_init(&r, FL_MSG_REPLY, h.request_id, h.client_ts_ns);
			r.payload_len = (uint32_t)n;
			fl_hdr_encode(&r, raw);
			if (write(fd, raw, sizeof raw) != (ssize_t)sizeof raw ||
			    write(fd, body, (size_t)n) != n)
				s->got_type = 0;
		}
	}
	close(fd);
	return NULL;
}

static void mini_start(struct mini_server *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t al = sizeof a;
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(s->lfd, 1), 0);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &al), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->tid, NULL, mini_main, s), 0);
}

static void mini_stop(struct mini_server *s)
{
	pthread_join(s->tid, NULL);
	close(s->lfd);
}

/* 5. One real exchange: a STATS frame goes out, the snapshot comes back, and the server's
 * clock, 50 ms ahead, is measured within the round trip. */
static void test_fetch(void **state)
{
	(void)state;
	struct mini_server s = { .stats = 1, .skew_ns = 50 * (int64_t)MS };
	struct fl_clock_sample c = { 0 };
	char addr[64], err[512];
	mini_start(&s);
	snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)s.port);
	json_t *j = fl_remote_stats(addr, NULL, 5, &c, err, sizeof err);
	mini_stop(&s);
	assert_non_null(j);
	json_decref(j);
	assert_int_equal(s.got_type, FL_MSG_STATS);
	assert_int_equal(c.samples, 1);
	printf("offset %.3f ms +- %.3f (server 50 ms ahead)\n", c.offset_ms, c.uncert_ms);
	assert_true(c.offset_ms - c.uncert_ms <= 50.0 + 1e-6);
	assert_true(c.offset_ms + c.uncert_ms >= 50.0 - 1e-6);
	assert_int_equal(fl_clock_judge(&c, 10), FL_CLOCK_BEYOND);
}

/* 6. A server that closes without answering (one that knows no STATS): an error, no
 * sample; nobody listening: an error naming the address. */
static void test_fetch_no_answer(void **state)
{
	(void)state;
	struct mini_server s = { .stats = 0 };
	struct fl_clock_sample c = { 0 };
	char addr[64], err[512];
	mini_start(&s);
	snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)s.port);
	assert_null(fl_remote_stats(addr, NULL, 5, &c, err, sizeof err));
	mini_stop(&s);
	assert_non_null(strstr(err, "no answer to STATS"));
	assert_int_equal(c.samples, 0);
	assert_null(fl_remote_stats(addr, NULL, 5, &c, err, sizeof err));
	assert_non_null(strstr(err, addr));
	assert_null(fl_remote_stats("no-port-here", NULL, 5, &c, err, sizeof err));
	assert_non_null(strstr(err, "HOST:PORT"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_offset),
		cmocka_unit_test(test_clock_best_sample),
		cmocka_unit_test(test_clock_judge),
		cmocka_unit_test(test_parse_reply),
		cmocka_unit_test(test_fetch),
		cmocka_unit_test(test_fetch_no_answer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

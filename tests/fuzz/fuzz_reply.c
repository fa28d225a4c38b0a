/* fuzz_reply.c: the driver's reply reader (drv_read_cb: leaf reply frames matched to
 * pipelined requests by request_id) fed a fuzzed leaf byte stream in two chunks.
 *
 * The reader and its slot bookkeeping are static in driver_engine.c, so the file is
 * included here whole; one thread with one connection of FZ_SLOTS in-flight requests is
 * set up by hand, without sockets or a running event loop.
 *
 * Input: byte 0 picks the step phase (idle, sending, draining) and whether the requests
 * are measured; byte 1 where the stream splits into the two reads; the rest is what the
 * leaf sent. Requests have ids (1 << 16) | slot, slot 0..FZ_SLOTS-1; the last one belongs
 * to an older step.
 */
#include "../../runtime/driver/driver_engine.c"

#include "fuzz.h"

#define FZ_SLOTS 8u

static struct {
	struct fl_driver d;
	struct drv_thread t;
	struct drv_conn c;
	struct drv_sec sec;
} fz;

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_reply: %s\n", what);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz.d.cfg.threads = fz.d.cfg.connections = 1;
	fz.d.cfg.timeout_s = 1;
	fz.d.slot_cap = FZ_SLOTS;
	fz.d.nsecs = 1;
	fz.d.secs = &fz.sec;
	fz.d.threads = &fz.t;
	pthread_mutex_init(&fz.d.mu, NULL);
	pthread_cond_init(&fz.d.cv, NULL);
	fz.t.d = &fz.d;
	fz.t.conns = &fz.c;
	fz.t.base = event_base_new();
	fz.c.t = &fz.t;
	fz.c.slots = calloc(FZ_SLOTS, sizeof *fz.c.slots);
	fz.c.free_idx = calloc(FZ_SLOTS, sizeof *fz.c.free_idx);
	if (fz.t.base == NULL || fz.c.slots == NULL || fz.c.free_idx == NULL)
		fz_die("setup");
	fz.t.send_ev = evtimer_new(fz.t.base, drv_send_cb, &fz.t);
	fz.c.retry_ev = evtimer_new(fz.t.base, drv_retry_cb, &fz.c);
	if (fz.t.send_ev == NULL || fz.c.retry_ev == NULL)
		fz_die("events");
	return 0;
}

/* A step in progress with every slot of the connection in flight. */
static void fz_reset(enum drv_phase phase, int measured)
{
	struct drv_thread *t = &fz.t;
	uint64_t now = fl_mono_ns();

	t->phase = phase;
	t->gen = 2;
	t->depth = FZ_SLOTS;
	memset(&t->c, 0, sizeof t->c);
	fl_hist_init(&t->lat);
	fl_hist_init(&t->svc);
	fl_hist_init(&t->sec_hist);
	memset(&fz.sec, 0, sizeof fz.sec);
	fl_hist_init(&fz.sec.hist);
	t->sec = t->sec_sent = t->sec_completed = 0;
	t->t0_ns = t->warm_ns = now;
	t->end_ns = now + 3600 * 1000000000ull;
	t->bl_len = 0;
	fz.d.ndone = 0;
	for (uint32_t i = 0; i < FZ_SLOTS; i++) {
		struct drv_slot *s = &fz.c.slots[i];
		s->request_id = (1ull << DRV_SLOT_BITS) | i;
		s->intended_ns = s->sent_ns = now;
		s->gen = i == FZ_SLOTS - 1 ? t->gen - 1 : t->gen;
		s->measured = measured;
	}
	fz.c.nfree = 0;
	fz.c.inflight = t->inflight = FZ_SLOTS;
	t->step_inflight = FZ_SLOTS - 1;
	fz.c.state = DRV_CONN_READY;
	fz.c.bev = bufferevent_socket_new(t->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (fz.c.bev == NULL)
		fz_die("bufferevent");
}

/* The slots and counters must still add up, whatever the leaf sent. */
static void fz_check(void)
{
	const struct fl_driver_counts *k = &fz.t.c;
	unsigned char seen[FZ_SLOTS] = { 0 };
	uint64_t judged = k->ok + k->overloaded;

	if (fz.c.inflight + fz.c.nfree != FZ_SLOTS || fz.t.inflight != fz.c.inflight)
		fz_die("in-flight count and free slots disagree");
	for (uint32_t i = 0; i < fz.c.nfree; i++) {
		uint32_t idx = fz.c.free_idx[i];
		if (idx >= FZ_SLOTS || seen[idx]++ || fz.c.slots[idx].request_id != 0)
			fz_die("free slot list");
	}
	for (int e = FL_DRIVER_ERR_BAD_REQUEST; e <= FL_DRIVER_ERR_STATUS_OTHER; e++)
		judged += k->errors[e];
	if (k->completed != judged || k->completed > FZ_SLOTS - 1)
		fz_die("completions and their statuses disagree");
	if (fz.c.bev == NULL && fz.c.inflight != 0)
		fz_die("a failed connection kept requests");
	if (fz.t.step_inflight > FZ_SLOTS - 1)
		fz_die("step in-flight count");
}

/* What a read from the socket would append; libevent freezes the input's end for
 * everyone else. */
static void fz_arrive(const uint8_t *p, size_t n)
{
	struct evbuffer *in = bufferevent_get_input(fz.c.bev);

	evbuffer_unfreeze(in, 0);
	if (evbuffer_add(in, p, n) != 0)
		fz_die("evbuffer_add");
	evbuffer_freeze(in, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t split;

	if (size < 2)
		return 0;
	fz_reset((enum drv_phase)(data[0] % 3), (data[0] >> 2) & 1);
	split = (size - 2) * data[1] / 255;
	fz_arrive(data + 2, split);
	drv_read_cb(fz.c.bev, &fz.c);
	if (fz.c.bev != NULL) {
		fz_arrive(data + 2 + split, size - 2 - split);
		drv_read_cb(fz.c.bev, &fz.c);
	}
	fz_check();
	if (getenv("FZ_REPLY_VERBOSE") != NULL)
		fprintf(stderr, "fuzz_reply: phase %d, %llu completed, %llu ok, %llu protocol "
			"errors, %u in flight, connection %s\n", (int)fz.t.phase,
			(unsigned long long)fz.t.c.completed, (unsigned long long)fz.t.c.ok,
			(unsigned long long)fz.t.c.errors[FL_DRIVER_ERR_PROTOCOL], fz.c.inflight,
			fz.c.bev != NULL ? "kept" : "dropped");
	if (fz.c.bev != NULL)
		bufferevent_free(fz.c.bev);
	fz.c.bev = NULL;
	fz.c.backoff_ms = 0;
	evtimer_del(fz.c.retry_ev);
	evtimer_del(fz.t.send_ev);
	/* libevent finalizes a freed bufferevent from the loop: run it once, or every
	 * input's bufferevent would pile up. */
	event_base_loop(fz.t.base, EVLOOP_NONBLOCK);
	return 0;
}

/* driver_engine.h: the driver's open-loop sender threads and their leaf connections.
 *
 * T threads ("driver-N"), each with its own event_base and C connections to the leaf
 * (TCP, or TLS through bufferevent_openssl), each connection carrying at most `depth`
 * pipelined requests matched to replies by request_id. Each thread follows its own
 * fl_schedule at qps / T. When a request's intended send time comes it goes to a
 * connection with a free slot or, when none has one, waits in the thread's backlog until a
 * slot frees. Latency is always reply time minus intended send time, so a stalled leaf
 * shows in the tail instead of slowing the driver (no coordinated omission).
 *
 * A step: time 0 is a common start a little after the call; requests due in
 * [0, warmup_s) are sent but not recorded, those due in [warmup_s, warmup_s + duration_s)
 * are measured. After the last send time the step waits for replies, at most until every
 * request's timeout has passed. Threads and connections persist from step to step.
 *
 * Adaptive depth: when a step's requests had to wait for slots while its p95 stayed under
 * the SLA and host CPU was below 90%, the driver is the bottleneck, so the next step
 * doubles the per-connection depth (up to FL_DRIVER_DEPTH_CAP, or the initial depth when
 * that is larger).
 *
 * Threads: fl_driver_new, fl_driver_step and fl_driver_free from one (main) thread.
 */
#ifndef FL_DRIVER_ENGINE_H
#define FL_DRIVER_ENGINE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

struct fl_driver;
struct fl_driver_result;
struct fl_reqgen;

#define FL_DRIVER_DEPTH_CAP 1024u         /* adaptive depth stops doubling here */
#define FL_DRIVER_MAX_DEPTH 65536u        /* largest --depth (request id low 16 bits) */
#define FL_DRIVER_LATE_NS 1000000ull      /* sent later than this after intended: late */
#define FL_DRIVER_MAX_REPLY_BYTES (64u << 20)  /* largest reply payload accepted (bytes) */

struct fl_driver_config {
	const char *host;                /* leaf address: IPv4/IPv6 literal or name */
	uint16_t port;
	int tls;                         /* connect with TLS, verifying the leaf's certificate */
	const char *tls_dir;             /* holds the pinned certificate (tls.h) */
	unsigned threads;                /* sender threads, >= 1 */
	unsigned connections;            /* connections per thread, >= 1 */
	unsigned depth;                  /* initial in-flight cap per connection, 1..65536 */
	enum fl_arrival arrival;         /* Poisson, fixed gaps or binomial windows */
	int common_draws;                /* every step replays the same draws (driver_main.c) */
	uint64_t seed;                   /* schedules derive per-thread seeds from it */
	double sla_ms;                   /* p95 target for adaptive depth (ms) */
	double timeout_s;                /* a request without reply this long after its
	                                    intended send time is a timeout (s, > 0) */
	double deadline_ms;              /* each request carries intended send time + this
	                                    as its deadline (wire.h deadline_ns); 0: none */
	const struct fl_reqgen *gen;     /* request builder, shared read-only by the threads */
	volatile sig_atomic_t *stop;     /* non-zero: end the current step early; may be NULL */
};

/* Start the threads and open every connection. Returns NULL (err filled, e.g. "connect
 * 127.0.0.1:7000: Connection refused") when the leaf cannot be reached or set up fails.
 * cfg->gen must outlive the engine. */
struct fl_driver *fl_driver_new(const struct fl_driver_config *cfg, char *err, size_t errlen);

/* Run one step at qps (> 0) for warmup_s + duration_s seconds and fill out (initialised
 * here; fl_driver_result_free it). Returns 0, or -1 when qps or the times are invalid or
 * memory runs out. out->interrupted is set when *cfg->stop ended the step early. */
int fl_driver_step(struct fl_driver *d, double qps, double warmup_s, double duration_s,
	struct fl_driver_result *out);

/* The per-connection depth the next step will use. */
unsigned fl_driver_depth(const struct fl_driver *d);

/* Set the next step's in-flight ceiling to about n requests over all connections: depth =
 * ceil(n / (threads x connections)), within [1, the slots a connection has]. Returns the
 * ceiling now in force (depth x threads x connections). Between steps only. */
unsigned fl_driver_set_inflight(struct fl_driver *d, unsigned n);

/* Arm the miss-stop rule for the next step only (p95_over_ms <= 0 disarms it). That step's
 * measured window ends as soon as its miss is certain, whatever the rest of it would do:
 * more than 5% of the requests due in it (counted from the seeded schedules before the
 * step starts) came back OK in a histogram bucket wholly above p95_over_ms, so its p95
 * exceeds p95_over_ms however many of them complete; or at least error_rate of them
 * failed (error replies, OVERLOADED, timeouts). The result's miss_stop says what it
 * counted. Sound for one driver's own p95, not for a p95 merged over several drivers.
 * The window runs at least min_s measured seconds (0: none) whatever it counts: a miss
 * certain earlier stays certain, and a window that long still says what the leaf
 * sustains. Between steps only. */
void fl_driver_set_miss_stop(struct fl_driver *d, double p95_over_ms, double error_rate,
	double min_s);

/* The in-flight ceiling of the next step: depth x threads x connections. */
unsigned fl_driver_inflight(const struct fl_driver *d);

/* Stop the threads and close the connections. NULL is ignored. */
void fl_driver_free(struct fl_driver *d);

#endif

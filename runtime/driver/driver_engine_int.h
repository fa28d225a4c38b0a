/* driver_engine_int.h: private to runtime/driver/: the driver object, its sender threads
 * and their connections, shared by driver_engine.c (what the threads run) and
 * driver_control.c (the main thread's side of driver_engine.h), and the calls between them. */
#ifndef FL_DRIVER_ENGINE_INT_H
#define FL_DRIVER_ENGINE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include <openssl/ssl.h>

#include "driver_engine.h"
#include "driver_report.h"
#include "hist.h"

struct bufferevent;
struct event;
struct event_base;
struct drv_slot;     /* driver_engine.c */
struct drv_pending;  /* driver_engine.c */

enum drv_conn_state {
	DRV_CONN_DOWN,        /* no socket; retry_ev armed (backoff) or reopened by the tick */
	DRV_CONN_CONNECTING,  /* TCP connect, then TLS handshake, in progress */
	DRV_CONN_READY,       /* takes requests while it has a free slot */
	DRV_CONN_RETIRING     /* a request timed out: takes none, reopened once idle */
};

struct drv_thread;

struct drv_conn {
	struct drv_thread *t;
	enum drv_conn_state state;
	struct bufferevent *bev;    /* NULL when DOWN */
	struct event *retry_ev;     /* reconnect after backoff */
	unsigned backoff_ms;        /* next reconnect delay; 0 after a good connect */
	uint64_t connect_start_ns;  /* when the current attempt began */
	struct drv_slot *slots;     /* slot_cap slots */
	uint32_t *free_idx;         /* stack of free slot indices */
	uint32_t nfree;
	unsigned inflight;          /* slots in use */
};

enum drv_phase {
	DRV_IDLE,      /* between steps: connections kept, nothing sent */
	DRV_SENDING,   /* following the schedule */
	DRV_DRAINING   /* past the last send time: waiting for replies or timeouts */
};

/* Per-second trace cell shared by the threads (under fl_driver.mu). */
struct drv_sec {
	uint64_t sent, completed, inflight;
	struct fl_hist hist;  /* OK replies of the second: ns from intended send time */
};

enum drv_cmd { DRV_CMD_NONE, DRV_CMD_START, DRV_CMD_QUIT };

struct drv_thread {
	struct fl_driver *d;
	unsigned id;
	pthread_t tid;
	int started;                 /* tid valid */
	struct event_base *base;
	struct event *send_ev;       /* fires at the next intended send time */
	struct event *tick_ev;       /* every DRV_TICK_US */
	struct event *cmd_ev;        /* activated by the main thread: d->cmd */
	struct drv_conn *conns;
	unsigned rr;                 /* next connection to try */
	unsigned inflight;           /* requests awaiting replies, all connections */
	struct drv_pending *bl;      /* backlog ring: bl_cap entries from bl_head */
	size_t bl_head, bl_len, bl_cap;
	uint64_t bl_seq;             /* requests enqueued so far */
	uint64_t bl_blocked;         /* requests enqueued before this seq waited for a slot */
	uint64_t next_seq;           /* request id sequence */
	uint64_t nreq;               /* requests scheduled, all steps (request index part) */
	int init_rc;                 /* 0 connecting, 1 all connected, -1 failed (under mu) */
	char init_err[512];

	/* The current step (fields below are reset by drv_step_begin). */
	enum drv_phase phase;
	uint32_t gen;                /* step generation: replies of older steps are ignored */
	unsigned depth;              /* in-flight cap per connection */
	struct fl_schedule sched;
	uint64_t t0_ns, warm_ns, end_ns;  /* step time 0, end of warm-up, last send time */
	uint64_t next_due_ns;        /* intended time of the next scheduled request */
	uint64_t window_end_ns;      /* end of the measured window as run */
	unsigned step_inflight;      /* in-flight requests of this step */
	int backlog_seen;            /* a request waited while a READY connection existed */
	struct fl_driver_counts c;
	struct fl_hist lat;          /* measured OK replies, from intended time (ns) */
	struct fl_hist svc;          /* measured OK replies, from actual send (ns) */
	uint64_t sec;                /* trace second being collected */
	uint64_t sec_sent, sec_completed;
	struct fl_hist sec_hist;
	uint64_t late;               /* measured OK replies over the miss-stop's bound */
	uint64_t pub_late, pub_failed;  /* late and failed as last published (atomic; the
	                                   main thread zeroes them before a step) */
};

struct fl_driver {
	struct fl_driver_config cfg;
	struct sockaddr_storage addr;  /* the leaf, resolved once */
	socklen_t addrlen;
	char addr_text[300];           /* "host:port" for messages */
	SSL_CTX *ssl;                  /* NULL: plain TCP */
	unsigned slot_cap;             /* slots per connection (largest depth ever) */
	unsigned depth_cap;            /* adaptive depth stops here */
	unsigned depth;                /* depth of the next step */
	unsigned step_no;
	struct drv_thread *threads;
	pthread_mutex_t mu;
	pthread_cond_t cv;             /* init_rc changes, ndone grows */
	enum drv_cmd cmd;              /* what cmd_ev asks (written before activating it) */
	unsigned ndone;                /* threads done with the current step (mu) */
	double qps, warmup_s, duration_s;  /* the current step */
	uint64_t t0_ns;
	double stop_over_ms, stop_error_rate;  /* the next step's miss-stop rule (<= 0: none) */
	double stop_min_s;             /* ... and its measured seconds before any stop */
	uint64_t stop_over_ns;         /* the current step's: late = bucket above this */
	uint64_t stop_from_ns;         /* ... and no stop before t0_ns + this */
	uint64_t stop_late_limit, stop_failed_limit;
	int stop_on;                   /* the current step has the rule */
	int stopped;                   /* atomic: the rule ended the current step */
	uint64_t stopped_ns;           /* when (written once, by the thread that set stopped) */
	struct drv_sec *secs;          /* nsecs trace cells of the current step (mu) */
	size_t nsecs;
	size_t secs_used;              /* cells touched (mu) */
};

/* Set up thread id of d (cfg and slot_cap already set): its event base, timers and
 * connections with their slots, none opened yet. 0, or -1 when something could not be
 * made (fl_driver_free frees what was). */
int drv_engine_thread_setup(struct fl_driver *d, struct drv_thread *t, unsigned id);

/* The send schedule thread id follows in the step about to run (relative to its time
 * 0; warm_ns and end_ns: the ends of its warm-up and measured window after time 0). */
void drv_schedule_for(const struct fl_driver *d, unsigned id, uint64_t warm_ns,
	uint64_t end_ns, struct fl_schedule *s);

/* The sender thread (pthread_create's start routine, arg its struct drv_thread): opens
 * the connections and runs the event loop until d->cmd is DRV_CMD_QUIT. */
void *drv_engine_thread_main(void *arg);

#endif

/* leaf_client.h: what the files of tests/leaf-client share (private to them): the options,
 * the client and its per-request bookkeeping, and the calls between main and the options
 * (leaf_client.c), the request stream (lc_stream.c), the reply checks (lc_replies.c), the
 * pipelined run (lc_run.c), setup and teardown (lc_setup.c), the summary (lc_summary.c),
 * fault injection (lc_garbage.c) and the helper modes (lc_helper_modes.c). */
#ifndef FL_LEAF_CLIENT_H
#define FL_LEAF_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>
#include <openssl/ssl.h>

#include "corpus.h"
#include "reqgen.h"
#include "sampler.h"
#include "wire.h"
#include "zcodec.h"

#define LC_MAX_STORIES 4096
#define LC_NSTATUS (FL_STATUS_MAX + 1)
#define LC_SESSION_STORIES 64  /* stories a leaf session remembers (FL_SESSION_STORIES) */
#define LC_SESSIONS 64         /* distinct session ids of a request stream */

/* Status keys in the summary, the same words as the leaf's "requests" stats. */
extern const char *const lc_status_key[LC_NSTATUS];

struct lc_opts {
	const char *host;            /* server address */
	unsigned port;               /* server port (or from port_file) */
	const char *port_file;       /* file holding the port, written by the server */
	int tls;                     /* talk TLS */
	const char *tls_dir;         /* certificate dir trusted (tls.h); NULL = default */
	uint64_t requests;           /* requests to send in all */
	unsigned depth;              /* requests in flight per connection */
	unsigned connections;        /* connections */
	uint64_t seed;               /* seed of the request stream */
	unsigned stories;            /* stories per LeafRequest */
	size_t story_bytes;          /* body bytes per story */
	int size_sampled;            /* request size from feed_aggregator_req_sizes */
	size_t request_bytes;        /* fixed request size when !size_sampled (bytes) */
	size_t max_request_bytes;    /* cap on a sampled request size (bytes) */
	uint32_t reply_bytes;        /* reply size asked for; 0 = the server samples */
	int zstd;                    /* want_zstd in every request */
	int zstd_frames;             /* compress request frames (FL_FRAME_ZSTD) */
	int method_mix;              /* inbound method weighted by rpc_dist.json */
	unsigned method;             /* fixed method otherwise */
	int rpc;                     /* speak RpcRequest (to the mock), not LeafRequest */
	double timeout_s;            /* whole-run deadline (s) */
	const char *json;            /* summary JSON path */
	const char *garbage;         /* fault mode, NULL for a normal run */
	size_t corpus_mb;            /* generated corpus size (MiB) */
	uint64_t corpus_seed;        /* generated corpus seed */
	const char *corpus_dir;      /* corpus from files instead */
	uint32_t max_frame_bytes;    /* largest reply payload accepted (bytes) */
	int quiet;                   /* no summary on stdout */
};

/* Per-request bookkeeping, indexed by request id - 1. */
struct lc_slot {
	uint64_t sent_ns;       /* monotonic stamp when the frame was queued */
	uint64_t client_ts_ns;  /* realtime stamp in the request header, echoed in replies */
	uint32_t reply_bytes;   /* reply size asked for (RPC: the body size asked for) */
	uint32_t method;        /* method sent */
	uint8_t want_zstd;      /* reply compression asked for */
	uint8_t state;          /* 0 unsent, 1 in flight, 2 answered */
	uint64_t session_id;    /* LeafRequest: session sent */
	uint64_t *story_ids;    /* LeafRequest: the stories' ids, while in flight */
};

/* min / max / sum of a per-reply quantity. */
struct lc_range {
	uint64_t n, min, max, sum;
};

struct lc_errors {
	uint64_t connect;      /* connection could not be made (or TLS failed) */
	uint64_t closed;       /* connection closed with requests in flight */
	uint64_t frame;        /* reply frame with a bad header */
	uint64_t unknown_id;   /* reply for no request in flight, or wrong type */
	uint64_t decode;       /* OK reply whose payload did not decode */
	uint64_t reply_size;   /* reply size differs from what was asked or stated */
	uint64_t zstd;         /* compressed payload did not decompress */
	uint64_t ranked;       /* ranked ids not from the request, or not best first */
	uint64_t method;       /* RPC reply for another method */
	uint64_t echo;         /* reply header did not echo the request's client_ts_ns */
	uint64_t timeout;      /* requests unanswered at the deadline */
};

struct lc_client;

struct lc_conn {
	struct lc_client *cl;        /* owner */
	struct bufferevent *bev;     /* NULL once closed */
	unsigned inflight;           /* requests sent, not answered */
	int up;                      /* connected (and TLS handshake done) */
};

struct lc_client {
	struct lc_opts o;
	struct event_base *base;
	SSL_CTX *ssl_ctx;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	struct fl_corpus corpus;
	struct fl_reqgen gen;                 /* LeafRequests: the driver's builder */
	int bad_method;                       /* --method is no InboundMethod (see lc_build_leaf) */
	struct fl_rpc_dist dist;              /* rpc_dist.json */
	unsigned in_enum[FL_RPC_INBOUND];     /* InboundMethod of dist.in[i] */
	struct fl_zcodec *z;
	struct fl_bytes pack, comp, scratch;  /* request build buffers */
	struct lc_conn *conns;
	struct lc_slot *slots;
	uint64_t *lat_ns;                     /* latency per answered request */
	uint64_t next;                        /* next request index to send */
	uint64_t sent, replied, live_conns;
	uint64_t status[LC_NSTATUS + 1];      /* last: unknown statuses */
	struct lc_range req_bytes, wire_bytes, reply_raw, ranked, fanout_calls, fanout_errors,
		extract_calls;
	uint64_t sent_by_method[256];         /* requests sent per method (index & 255) */
	uint64_t server_ns_max;               /* largest server_ns of an OK reply */
	uint64_t zstd_replies;
	uint64_t zstd_expected;               /* OK replies that asked for zstd, but for
	                                         getStoriesUncompressed (never compressed) */
	uint64_t stream_hash;                 /* sum of FNV-1a of every request payload */
	struct lc_errors err;
	char cipher[128];
	char first_error[256];
	int timed_out;
	uint64_t start_ns, end_ns;
};

/* leaf_client.c */

/* Print "leaf-client: <message>" to stderr and exit 2 (usage and setup errors). */
void lc_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* lc_stream.c: the request stream */

/* Build LeafRequest i (reqgen's, for the client's options) into cl->pack; fill slot i. */
void lc_build_leaf(struct lc_client *cl, uint64_t i);
/* Build RpcRequest i (body[0..3]: the reply size asked for) into cl->pack; fill slot i. */
void lc_build_rpc(struct lc_client *cl, uint64_t i);
/* Send requests on c until it has --depth in flight or the stream is all sent. */
void lc_fill(struct lc_conn *c);

/* lc_replies.c: reply checks */

/* Account one frame received on c (h, its payload) and check it against its request. */
void lc_on_frame(struct lc_conn *c, const struct fl_frame_hdr *h, uint8_t *payload);

/* lc_run.c: the pipelined run */

/* Send the stream over the connections, wait for the replies or the deadline, then report
 * (lc_report's exit status). */
int lc_run(struct lc_client *cl);

/* lc_setup.c: setup and teardown */

/* Load the tables and the corpus, create the codec, event base and TLS context, resolve
 * the server; lc_die on any failure. */
void lc_setup(struct lc_client *cl);
/* A new bufferevent connecting to the server (TLS when asked); NULL when connect fails. */
struct bufferevent *lc_connect(struct lc_client *cl);
/* Free everything lc_setup and the runs allocated. */
void lc_free(struct lc_client *cl);

/* lc_summary.c: the counts and the summary */

/* Remember the first error of a run for the final message (later ones are dropped). */
void lc_note(struct lc_client *cl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add v to r's min, max, sum and count. */
void lc_range_add(struct lc_range *r, uint64_t v);
/* Write j to path atomically; -1 (said on stderr) when it cannot. */
int lc_write_json(const char *path, json_t *j);
/* Print the summary line and the --json summary of a run; the exit status: 0 every
 * request replied and checked, 1 otherwise, 2 when the summary cannot be written. */
int lc_report(struct lc_client *cl);

/* lc_garbage.c: fault injection */

/* Is mode a --garbage mode? */
int lc_garbage_known(const char *mode);
/* Send one bad input (--garbage) and report the server's answer: 0 on an error reply or a
 * close, 1 on an OK reply, silence until the deadline or no connection. */
int lc_run_garbage(struct lc_client *cl);

/* lc_helper_modes.c: modes that print and exit */

/* --get KEY.PATH FILE: print one field of a JSON file; 0, 1 (no such field), 2 (bad file). */
int lc_get(const char *path, const char *file);
/* --expect-fanout SCALE: outbound calls per leaf request of each method, and the total. */
int lc_expect_fanout(const char *scale_s);
/* --table-range req|resp: "min max" of the pooled request or reply size table (bytes). */
int lc_table_range(const char *which);

#endif

/* mock_methods.h: the mock's 20 outbound RPC methods, one handler symbol each.
 *
 * The leaf calls 20 downstream methods (runtime/data/rpc_dist.json "outbound", in
 * descending per-session call count; RpcRequest.method is the index into that list). Each
 * has its own noinline handler, so a profile of the mock names the method, and all share
 * one implementation: body[0..3] is the response size asked for (bytes, big endian),
 * capped at max_reply_bytes; the reply body is that many corpus bytes at an offset hashed
 * from the request, so the same request always gets the same bytes.
 *
 * No libevent, no corpus module: the caller hands the corpus in as bytes. A call context
 * belongs to one thread.
 */
#ifndef MOCK_METHODS_H
#define MOCK_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "frontload.pb-c.h"

#define MOCK_METHOD_COUNT 20u
#define MOCK_REQ_SIZE_BYTES 4u  /* the big-endian response size at the front of a body */

/* Per-thread state of the handlers. */
struct mock_call {
	const uint8_t *corpus;   /* reply bytes are cut from corpus[0..corpus_len) */
	size_t corpus_len;
	size_t max_reply_bytes;  /* response sizes asked above this are cut to it */
	uint8_t *scratch;        /* owned: holds a reply that wraps past the corpus end */
	size_t scratch_cap;      /* bytes allocated at scratch */
};

enum mock_rc {
	MOCK_OK = 0,
	MOCK_ERR_SHORT_BODY = -1,      /* body shorter than MOCK_REQ_SIZE_BYTES */
	MOCK_ERR_UNKNOWN_METHOD = -2,  /* method index >= MOCK_METHOD_COUNT */
	MOCK_ERR_NO_CORPUS = -3,       /* a non-empty reply asked with an empty corpus */
	MOCK_ERR_NO_MEMORY = -4
};

/* A handler sets reply->method and reply->body (the caller initialised reply, e.g. with
 * FRONTLOAD__RPC_REPLY__INIT). body.data points into the corpus or call->scratch and stays
 * valid until the next call on this context. Returns MOCK_OK or a negative enum mock_rc. */
typedef int (*mock_handler_fn)(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);

struct mock_method {
	const char *name;    /* as in rpc_dist.json */
	mock_handler_fn fn;
};

/* Index i is method i of RpcRequest.method. */
extern const struct mock_method mock_method_table[MOCK_METHOD_COUNT];

/* Call method's handler; MOCK_ERR_UNKNOWN_METHOD when out of range. */
int mock_dispatch(struct mock_call *call, uint32_t method, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);

/* Name of method, or "unknown". */
const char *mock_method_name(uint32_t method);

/* A short text for an enum mock_rc ("body shorter than 4 bytes"). */
const char *mock_strerror(int rc);

/* Free call->scratch. */
void mock_call_release(struct mock_call *call);

/* The handlers, in index order. */
int mock_mcGet(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_mcLeaseGet(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_mcSet(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_fetchTopKEntitiesRequest(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_getActionStreamsRequestCompressed2(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_getObjectsFromQueries(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_getSerializedObjects(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_getStatus(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_runFullyRemotePrediction(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_getActionStreamsCompressed2(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_runModelMethod(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_edsMultiGet(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_fetchCandidateScoreRequest(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_mcLeaseSet(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_prefixScan(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_fetchEntityFeatures(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_getUserConsents(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_fciGet(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_multiget(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);
int mock_MultiGet(struct mock_call *call, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply);

#endif

/* mock_methods.c: the mock's outbound method handlers and their shared implementation. */
#include "mock_methods.h"

#include <stdlib.h>
#include <string.h>

/* 64-bit hash of the method and the request body (8 bytes a step, then a final mix). Not
 * cryptographic: it only spreads reply offsets over the corpus, deterministically. */
static uint64_t mock_hash(uint32_t method, const uint8_t *p, size_t len)
{
	const uint64_t k = 0x9fb21c651e98df25ull;
	uint64_t h = 0x6a09e667f3bcc908ull ^ ((uint64_t)method << 32) ^ (len * k);
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		w *= k;
		w ^= w >> 29;
		h = (h ^ w) * k;
	}
	uint64_t t = 0;
	for (size_t s = 0; i < len; i++, s += 8)
		t |= (uint64_t)p[i] << s;
	h = (h ^ t) * k;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

/* The work of every method: read the size asked, cap it, cut the bytes. A reply that fits
 * in the corpus is a pointer into it (no copy); one larger than the corpus wraps around
 * through call->scratch. */
__attribute__((noinline)) static int mock_serve(struct mock_call *call, uint32_t method,
	const uint8_t *body, size_t len, Frontload__RpcReply *reply)
{
	if (!body || len < MOCK_REQ_SIZE_BYTES)
		return MOCK_ERR_SHORT_BODY;
	size_t want = (size_t)body[0] << 24 | (size_t)body[1] << 16 | (size_t)body[2] << 8 |
		(size_t)body[3];
	if (want > call->max_reply_bytes)
		want = call->max_reply_bytes;
	reply->method = method;
	reply->body.len = want;
	reply->body.data = NULL;
	if (want == 0)
		return MOCK_OK;
	if (!call->corpus || call->corpus_len == 0)
		return MOCK_ERR_NO_CORPUS;
	uint64_t h = mock_hash(method, body, len);
	if (want <= call->corpus_len) {
		reply->body.data = (uint8_t *)(call->corpus + h % (call->corpus_len - want + 1));
		return MOCK_OK;
	}
	if (call->scratch_cap < want) {
		uint8_t *p = realloc(call->scratch, want);
		if (!p)
			return MOCK_ERR_NO_MEMORY;
		call->scratch = p;
		call->scratch_cap = want;
	}
	size_t off = h % call->corpus_len;
	for (size_t done = 0; done < want; ) {
		size_t n = call->corpus_len - off;
		if (n > want - done)
			n = want - done;
		memcpy(call->scratch + done, call->corpus + off, n);
		done += n;
		off = 0;
	}
	reply->body.data = call->scratch;
	return MOCK_OK;
}

__attribute__((noinline)) int mock_mcGet(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 0, body, len, reply);
}

__attribute__((noinline)) int mock_mcLeaseGet(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 1, body, len, reply);
}

__attribute__((noinline)) int mock_mcSet(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 2, body, len, reply);
}

__attribute__((noinline)) int mock_fetchTopKEntitiesRequest(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 3, body, len, reply);
}

__attribute__((noinline)) int mock_getActionStreamsRequestCompressed2(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 4, body, len, reply);
}

__attribute__((noinline)) int mock_getObjectsFromQueries(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 5, body, len, reply);
}

__attribute__((noinline)) int mock_getSerializedObjects(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 6, body, len, reply);
}

__attribute__((noinline)) int mock_getStatus(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 7, body, len, reply);
}

__attribute__((noinline)) int mock_runFullyRemotePrediction(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 8, body, len, reply);
}

__attribute__((noinline)) int mock_getActionStreamsCompressed2(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 9, body, len, reply);
}

__attribute__((noinline)) int mock_runModelMethod(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 10, body, len, reply);
}

__attribute__((noinline)) int mock_edsMultiGet(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 11, body, len, reply);
}

__attribute__((noinline)) int mock_fetchCandidateScoreRequest(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 12, body, len, reply);
}

__attribute__((noinline)) int mock_mcLeaseSet(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 13, body, len, reply);
}

__attribute__((noinline)) int mock_prefixScan(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 14, body, len, reply);
}

__attribute__((noinline)) int mock_fetchEntityFeatures(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 15, body, len, reply);
}

__attribute__((noinline)) int mock_getUserConsents(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 16, body, len, reply);
}

__attribute__((noinline)) int mock_fciGet(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 17, body, len, reply);
}

__attribute__((noinline)) int mock_multiget(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 18, body, len, reply);
}

__attribute__((noinline)) int mock_MultiGet(struct mock_call *call, const uint8_t *body,
	size_t len, Frontload__RpcReply *reply)
{
	return mock_serve(call, 19, body, len, reply);
}

const struct mock_method mock_method_table[MOCK_METHOD_COUNT] = {
	{ "mcGet", mock_mcGet },
	{ "mcLeaseGet", mock_mcLeaseGet },
	{ "mcSet", mock_mcSet },
	{ "fetchTopKEntitiesRequest", mock_fetchTopKEntitiesRequest },
	{ "getActionStreamsRequestCompressed2", mock_getActionStreamsRequestCompressed2 },
	{ "getObjectsFromQueries", mock_getObjectsFromQueries },
	{ "getSerializedObjects", mock_getSerializedObjects },
	{ "getStatus", mock_getStatus },
	{ "runFullyRemotePrediction", mock_runFullyRemotePrediction },
	{ "getActionStreamsCompressed2", mock_getActionStreamsCompressed2 },
	{ "runModelMethod", mock_runModelMethod },
	{ "edsMultiGet", mock_edsMultiGet },
	{ "fetchCandidateScoreRequest", mock_fetchCandidateScoreRequest },
	{ "mcLeaseSet", mock_mcLeaseSet },
	{ "prefixScan", mock_prefixScan },
	{ "fetchEntityFeatures", mock_fetchEntityFeatures },
	{ "getUserConsents", mock_getUserConsents },
	{ "fciGet", mock_fciGet },
	{ "multiget", mock_multiget },
	{ "MultiGet", mock_MultiGet },
};

int mock_dispatch(struct mock_call *call, uint32_t method, const uint8_t *body, size_t len,
	Frontload__RpcReply *reply)
{
	if (method >= MOCK_METHOD_COUNT)
		return MOCK_ERR_UNKNOWN_METHOD;
	return mock_method_table[method].fn(call, body, len, reply);
}

const char *mock_method_name(uint32_t method)
{
	return method < MOCK_METHOD_COUNT ? mock_method_table[method].name : "unknown";
}

const char *mock_strerror(int rc)
{
	switch (rc) {
	case MOCK_OK: return "ok";
	case MOCK_ERR_SHORT_BODY: return "body shorter than 4 bytes (big-endian response size)";
	case MOCK_ERR_UNKNOWN_METHOD: return "unknown method index";
	case MOCK_ERR_NO_CORPUS: return "no corpus to cut the reply from";
	case MOCK_ERR_NO_MEMORY: return "out of memory";
	}
	return "unknown error";
}

void mock_call_release(struct mock_call *call)
{
	free(call->scratch);
	call->scratch = NULL;
	call->scratch_cap = 0;
}

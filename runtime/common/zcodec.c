/* zcodec.c: one-shot zstd compression into growable buffers, with a decompression bomb guard. */
#include <stdlib.h>

#include <zstd.h>

#include "zcodec.h"

#define ZCODEC_MIN_CAP 256u  /* first allocation of an empty fl_bytes (bytes) */

/* Reusable contexts: creating them per call would cost more than small payloads do. */
struct fl_zcodec {
	ZSTD_CCtx *cctx;  /* compression level set once, at creation */
	ZSTD_DCtx *dctx;
};

/* Doubles the capacity (from ZCODEC_MIN_CAP) until need fits, so a buffer reused across
 * calls settles after a few reallocations; falls back to need itself near SIZE_MAX. */
int fl_bytes_reserve(struct fl_bytes *b, size_t need)
{
	size_t cap = b->cap ? b->cap : ZCODEC_MIN_CAP;
	uint8_t *p;

	if (need <= b->cap)
		return 0;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	p = realloc(b->data, cap);
	if (p == NULL)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

void fl_bytes_free(struct fl_bytes *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

size_t fl_bytes_trim(struct fl_bytes *b, size_t keep)
{
	if (b->cap > keep)
		fl_bytes_free(b);
	return b->cap;
}

struct fl_zcodec *fl_zcodec_new(int level)
{
	struct fl_zcodec *z;

	if (level < 1 || level > 19)
		return NULL;
	z = calloc(1, sizeof(*z));
	if (z == NULL)
		return NULL;
	z->cctx = ZSTD_createCCtx();
	z->dctx = ZSTD_createDCtx();
	if (z->cctx == NULL || z->dctx == NULL ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1))) {
		fl_zcodec_free(z);
		return NULL;
	}
	return z;
}

void fl_zcodec_free(struct fl_zcodec *z)
{
	if (z == NULL)
		return;
	ZSTD_freeCCtx(z->cctx);
	ZSTD_freeDCtx(z->dctx);
	free(z);
}

size_t fl_zcodec_bytes(const struct fl_zcodec *z)
{
	return z == NULL ? 0 : ZSTD_sizeof_CCtx(z->cctx) + ZSTD_sizeof_DCtx(z->dctx);
}

/* Reserves the worst-case bound first, so compression is one call and never retried.
 * The content size goes into the frame header: fl_zcodec_decompress insists on it. */
int fl_zcodec_compress(struct fl_zcodec *z, const void *src, size_t len, struct fl_bytes *out)
{
	size_t bound = ZSTD_compressBound(len);
	size_t r;

	out->len = 0;
	if (bound == 0 || ZSTD_isError(bound) || (len > 0 && src == NULL))
		return -1;
	if (fl_bytes_reserve(out, bound) != 0)
		return -1;
	r = ZSTD_compress2(z->cctx, out->data, out->cap, src, len);
	if (ZSTD_isError(r))
		return -1;
	out->len = r;
	return 0;
}

/* The declared content size is checked against max_out before anything is allocated,
 * and src must be exactly one frame (no trailing bytes or second frame), so a small
 * input can never make us allocate or write more than max_out. */
int fl_zcodec_decompress(struct fl_zcodec *z, const void *src, size_t len, size_t max_out,
	struct fl_bytes *out)
{
	unsigned long long want;
	size_t frame_len, r;

	out->len = 0;
	if (src == NULL || len == 0)
		return -1;
	want = ZSTD_getFrameContentSize(src, len);
	if (want == ZSTD_CONTENTSIZE_UNKNOWN || want == ZSTD_CONTENTSIZE_ERROR)
		return -1;
	if (want > (unsigned long long)max_out)
		return -1;
	frame_len = ZSTD_findFrameCompressedSize(src, len);
	if (ZSTD_isError(frame_len) || frame_len != len)
		return -1;
	/* At least one byte, so data is never NULL for an empty frame. */
	if (fl_bytes_reserve(out, want > 0 ? (size_t)want : 1) != 0)
		return -1;
	r = ZSTD_decompressDCtx(z->dctx, out->data, (size_t)want, src, len);
	if (ZSTD_isError(r) || r != (size_t)want)
		return -1;
	out->len = r;
	return 0;
}

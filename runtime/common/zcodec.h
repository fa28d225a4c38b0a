/* zcodec.h: zstd compression of frame payloads and replies (libzstd, one-shot API).
 *
 * A codec holds reusable zstd contexts; it belongs to one thread. Output goes to a
 * caller-owned growable buffer so the hot path does not allocate per call.
 */
#ifndef FL_ZCODEC_H
#define FL_ZCODEC_H

#include <stddef.h>
#include <stdint.h>

struct fl_zcodec;

/* A growable byte buffer: data[0..len) valid, cap bytes allocated. Zero-initialise. */
struct fl_bytes {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* Make sure b can hold need bytes; returns 0 or -1 (out of memory, b unchanged). */
int fl_bytes_reserve(struct fl_bytes *b, size_t need);
void fl_bytes_free(struct fl_bytes *b);

/* Free b's memory when more than keep bytes are allocated (len 0 after), so a scratch
 * buffer that one large message grew does not hold that high-water for the process's
 * life. Returns the bytes b holds after (its cap). */
size_t fl_bytes_trim(struct fl_bytes *b, size_t keep);

/* New codec compressing at level (1..19; 3 is zstd's default). NULL on a bad level or
 * out of memory. */
struct fl_zcodec *fl_zcodec_new(int level);
void fl_zcodec_free(struct fl_zcodec *z);

/* Bytes the codec's zstd contexts hold (they grow with the largest input seen). */
size_t fl_zcodec_bytes(const struct fl_zcodec *z);

/* Compress len bytes of src into out (replacing its contents). Returns 0, or -1 on a zstd
 * error or out of memory. */
int fl_zcodec_compress(struct fl_zcodec *z, const void *src, size_t len, struct fl_bytes *out);

/* Decompress one zstd frame src[0..len) into out (replacing its contents). The frame must
 * state its content size and it must be at most max_out bytes (a bomb guard). Returns 0,
 * or -1 for a corrupt frame, an unknown or oversized content size, or out of memory. */
int fl_zcodec_decompress(struct fl_zcodec *z, const void *src, size_t len, size_t max_out,
	struct fl_bytes *out);

#endif

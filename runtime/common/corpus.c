/* corpus.c: the public API of corpus.h: the default generated corpus, assembled from
 * segments of each kind (their generators are in corpus_text.c and corpus_records.c,
 * corpus_gen.h is what they share), the --corpus-dir loader, and wrapping reads. */
#include "corpus.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus_gen.h"
#include "rng.h"

#define CORPUS_MIN_BYTES (1u << 20)
#define CORPUS_SEG_MIN (4u << 10)
#define CORPUS_SEG_MAX (256u << 10)

enum corpus_kind {
	CORPUS_TEXT,
	CORPUS_CODE,
	CORPUS_JSON,
	CORPUS_XML,
	CORPUS_TABLE,
	CORPUS_NOISE,
	CORPUS_NKINDS
};

/* Share of segments per kind, in 1/256ths; tuned so zstd -3 gives about 3x overall. */
static const uint8_t corpus_kind_weight[CORPUS_NKINDS] = {
	[CORPUS_TEXT] = 90,
	[CORPUS_CODE] = 50,
	[CORPUS_JSON] = 42,
	[CORPUS_XML] = 30,
	[CORPUS_TABLE] = 34,
	[CORPUS_NOISE] = 10,
};

static void corpus_segment(struct corpus_gen *g, enum corpus_kind kind, uint8_t *end)
{
	switch (kind) {
	case CORPUS_TEXT:
		corpus_text_prose(g, end);
		break;
	case CORPUS_CODE:
		corpus_text_code(g, end);
		break;
	case CORPUS_JSON:
		corpus_records_json(g, end);
		break;
	case CORPUS_XML:
		corpus_records_xml(g, end);
		break;
	case CORPUS_TABLE:
		corpus_records_table(g, end);
		break;
	default:
		corpus_records_noise(g, end);
		break;
	}
}

/* A kind drawn by weight, redrawn while it is already well over its share of the bytes
 * written so far: the mix, and so the compression ratio, stays steady across seeds. */
static enum corpus_kind corpus_pick_kind(struct corpus_gen *g, const size_t *kind_bytes,
	size_t done)
{
	unsigned total = 0;
	unsigned k = CORPUS_NOISE;

	for (unsigned i = 0; i < CORPUS_NKINDS; i++)
		total += corpus_kind_weight[i];
	for (unsigned tries = 0; tries < 16; tries++) {
		unsigned r = corpus_below(g, total);

		for (k = 0; k + 1 < CORPUS_NKINDS && r >= corpus_kind_weight[k]; k++)
			r -= corpus_kind_weight[k];
		if (kind_bytes[k] <= done / total * corpus_kind_weight[k] + CORPUS_SEG_MAX)
			break;
	}
	return (enum corpus_kind)k;
}

/* A segment length in [4, 256) KiB, roughly log-uniform so small and large both occur
 * (integer arithmetic: the same on every host). */
static size_t corpus_seg_len(struct corpus_gen *g)
{
	size_t base = (size_t)CORPUS_SEG_MIN << corpus_below(g, 6);

	return base + corpus_below(g, (uint32_t)base);
}

static size_t corpus_page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

int fl_corpus_generate(struct fl_corpus *c, uint64_t seed, size_t bytes, char *err,
	size_t errlen)
{
	struct corpus_gen *g;
	uint8_t *base, *end;
	size_t map_len, kind_bytes[CORPUS_NKINDS] = { 0 };

	memset(c, 0, sizeof *c);
	if (bytes < CORPUS_MIN_BYTES || bytes > ((size_t)1 << 40)) {
		snprintf(err, errlen, "corpus: size %zu out of range [%u, 2^40]", bytes,
			CORPUS_MIN_BYTES);
		return -1;
	}
	g = malloc(sizeof *g);
	if (!g) {
		snprintf(err, errlen, "corpus: out of memory");
		return -1;
	}
	map_len = corpus_page_round(bytes + CORPUS_SLACK);
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		snprintf(err, errlen, "corpus: mmap %zu bytes: %s", map_len, strerror(errno));
		free(g);
		return -1;
	}
	fl_rng_seed(&g->rng, fl_rng_derive(seed, 0x636f72707573ull));
	g->nbits = 0;
	g->bits = 0;
	corpus_text_build_words(g);
	g->p = base;
	end = base + bytes;
	while (g->p < end) {
		uint8_t *start = g->p;
		enum corpus_kind kind = corpus_pick_kind(g, kind_bytes, (size_t)(start - base));
		uint8_t *seg_end = start + corpus_seg_len(g);

		corpus_segment(g, kind, seg_end < end ? seg_end : end);
		kind_bytes[kind] += (size_t)(g->p - start);
	}
	free(g);
	mprotect(base, map_len, PROT_READ);
	c->data = base;
	c->len = bytes;
	c->map_len = map_len;
	snprintf(c->source, sizeof c->source, "generated seed=%llu", (unsigned long long)seed);
	return 0;
}

struct corpus_file {
	char *name;
	size_t size;
};

static int corpus_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct corpus_file *)a)->name, ((const struct corpus_file *)b)->name);
}

static void corpus_files_free(struct corpus_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

/* List dir's regular files (following symlinks), sorted by name. */
static int corpus_list(DIR *d, const char *dir, struct corpus_file **out, size_t *nout,
	char *err, size_t errlen)
{
	struct corpus_file *f = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		struct stat st;

		if (fstatat(dirfd(d), e->d_name, &st, 0) != 0) {
			snprintf(err, errlen, "corpus: %s/%s: %s", dir, e->d_name, strerror(errno));
			corpus_files_free(f, n);
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct corpus_file *nf = realloc(f, ncap * sizeof *nf);

			if (!nf)
				goto oom;
			f = nf;
			cap = ncap;
		}
		f[n].name = strdup(e->d_name);
		if (!f[n].name)
			goto oom;
		f[n++].size = (size_t)st.st_size;
	}
	if (errno) {
		snprintf(err, errlen, "corpus: %s: %s", dir, strerror(errno));
		corpus_files_free(f, n);
		return -1;
	}
	if (n)
		qsort(f, n, sizeof *f, corpus_file_cmp);
	*out = f;
	*nout = n;
	return 0;
oom:
	snprintf(err, errlen, "corpus: %s: out of memory", dir);
	corpus_files_free(f, n);
	return -1;
}

/* Read exactly want bytes of dir/name into dst. */
static int corpus_read_file(int dfd, const char *dir, const char *name, uint8_t *dst,
	size_t want, char *err, size_t errlen)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0) {
		snprintf(err, errlen, "corpus: %s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	while (got < want) {
		ssize_t r = read(fd, dst + got, want - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errlen, "corpus: %s/%s: %s", dir, name,
				r < 0 ? strerror(errno) : "file shrank while reading");
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

int fl_corpus_load_dir(struct fl_corpus *c, const char *dir, char *err, size_t errlen)
{
	struct corpus_file *f = NULL;
	size_t n = 0, total = 0, map_len, off = 0;
	uint8_t *base;
	DIR *d;

	memset(c, 0, sizeof *c);
	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "corpus: %s: %s", dir, strerror(errno));
		return -1;
	}
	if (corpus_list(d, dir, &f, &n, err, errlen) != 0) {
		closedir(d);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (f[i].size > SIZE_MAX / 2 - total) {
			snprintf(err, errlen, "corpus: %s/%s: too large", dir, f[i].name);
			goto fail;
		}
		total += f[i].size;
	}
	if (total == 0) {
		snprintf(err, errlen, "corpus: %s: no bytes in regular files", dir);
		goto fail;
	}
	map_len = corpus_page_round(total);
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		snprintf(err, errlen, "corpus: %s: mmap %zu bytes: %s", dir, map_len,
			strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		if (corpus_read_file(dirfd(d), dir, f[i].name, base + off, f[i].size, err,
				errlen) != 0) {
			munmap(base, map_len);
			goto fail;
		}
		off += f[i].size;
	}
	mprotect(base, map_len, PROT_READ);
	corpus_files_free(f, n);
	closedir(d);
	c->data = base;
	c->len = total;
	c->map_len = map_len;
	snprintf(c->source, sizeof c->source, "%s", dir);
	return 0;
fail:
	corpus_files_free(f, n);
	closedir(d);
	return -1;
}

size_t fl_corpus_span(const struct fl_corpus *c, uint64_t off, size_t want, const uint8_t **p)
{
	size_t o = (size_t)(off % c->len);
	size_t n = c->len - o;

	*p = c->data + o;
	return want < n ? want : n;
}

void fl_corpus_copy(const struct fl_corpus *c, uint64_t off, void *dst, size_t len)
{
	uint8_t *out = dst;

	while (len > 0) {
		const uint8_t *p;
		size_t n = fl_corpus_span(c, off, len, &p);

		memcpy(out, p, n);
		out += n;
		off += n;
		len -= n;
	}
}

void fl_corpus_free(struct fl_corpus *c)
{
	if (c->data)
		munmap((void *)c->data, c->map_len);
	memset(c, 0, sizeof *c);
}

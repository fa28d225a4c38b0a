/* dlrm.c: a DLRM-style model on OpenBLAS sgemm, batched over a request's stories. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlrm.h"
#include "errbuf.h"
#include "rng.h"

#define DLRM_BOTTOM 3u
#define DLRM_TOP 3u
#define DLRM_WIDEST 415u          /* widest activation (top MLP input) */
#define DLRM_MAX_BATCH 65536u
#define DLRM_LOGIT_CLAMP 15.0     /* keeps the sigmoid strictly inside (0, 1) in float */

/* One fully connected layer: w is out x in, row-major. */
struct dlrm_layer {
	uint32_t in, out;
	float *w;
	float *b;
};

struct fl_dlrm {
	uint32_t rows;                            /* rows per embedding table */
	float *emb;                               /* FL_DLRM_SPARSE x rows x FL_DLRM_DIM */
	struct dlrm_layer bottom[DLRM_BOTTOM];    /* 13-256-128-64 */
	struct dlrm_layer top[DLRM_TOP];          /* 415-256-128-1 */
};

struct fl_dlrm_scratch {
	size_t max_batch;
	float *a, *b;                             /* ping-pong activations, max_batch x 415 */
	float *bot;                               /* bottom outputs, max_batch x 64 */
	float *vecs;                              /* one story's 27 x 64 interaction vectors */
	float *gram;                              /* their 27 x 27 dot products */
};

static const uint32_t dlrm_bottom_dims[DLRM_BOTTOM + 1] = { FL_DLRM_DENSE, 256, 128, FL_DLRM_DIM };
static const uint32_t dlrm_top_dims[DLRM_TOP + 1] = { FL_DLRM_TOP_IN, 256, 128, 1 };

static float dlrm_uniform(struct fl_rng *r, float scale)
{
	return (float)(fl_rng_unit(r) * 2.0 - 1.0) * scale;
}

/* Xavier-uniform weights, zero biases. Returns 0 or -1 (out of memory). */
static int dlrm_layer_init(struct dlrm_layer *l, uint32_t in, uint32_t out, struct fl_rng *r)
{
	float scale = sqrtf(6.0f / (float)(in + out));

	l->in = in;
	l->out = out;
	l->w = malloc((size_t)in * out * sizeof(float));
	l->b = calloc(out, sizeof(float));
	if (l->w == NULL || l->b == NULL)
		return -1;
	for (size_t i = 0; i < (size_t)in * out; i++)
		l->w[i] = dlrm_uniform(r, scale);
	return 0;
}

struct fl_dlrm *fl_dlrm_new(uint32_t emb_rows, uint64_t seed, char *err, size_t errlen)
{
	struct fl_dlrm *m;
	struct fl_rng rng;
	size_t nemb;
	float escale;

	if (emb_rows < 1 || emb_rows > FL_DLRM_MAX_ROWS) {
		fl_errf(err, errlen, "dlrm: emb_rows %u out of range 1..%u", emb_rows,
			FL_DLRM_MAX_ROWS);
		return NULL;
	}
	openblas_set_num_threads(1);
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		fl_errf(err, errlen, "dlrm: out of memory");
		return NULL;
	}
	m->rows = emb_rows;
	fl_rng_seed(&rng, fl_rng_derive(seed, 0xd1e0));
	for (unsigned i = 0; i < DLRM_BOTTOM; i++)
		if (dlrm_layer_init(&m->bottom[i], dlrm_bottom_dims[i], dlrm_bottom_dims[i + 1], &rng) < 0)
			goto oom;
	for (unsigned i = 0; i < DLRM_TOP; i++)
		if (dlrm_layer_init(&m->top[i], dlrm_top_dims[i], dlrm_top_dims[i + 1], &rng) < 0)
			goto oom;
	nemb = (size_t)FL_DLRM_SPARSE * emb_rows * FL_DLRM_DIM;
	m->emb = malloc(nemb * sizeof(float));
	if (m->emb == NULL)
		goto oom;
	escale = sqrtf(1.0f / (float)emb_rows);
	for (size_t i = 0; i < nemb; i++)
		m->emb[i] = dlrm_uniform(&rng, escale);
	return m;
oom:
	fl_dlrm_free(m);
	fl_errf(err, errlen, "dlrm: out of memory (%u rows per table)", emb_rows);
	return NULL;
}

void fl_dlrm_free(struct fl_dlrm *m)
{
	if (m == NULL)
		return;
	for (unsigned i = 0; i < DLRM_BOTTOM; i++) {
		free(m->bottom[i].w);
		free(m->bottom[i].b);
	}
	for (unsigned i = 0; i < DLRM_TOP; i++) {
		free(m->top[i].w);
		free(m->top[i].b);
	}
	free(m->emb);
	free(m);
}

uint32_t fl_dlrm_rows(const struct fl_dlrm *m)
{
	return m->rows;
}

size_t fl_dlrm_bytes(const struct fl_dlrm *m)
{
	size_t n = (size_t)FL_DLRM_SPARSE * m->rows * FL_DLRM_DIM;

	for (unsigned i = 0; i < DLRM_BOTTOM; i++)
		n += (size_t)m->bottom[i].in * m->bottom[i].out + m->bottom[i].out;
	for (unsigned i = 0; i < DLRM_TOP; i++)
		n += (size_t)m->top[i].in * m->top[i].out + m->top[i].out;
	return n * sizeof(float);
}

struct fl_dlrm_scratch *fl_dlrm_scratch_new(size_t max_batch)
{
	struct fl_dlrm_scratch *s;

	if (max_batch < 1 || max_batch > DLRM_MAX_BATCH)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->max_batch = max_batch;
	s->a = malloc(max_batch * DLRM_WIDEST * sizeof(float));
	s->b = malloc(max_batch * DLRM_WIDEST * sizeof(float));
	s->bot = malloc(max_batch * FL_DLRM_DIM * sizeof(float));
	s->vecs = malloc(FL_DLRM_VECS * FL_DLRM_DIM * sizeof(float));
	s->gram = malloc(FL_DLRM_VECS * FL_DLRM_VECS * sizeof(float));
	if (s->a == NULL || s->b == NULL || s->bot == NULL || s->vecs == NULL || s->gram == NULL) {
		fl_dlrm_scratch_free(s);
		return NULL;
	}
	return s;
}

void fl_dlrm_scratch_free(struct fl_dlrm_scratch *s)
{
	if (s == NULL)
		return;
	free(s->a);
	free(s->b);
	free(s->bot);
	free(s->vecs);
	free(s->gram);
	free(s);
}

/* y = x w^T (+ b) as one sgemm with beta = 0; the bias and ReLU follow in one sweep. */
void fl_dlrm_linear(const float *x, size_t n, size_t nin, const float *w, const float *b,
	size_t nout, int relu, float *y)
{
	if (n == 0)
		return;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)n, (blasint)nout,
		(blasint)nin, 1.0f, x, (blasint)nin, w, (blasint)nin, 0.0f, y, (blasint)nout);
	/* The bias and ReLU as two branch-free sweeps a row, unrolled (the tests inside one
	 * loop kept gcc from vectorizing it and took a back-edge every 9 instructions). */
	for (size_t r = 0; r < n; r++) {
		float *row = y + r * nout;

		if (b != NULL) {
			#pragma GCC unroll 4
			for (size_t c = 0; c < nout; c++)
				row[c] += b[c];
		}
		if (relu) {
			#pragma GCC unroll 4
			for (size_t c = 0; c < nout; c++)
				row[c] = row[c] < 0.0f ? 0.0f : row[c];
		}
	}
}

static void dlrm_layer_run(const struct dlrm_layer *l, const float *x, size_t n, int relu,
	float *y)
{
	fl_dlrm_linear(x, n, l->in, l->w, l->b, l->out, relu, y);
}

/* One story's interaction row: gather its bottom output and 26 embedding rows, take the
 * Gram matrix with one sgemm, and write [bottom | upper triangle] to top_in (415). */
static void dlrm_interact(const struct fl_dlrm *m, struct fl_dlrm_scratch *s, const float *bot,
	const uint32_t *ids, float *top_in)
{
	size_t k = 0;

	memcpy(s->vecs, bot, FL_DLRM_DIM * sizeof(float));
	for (unsigned t = 0; t < FL_DLRM_SPARSE; t++) {
		size_t row = (size_t)t * m->rows + ids[t] % m->rows;

		memcpy(s->vecs + (size_t)(t + 1u) * FL_DLRM_DIM, m->emb + row * FL_DLRM_DIM,
			FL_DLRM_DIM * sizeof(float));
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, FL_DLRM_VECS, FL_DLRM_VECS,
		FL_DLRM_DIM, 1.0f, s->vecs, FL_DLRM_DIM, s->vecs, FL_DLRM_DIM, 0.0f, s->gram,
		FL_DLRM_VECS);
	memcpy(top_in, bot, FL_DLRM_DIM * sizeof(float));
	for (unsigned i = 0; i < FL_DLRM_VECS; i++)
		for (unsigned j = i + 1u; j < FL_DLRM_VECS; j++)
			top_in[FL_DLRM_DIM + k++] = s->gram[i * FL_DLRM_VECS + j];
}

/* One chunk of at most max_batch stories. */
static void dlrm_chunk(const struct fl_dlrm *m, struct fl_dlrm_scratch *s, const float *dense,
	const uint32_t *sparse, size_t n, float *out)
{
	dlrm_layer_run(&m->bottom[0], dense, n, 1, s->a);
	dlrm_layer_run(&m->bottom[1], s->a, n, 1, s->b);
	dlrm_layer_run(&m->bottom[2], s->b, n, 1, s->bot);
	for (size_t r = 0; r < n; r++)
		dlrm_interact(m, s, s->bot + r * FL_DLRM_DIM, sparse + r * FL_DLRM_SPARSE,
			s->a + r * FL_DLRM_TOP_IN);
	dlrm_layer_run(&m->top[0], s->a, n, 1, s->b);
	dlrm_layer_run(&m->top[1], s->b, n, 1, s->a);
	dlrm_layer_run(&m->top[2], s->a, n, 0, s->b);
	for (size_t r = 0; r < n; r++) {
		double z = s->b[r];

		if (z > DLRM_LOGIT_CLAMP)
			z = DLRM_LOGIT_CLAMP;
		if (!(z > -DLRM_LOGIT_CLAMP))
			z = -DLRM_LOGIT_CLAMP;
		out[r] = (float)(1.0 / (1.0 + exp(-z)));
	}
}

void fl_dlrm_forward(const struct fl_dlrm *m, struct fl_dlrm_scratch *s, const float *dense,
	const uint32_t *sparse, size_t n, float *out)
{
	for (size_t done = 0; done < n; ) {
		size_t c = n - done < s->max_batch ? n - done : s->max_batch;

		dlrm_chunk(m, s, dense + done * FL_DLRM_DENSE, sparse + done * FL_DLRM_SPARSE, c,
			out + done);
		done += c;
	}
}

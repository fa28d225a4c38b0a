/* bench_asm_clone.c: measure asm_clone_emit throughput (MB/s of assembly written).
 *
 * Compiles three probes of an enum-switch extractor (the shape of patterns/README.md's
 * example, made self-contained) with gcc -O2 -fPIC -S, constants at the low end, the high
 * end and random, fits them, then emits copies with random constants into a shard buffer
 * that is reset every 1000 copies, as a shard writer would. Build and run from the repository root:
 *   gcc -O2 -Wall -Wextra -Igenerator tests/bench/bench_asm_clone.c generator/asm_clone.c \
 *       generator/asm_lex.c generator/asm_fit.c generator/util.c runtime/common/osfile.c \
 *       -Iruntime/common -o /tmp/bench_asm_clone && /tmp/bench_asm_clone [copies]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "asm_clone.h"
#include "util.h"

#define NK 12

static const char tpl[] =
	"#include <stdint.h>\n"
	"struct ctx { const uint32_t *story; int32_t *dense; uint32_t call_word, body_q16; };\n"
	"static inline uint32_t mix(uint32_t x)\n"
	"{ x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; return x; }\n"
	"static __attribute__((noinline, noclone, used)) void NAME(struct ctx *c)\n"
	"{\n"
	"\tif (((c->call_word ^ K0) * 0x9E3779B1U) >> 16 >= c->body_q16) return;\n"
	"\tuint32_t w = mix(c->story[K1] ^ K2);\n"
	"\tswitch ((uint32_t)(((uint64_t)w * 5u) >> 32)) {\n"
	"\tcase 0: c->dense[K3] += (int32_t)(w >> 1) & K4; break;\n"
	"\tcase 1: c->dense[K5] += (int32_t)(w * K6); break;\n"
	"\tcase 2: if (w < K7) c->dense[K8] += (int32_t)w; break;\n"
	"\tcase 3: c->dense[K9] += (int32_t)(w ^ K10); break;\n"
	"\tdefault: c->dense[K11] -= (int32_t)(w >> 3); break;\n"
	"\t}\n"
	"}\n";

static const struct { int64_t lo, hi; } range[NK] = {
	{65536, 1073741823}, {40, 255}, {65536, 1073741823}, {0, 4095}, {4096, 65535},
	{0, 4095}, {100003, 1048575}, {65536, 1073741823}, {0, 4095}, {0, 4095},
	{65536, 1073741823}, {0, 4095},
};

static int usable(int j, int64_t v)
{
	return (j != 6 || (v & 1)) && v > 1 && (v & (v - 1)) != 0 && (v & (v + 1)) != 0;
}

/* A copy's constant j: uniform in its range, odd for the multiplier (j = 6), no 0, 1,
 * powers of two or 2^n-1. */
static int64_t draw(int j)
{
	for (;;) {
		int64_t v = range[j].lo + (int64_t)((uint64_t)rand() % (uint64_t)(range[j].hi -
		                                                                range[j].lo + 1));
		if (usable(j, v))
			return v;
	}
}

/* The usable value nearest to from, stepping by step: probes sit at the range ends. */
static int64_t edge(int j, int64_t from, int64_t step)
{
	while (!usable(j, from))
		from += step;
	return from;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long copies = argc > 1 ? atol(argv[1]) : 200000;
	char dir[] = "/tmp/bench_asm_clone.XXXXXX";
	struct buf path = {0}, cmd = {0};

	if (!mkdtemp(dir))
		fatal("mkdtemp:");
	buf_printf(&path, "%s/tpl.c", dir);
	write_if_changed(path.p, tpl, strlen(tpl));
	srand(1);
	int64_t pk[3][NK];
	char *text[3];
	char names[3][16];
	for (int i = 0; i < 3; i++) {
		buf_reset(&cmd);
		snprintf(names[i], sizeof(names[i]), "probe%d", i);
		buf_printf(&cmd, "gcc -O2 -fPIC -S -o %s/p%d.s -DNAME=%s", dir, i, names[i]);
		for (int j = 0; j < NK; j++) {
			pk[i][j] = i == 0 ? edge(j, range[j].lo, 1) : i == 1 ? edge(j, range[j].hi, -1) :
			           draw(j);
			buf_printf(&cmd, " -DK%d=%" PRId64 "u", j, pk[i][j]);
		}
		buf_printf(&cmd, " %s", path.p);
		if (system(cmd.p) != 0)
			fatal("gcc failed: %s", cmd.p);
		buf_reset(&cmd);
		buf_printf(&cmd, "%s/p%d.s", dir, i);
		text[i] = read_file(cmd.p, NULL);
		if (!text[i])
			fatal("cannot read %s:", cmd.p);
		unlink(cmd.p);
	}
	unlink(path.p);
	rmdir(dir);

	const char *texts[3] = {text[0], text[1], text[2]};
	const char *np[3] = {names[0], names[1], names[2]};
	const int64_t *kp[3] = {pk[0], pk[1], pk[2]};
	char err[512];
	double t0 = now();
	struct asm_clone *c = asm_clone_fit(texts, np, kp, NK, err, sizeof(err));
	double t_fit = now() - t0;
	if (!c)
		fatal("fit failed: %s", err);

	int64_t (*ks)[NK] = xmalloc((size_t)copies * sizeof(*ks));
	for (long n = 0; n < copies; n++)
		for (int j = 0; j < NK; j++)
			ks[n][j] = draw(j);
	char (*names_out)[24] = xmalloc((size_t)copies * sizeof(*names_out));
	char tags[1000][8];
	for (long n = 0; n < copies; n++)
		snprintf(names_out[n], sizeof(names_out[n]), "fl_P03_v017_c%06ld", n % 1000000);
	for (int n = 0; n < 1000; n++)
		snprintf(tags[n], sizeof(tags[n]), "f%d", n);
	struct buf out = {0};
	size_t total = 0;
	long rejected = 0;
	t0 = now();
	for (long n = 0; n < copies; n++) {
		if (n % 1000 == 0) {
			total += out.len;
			buf_reset(&out);
		}
		rejected += asm_clone_emit(c, names_out[n], tags[n % 1000], ks[n], &out) != 0;
	}
	total += out.len;
	double t_emit = now() - t0;
	printf("fit: %zu slots, %.3f ms\n", asm_clone_nslots(c), t_fit * 1e3);
	printf("emit: %ld copies (%ld rejected), %.1f MB in %.3f s: %.0f MB/s, %.2f us/copy\n",
	       copies, rejected, (double)total / 1e6, t_emit, (double)total / 1e6 / t_emit,
	       t_emit * 1e6 / (double)copies);
	free(ks);
	free(names_out);
	buf_free(&out);
	buf_free(&path);
	buf_free(&cmd);
	asm_clone_free(c);
	for (int i = 0; i < 3; i++)
		free(text[i]);
	return 0;
}

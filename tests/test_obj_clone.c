/* test_obj_clone.c: tests for generator/obj_tpl.c and obj_shard.c (clone straight to object
 * code, obj_clone.h).
 *
 * A hand-written probe in gcc's style with one slot of each kind the object cloner meets (a
 * 32-bit immediate, an 8-bit one, a displacement that shrinks as its constant grows, a
 * 64-bit constant-pool entry) and a cold part is fitted with asm_clone, assembled once with
 * cc, and copies are patched from it. Built by `ninja tests/test_obj_clone`; runs cc, so it
 * works in a scratch directory under $TMPDIR or /tmp (removed at the end).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "asm_clone.h"
#include "obj_clone.h"
#include "util.h"

#define NK 4

/* Constants: k0 threshold (cmpl $k0-1, imm32), k1 addend (addl $k1, imm8), k2 an index whose
 * displacement is 1000 - 8*k2 (disp8 at the high end, disp32 at the low end), k3 a 64-bit
 * pool value. */
static char *probe_text(const char *name, const int64_t *k)
{
	struct buf b = {0};

	buf_printf(&b, "\t.text\n\t.p2align 4\n\t.type\t%s, @function\n%s:\n", name, name);
	buf_printf(&b, ".LFB0:\n\t.cfi_startproc\n\tmovl\t(%%rdi), %%eax\n");
	buf_printf(&b, "\tcmpl\t$%" PRId64 ", %%eax\n\tjbe\t.L2\n", k[0] - 1);
	buf_printf(&b, "\taddl\t$%" PRId64 ", %%eax\n", k[1]);
	buf_printf(&b, "\tmovl\t%" PRId64 "(%%rsi), %%edx\n", 1000 - 8 * k[2]);
	buf_printf(&b, "\taddl\t%%edx, %%eax\n\tmovq\t.LC0(%%rip), %%rcx\n");
	buf_printf(&b, "\taddq\t%%rcx, %%rax\n\ttestl\t%%eax, %%eax\n\tje\t%s.cold\n", name);
	buf_printf(&b, ".L2:\n\tret\n\t.cfi_endproc\n");
	buf_printf(&b, "\t.section\t.text.unlikely\n\t.cfi_startproc\n");
	buf_printf(&b, "\t.type\t%s.cold, @function\n%s.cold:\n\tud2\n\t.cfi_endproc\n", name, name);
	buf_printf(&b, ".LFE0:\n\t.text\n\t.size\t%s, .-%s\n", name, name);
	buf_printf(&b, "\t.section\t.text.unlikely\n\t.size\t%s.cold, .-%s.cold\n", name, name);
	buf_printf(&b, "\t.section\t.rodata.cst8,\"aM\",@progbits,8\n\t.align 8\n");
	buf_printf(&b, ".LC0:\n\t.quad\t%" PRId64 "\n", k[3]);
	return b.p;
}

static const int64_t probe_k[3][NK] = {
	{200, 1, 1, INT64_C(1) << 40},
	{5000, 100, 120, INT64_C(1) << 50},
	{1234, 37, 50, INT64_C(3) << 44},
};

struct fix {
	char dir[64];
	struct asm_clone *ac;
	struct obj_tpl *ot;
};

static int setup(void **state)
{
	struct fix *x = xcalloc(1, sizeof(*x));
	const char *tmp = getenv("TMPDIR");
	snprintf(x->dir, sizeof(x->dir), "%s/objclone.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(x->dir));
	char *text[3];
	const char *names[3] = {"fl_probe0", "fl_probe1", "fl_probe2"};
	const int64_t *k[3];
	for (int i = 0; i < 3; i++) {
		text[i] = probe_text(names[i], probe_k[i]);
		k[i] = probe_k[i];
	}
	char err[512];
	x->ac = asm_clone_fit((const char *const *)text, names, k, NK, err, sizeof(err));
	if (!x->ac)
		fail_msg("fit: %s", err);
	char path[128];
	snprintf(path, sizeof(path), "%s/tpl", x->dir);
	x->ot = obj_tpl_make(x->ac, NULL, "cc", path, err, sizeof(err));
	if (!x->ot)
		fail_msg("obj_tpl_make: %s", err);
	for (int i = 0; i < 3; i++)
		free(text[i]);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fix *x = *state;
	char cmd[128];

	obj_tpl_free(x->ot);
	asm_clone_free(x->ac);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
	if (!getenv("OBJ_CLONE_KEEP") && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", x->dir);
	free(x);
	return 0;
}

/* The bytes of section name in the ELF object at path (NULL if absent). */
static unsigned char *section_bytes(const char *path, const char *name, size_t *len)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	size_t shstrndx;
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	unsigned char *out = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn)) && !out) {
		gelf_getshdr(scn, &sh);
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			Elf_Data *d = elf_getdata(scn, NULL);
			out = xmalloc(sh.sh_size + 1);
			memcpy(out, d->d_buf, sh.sh_size);
			*len = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	return out;
}

static int64_t *values(const struct asm_clone *ac, const int64_t *k)
{
	int64_t *v = xmalloc((asm_clone_nslots(ac) + 1) * sizeof(*v));
	assert_int_equal(asm_clone_values(ac, k, v), 0);
	return v;
}

/* 1. Every slot was found in the machine code: one field each. */
static void test_1_every_slot_has_a_field(void **state)
{
	struct fix *x = *state;

	assert_int_equal(asm_clone_nslots(x->ac), NK);
	assert_int_equal(obj_tpl_fields(x->ot), NK);
}

/* 2. A copy whose values take the template's encodings is byte for byte what the assembler
 * makes of the same copy written as assembly (code, cold part and constant pool). */
static void test_2_copy_equals_assembled_copy(void **state)
{
	struct fix *x = *state;
	const int64_t k[NK] = {4000, 90, 110, INT64_C(5) << 44};
	int64_t *v = values(x->ac, k);
	struct obj_shard *o = obj_shard_new();
	char err[512], obj_path[128], s_path[128], o_path[128];

	assert_int_equal(obj_shard_add(o, x->ot, v, "fl_copy", 1, 2, 3), 0);
	assert_int_equal(obj_shard_copies(o), 1);
	snprintf(obj_path, sizeof(obj_path), "%s/shard.o", x->dir);
	if (obj_shard_write(o, obj_path, err, sizeof(err)) != 0)
		fail_msg("write: %s", err);
	struct buf text = {0};
	assert_int_equal(asm_clone_emit(x->ac, "fl_copy", "c", k, &text), 0);
	snprintf(s_path, sizeof(s_path), "%s/copy.s", x->dir);
	snprintf(o_path, sizeof(o_path), "%s/copy.o", x->dir);
	write_if_changed(s_path, text.p, text.len);
	const char *args[] = {"-c", s_path, "-o", o_path, NULL};
	if (run_command("cc", args, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	static const char *const secs[] = {".text", ".text.unlikely", ".rodata.cst8"};
	for (int i = 0; i < 3; i++) {
		size_t la = 0, lb = 0;
		unsigned char *a = section_bytes(obj_path, secs[i], &la);
		unsigned char *b = section_bytes(o_path, secs[i], &lb);
		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(la, lb);
		assert_memory_equal(a, b, la);
		free(a);
		free(b);
	}
	buf_free(&text);
	free(v);
	obj_shard_free(o);
}

/* 3. A displacement that outgrows the template's disp8 field is refused, and the shard is
 * left as it was (the copy then goes the assembly way). */
static void test_3_value_too_wide_for_its_field(void **state)
{
	struct fix *x = *state;
	const int64_t k[NK] = {300, 5, 2, INT64_C(1) << 41};   /* displacement 984 */
	int64_t *v = values(x->ac, k);
	struct obj_shard *o = obj_shard_new();
	size_t before = obj_shard_bytes(o);

	assert_int_equal(obj_shard_add(o, x->ot, v, "fl_wide", 1, 2, 3), -1);
	assert_int_equal(obj_shard_copies(o), 0);
	assert_int_equal(obj_shard_bytes(o), before);
	free(v);
	obj_shard_free(o);
}

/* 4. A shard of two copies links into a shared object whose fl_registry rows point at the
 * copies, and calling them gives what the constants say. */
static void test_4_linked_copies_run(void **state)
{
	struct fix *x = *state;
	const int64_t k[2][NK] = {{4000, 90, 110, 0}, {250, 7, 115, 0}};
	struct obj_shard *o = obj_shard_new();
	char err[512], path[128], stub[128], so[128];

	for (int i = 0; i < 2; i++) {
		int64_t kk[NK];
		memcpy(kk, k[i], sizeof(kk));
		kk[3] = INT64_C(1) << 45;
		int64_t *v = values(x->ac, kk);
		assert_int_equal(obj_shard_add(o, x->ot, v, i ? "fl_b" : "fl_a", 1, (unsigned)i, 7), 0);
		free(v);
	}
	snprintf(path, sizeof(path), "%s/two.o", x->dir);
	if (obj_shard_write(o, path, err, sizeof(err)) != 0)
		fail_msg("write: %s", err);
	obj_shard_free(o);
	snprintf(stub, sizeof(stub), "%s/stub.c", x->dir);
	static const char stub_c[] =
		"#include <stdint.h>\n"
		"struct row { uint64_t (*fn)(const uint32_t *, const char *); uint16_t p, v;"
		" uint32_t c; };\n"
		"extern const struct row __start_fl_registry[], __stop_fl_registry[];\n"
		"const struct row *rows(int *n) { *n = (int)(__stop_fl_registry -"
		" __start_fl_registry); return __start_fl_registry; }\n";
	write_if_changed(stub, stub_c, strlen(stub_c));
	snprintf(so, sizeof(so), "%s/two.so", x->dir);
	const char *args[] = {"-shared", "-fPIC", "-o", so, stub, path, NULL};
	if (run_command("cc", args, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("dlopen: %s", dlerror());
	struct row {
		uint64_t (*fn)(const uint32_t *, const char *);
		uint16_t p, v;
		uint32_t c;
	};
	const struct row *(*rows)(int *) = (const struct row *(*)(int *))dlsym(h, "rows");
	assert_non_null(rows);
	int n = 0;
	const struct row *r = rows(&n);
	assert_int_equal(n, 2);
	static char mem[1024];
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].p, 1);
		assert_int_equal(r[i].v, i);
		assert_int_equal(r[i].c, 7);
		int64_t disp = 1000 - 8 * k[i][2];
		memset(mem, 0, sizeof(mem));
		uint32_t word = 3;   /* at or below k0 - 1: the function returns it unchanged */
		mem[disp] = 1;
		assert_int_equal(r[i].fn(&word, mem) & 0xffffffffu, 3);
		word = 5000;         /* above: + k1 + the loaded byte + the pool (low bits 0) */
		uint64_t got = r[i].fn(&word, mem);
		assert_int_equal(got & 0xffffffffu, (uint64_t)(5000 + k[i][1] + 1));
	}
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_every_slot_has_a_field),
		cmocka_unit_test(test_2_copy_equals_assembled_copy),
		cmocka_unit_test(test_3_value_too_wide_for_its_field),
		cmocka_unit_test(test_4_linked_copies_run),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/* replay_main.c: runs files (or every file of directories) through a fuzz target, without libFuzzer. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Targets without setup leave this undefined; the weak definition stands in. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Read the whole file; NULL (errno set) on failure. malloc'd even when empty, so the
 * target gets a valid pointer, and exactly len bytes long, so ASan sees overreads. */
static uint8_t *replay_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL, *q;
	size_t cap = 0, n = 0, got;
	int saved;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			if ((q = realloc(p, cap)) == NULL)
				goto fail;
			p = q;
		}
		got = fread(p + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		errno = EIO;
		goto fail;
	}
	fclose(f);
	if ((q = malloc(n ? n : 1)) == NULL) {
		free(p);
		return NULL;
	}
	memcpy(q, p, n);
	free(p);
	*len = n;
	return q;
fail:
	saved = errno;
	free(p);
	fclose(f);
	errno = saved;
	return NULL;
}

static int replay_file(const char *path)
{
	size_t len = 0;
	uint8_t *data = replay_read(path, &len);

	if (data == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int replay_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir in name order (so runs are repeatable); returns files run, or
 * -1 on an error. */
static long replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, **q;
	size_t n = 0, cap = 0;
	long done = 0;

	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char *path;
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		path = malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (path == NULL)
			break;
		sprintf(path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			if ((q = realloc(names, cap * sizeof(*names))) == NULL) {
				free(path);
				break;
			}
			names = q;
		}
		names[n++] = path;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), replay_cmp);
	for (size_t i = 0; i < n; i++) {
		if (done >= 0 && replay_file(names[i]) == 0)
			done++;
		else
			done = -1;
		free(names[i]);
	}
	free(names);
	return done;
}

int main(int argc, char **argv)
{
	long total = 0;
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE-OR-DIR...\n", argv[0]);
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		long n;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			bad = 1;
			continue;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]) == 0 ? 1 : -1;
		if (n < 0)
			bad = 1;
		else
			total += n;
	}
	printf("replay %s: %ld inputs ran%s\n", argv[0], total, bad ? ", some unreadable" : "");
	return bad;
}

/* hostcpu.c: the host's CPU model and its kind as a file-name word (hostcpu.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hostcpu.h"

void fl_cpu_model(char *out, size_t outlen)
{
	char line[512];
	FILE *fp = fopen("/proc/cpuinfo", "r");

	snprintf(out, outlen, "unknown");
	if (fp == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		char *v = strchr(line, ':');
		if (v != NULL) {
			v += strspn(v + 1, " \t") + 1;
			v[strcspn(v, "\n")] = '\0';
			if (*v != '\0')
				snprintf(out, outlen, "%s", v);
		}
		break;
	}
	fclose(fp);
}

/* Whether the word of len bytes at w says nothing about the kind. */
static int noise_word(const char *w, size_t len)
{
	static const char *const noise[] = { "r", "tm", "cpu", "processor", NULL };

	for (int i = 0; noise[i]; i++)
		if (strlen(noise[i]) == len && strncasecmp(w, noise[i], len) == 0)
			return 1;
	return 0;
}

void fl_cpu_kind(const char *model, char *out, size_t outlen)
{
	size_t o = 0;
	const char *p = model;

	if (outlen == 0)
		return;
	while (*p != '\0' && *p != '@') {
		if (!isalnum((unsigned char)*p)) {
			p++;
			continue;
		}
		const char *w = p;
		while (isalnum((unsigned char)*p))
			p++;
		size_t len = (size_t)(p - w);
		if (noise_word(w, len))
			continue;
		if (o > 0 && o + 1 < outlen)
			out[o++] = '-';
		for (size_t i = 0; i < len && o + 1 < outlen; i++)
			out[o++] = (char)tolower((unsigned char)w[i]);
	}
	out[o] = '\0';
	if (o == 0)
		snprintf(out, outlen, "unknown");
}

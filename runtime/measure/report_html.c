/* report_html.c: a report directory's report.html (study, scale): DIR/summary.md rendered
 * with cmark-gfm (GitHub-flavoured markdown with its table extension) into one complete
 * HTML document whose plots are the directory's own SVG files, inlined, so the page needs
 * no other file. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>

#include "mutil.h"
#include "osfile.h"
#include "report_html.h"

#define HT_MAX_FILE (64u << 20)  /* summary.md or a plot: larger is not the report's own */

static const char ht_css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;"
	"margin:2em auto;padding:0 1em;line-height:1.45;color:#1b1b1b}\n"
	"h1,h2,h3{line-height:1.2}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;"
	"margin-top:1.8em}\n"
	"pre,code{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.92em}\n"
	"pre{background:#f5f5f5;padding:.6em .8em;overflow-x:auto}\n"
	".table-wrap,table{overflow-x:auto}\n"
	"table{border-collapse:collapse;margin:1em 0;font-size:.88em;display:block}\n"
	"th,td{border:1px solid #ccc;padding:.25em .55em;vertical-align:top}\n"
	"th{background:#f0f0f0}tr:nth-child(even) td{background:#fafafa}\n"
	".figure{display:block;margin:1.2em 0;text-align:center}\n"
	".figure svg{display:block;max-width:100%;height:auto;margin:0 auto;"
	"border:1px solid #e4e4e4}\n"
	".caption{display:block;font-size:.9em;color:#555;margin-top:.3em}\n"
	".missing{display:block;border:1px dashed #b00;color:#b00;padding:.5em;"
	"margin:1em 0}\n";

/* The whole of path, NUL-terminated, into *out (malloc'd; *len bytes). 0, or -1 with err
 * filled (errno's text). */
static int ht_slurp(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (fp == NULL) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb;

			if (cap >= HT_MAX_FILE) {
				snprintf(err, errlen, "%s: larger than %u MiB", path, HT_MAX_FILE >> 20);
				goto fail;
			}
			cap = cap ? 2 * cap : 65536;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, fp);

		n += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(fp);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
fail:
	fclose(fp);
	free(buf);
	return -1;
}

/* Markdown text into an HTML fragment (malloc'd), GitHub-flavoured with tables. NULL with
 * err filled. */
static char *ht_render(const char *md, size_t len, char *err, size_t errlen)
{
	cmark_parser *parser;
	cmark_syntax_extension *table;
	cmark_node *doc;
	char *html;

	cmark_gfm_core_extensions_ensure_registered();
	parser = cmark_parser_new(CMARK_OPT_DEFAULT);
	if (parser == NULL) {
		snprintf(err, errlen, "cmark-gfm: cannot make a parser");
		return NULL;
	}
	table = cmark_find_syntax_extension("table");
	if (table == NULL || !cmark_parser_attach_syntax_extension(parser, table)) {
		snprintf(err, errlen, "cmark-gfm: no table extension");
		cmark_parser_free(parser);
		return NULL;
	}
	cmark_parser_feed(parser, md, len);
	doc = cmark_parser_finish(parser);
	html = doc ? cmark_render_html(doc, CMARK_OPT_DEFAULT,
		cmark_parser_get_syntax_extensions(parser)) : NULL;
	if (html == NULL)
		snprintf(err, errlen, "cmark-gfm: rendering failed");
	if (doc)
		cmark_node_free(doc);
	cmark_parser_free(parser);
	return html;
}

/* n bytes of s as HTML text. */
static void ht_escape(FILE *fp, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		switch (s[i]) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default: fputc(s[i], fp);
		}
}

/* The page title: the markdown's first "# " heading, or a fixed one. */
static void ht_title(FILE *fp, const char *md)
{
	const char *t = strncmp(md, "# ", 2) == 0 ? md : strstr(md, "\n# ");

	if (t == NULL) {
		fputs("frontload report", fp);
		return;
	}
	t += t == md ? 2 : 3;
	ht_escape(fp, t, strcspn(t, "\r\n"));
}

/* A plot's name as the report writes it: a plain file name in DIR ending in ".svg". */
static int ht_svg_name(const char *s, size_t n)
{
	if (n < 5 || n > 200 || strncmp(s + n - 4, ".svg", 4) != 0 || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '.' || s[i] == '_' || s[i] == '-' || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 1;
}

/* svg (from its "<svg" on: the XML prolog and doctype dropped) with every id, and every
 * reference to one ("#id" in href and url()), prefixed by pre: two plots in one page
 * must not share gnuplot's ids (gpPt0, gnuplot_canvas, ...). */
static void ht_put_svg(FILE *fp, const char *svg, const char *pre)
{
	const char *s = strstr(svg, "<svg");

	for (; *s; s++) {
		fputc(*s, fp);
		if ((s[1] == '\'' || s[1] == '"') && s[0] == '=' && s >= svg + 3 &&
		    strncmp(s - 2, "id", 2) == 0 && (s[-3] == ' ' || s[-3] == '\t' ||
		    s[-3] == '\n')) {
			fputc(*++s, fp);
			fputs(pre, fp);
		} else if (s[0] == '=' && (s[1] == '\'' || s[1] == '"') && s[2] == '#' &&
			   s >= svg + 4 && strncmp(s - 4, "href", 4) == 0) {
			fputc(*++s, fp);
			fputc(*++s, fp);
			fputs(pre, fp);
		} else if (s[0] == '(' && s[1] == '#' && s >= svg + 3 &&
			   strncmp(s - 3, "url", 3) == 0) {
			fputc(*++s, fp);
			fputs(pre, fp);
		}
	}
}

/* One <img ...> tag the renderer wrote (tag, len bytes, src inside it): DIR/src inline
 * when it is one of the report's SVG plots, a visible note when it cannot be read; any
 * other image is left as it is. */
static void ht_image(FILE *fp, const char *dir, const char *tag, size_t len, int k)
{
	const char *src = tag + strlen("<img src=\""), *alt = strstr(tag, " alt=\"");
	size_t sn = strcspn(src, "\"");
	size_t an = alt && alt < tag + len ? strcspn(alt + 6, "\"") : 0;
	char path[4200], pre[32], err[512];
	char *svg = NULL;
	size_t svglen;

	if (sn < 4 || strncmp(src + sn - 4, ".svg", 4) != 0) {
		fwrite(tag, 1, len, fp);
		return;
	}
	if (!ht_svg_name(src, sn)) {
		fputs("<span class=\"missing\">plot ", fp);
		ht_escape(fp, src, sn);
		fputs(" not inlined: not a file name of the report directory</span>", fp);
		return;
	}
	snprintf(path, sizeof(path), "%s/%.*s", dir, (int)sn, src);
	if (ht_slurp(path, &svg, &svglen, err, sizeof(err)) != 0 || strstr(svg, "<svg") == NULL) {
		fputs("<span class=\"missing\">plot ", fp);
		ht_escape(fp, src, sn);
		fputs(" missing when this report was written (", fp);
		ht_escape(fp, svg ? "no <svg> element in it" : err, strlen(svg ?
			"no <svg> element in it" : err));
		fputs(")</span>", fp);
		free(svg);
		return;
	}
	snprintf(pre, sizeof(pre), "fl%d-", k);
	fputs("<span class=\"figure\">", fp);
	ht_put_svg(fp, svg, pre);
	if (an) {
		fputs("<span class=\"caption\">", fp);
		fwrite(alt + 6, 1, an, fp);  /* the renderer escaped it */
		fputs("</span>", fp);
	}
	fputs("</span>", fp);
	free(svg);
}

/* The rendered fragment with its SVG images inlined. */
static void ht_body(FILE *fp, const char *dir, const char *html)
{
	const char *s = html, *img;
	int k = 0;

	while ((img = strstr(s, "<img src=\"")) != NULL) {
		const char *end = strchr(img, '>');

		if (end == NULL)
			break;
		fwrite(s, 1, (size_t)(img - s), fp);
		ht_image(fp, dir, img, (size_t)(end + 1 - img), ++k);
		s = end + 1;
	}
	fputs(s, fp);
}

int fm_write_report_html(const char *dir, const char *generator, char *err, size_t errlen)
{
	char path[4200];
	char *md = NULL, *html;
	size_t len;
	struct fl_atomic_file af;

	snprintf(path, sizeof(path), "%s/summary.md", dir);
	if (ht_slurp(path, &md, &len, err, errlen) != 0)
		return -1;
	html = ht_render(md, len, err, errlen);
	if (html == NULL) {
		free(md);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/report.html", dir);
	if (fl_atomic_open(&af, path, 0644, 0, err, errlen) != 0) {
		free(html);
		free(md);
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"" FM_PROG " ", af.f);
	ht_escape(af.f, generator, strlen(generator));
	fputs("\">\n<title>", af.f);
	ht_title(af.f, md);
	fprintf(af.f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", ht_css);
	ht_body(af.f, dir, html);
	fputs("</body>\n</html>\n", af.f);
	free(html);
	free(md);
	return fl_atomic_commit(&af, 1, err, errlen);
}

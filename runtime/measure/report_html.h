/* report_html.h: report.html of a report directory (frontload-measure study and scale):
 * DIR/summary.md rendered with cmark-gfm into one self-contained HTML page, the SVG plots
 * it links inlined (report_html.c). */
#ifndef FL_REPORT_HTML_H
#define FL_REPORT_HTML_H

#include <stddef.h>

/* DIR/report.html from DIR/summary.md; generator: the subcommand ("study", "scale") named
 * in the page's generator tag. 0, or -1 with err filled. */
int fm_write_report_html(const char *dir, const char *generator, char *err, size_t errlen);

#endif

/* check.c: parses expanded variants with libclang, fails on errors, and measures structure.
 *
 * All variants of a pattern go into one translation unit (one parse per pattern instead of
 * one per variant). #line directives in the expanded text make diagnostics name the pattern
 * file; the real buffer line tells which variant it came from.
 */
#include <clang-c/Index.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "expand.h"
#include "pattern.h"
#include "util.h"

#define MAX_WARNINGS 5

/* Walk state for one function. */
struct walk {
	struct metrics *m;
	struct buf sig;      /* signature being built */
	int loop_depth;
};

static const char *const helper_names[] = {
	"fl_hmap_find", "fl_key_of", "fl_validate", "fl_rate_q16", "fl_log_bucket", "fl_age_s",
};

static void sig_add(struct walk *w, char c)
{
	/* Collapse runs so unrolled repeats (yields, arms) do not change the shape's signature. */
	if (w->sig.len && w->sig.p[w->sig.len - 1] == c)
		return;
	buf_putc(&w->sig, c);
}

static enum CXChildVisitResult count_visit(CXCursor c, CXCursor parent, CXClientData d)
{
	(void)c;
	(void)parent;
	(*(int *)d)++;
	return CXChildVisit_Continue;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data);

static void visit_children(CXCursor c, struct walk *w)
{
	clang_visitChildren(c, visit, w);
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
	struct walk *w = data;
	struct metrics *m = w->m;
	enum CXCursorKind k = clang_getCursorKind(c);
	(void)parent;

	if (clang_isStatement(k))
		m->stmts++;
	switch (k) {
	case CXCursor_IfStmt: {
		int n = 0;
		clang_visitChildren(c, count_visit, &n);
		m->ifs++;
		sig_add(w, 'I');
		if (n >= 3) {
			m->elses++;
			sig_add(w, 'E');
		}
		break;
	}
	case CXCursor_SwitchStmt:
		m->switches++;
		sig_add(w, 'S');
		break;
	case CXCursor_CaseStmt:
	case CXCursor_DefaultStmt:
		m->cases++;
		sig_add(w, 'C');
		break;
	case CXCursor_ForStmt:
	case CXCursor_WhileStmt:
	case CXCursor_DoStmt:
		m->loops++;
		sig_add(w, k == CXCursor_ForStmt ? 'F' : k == CXCursor_WhileStmt ? 'W' : 'D');
		sig_add(w, (char)('0' + (w->loop_depth + 1 > 9 ? 9 : w->loop_depth + 1)));
		w->loop_depth++;
		if (w->loop_depth > m->max_loop_depth)
			m->max_loop_depth = w->loop_depth;
		visit_children(c, w);
		w->loop_depth--;
		sig_add(w, ')');
		return CXChildVisit_Continue;
	case CXCursor_BreakStmt:
		m->breaks++;
		sig_add(w, 'B');
		break;
	case CXCursor_ContinueStmt:
		m->continues++;
		sig_add(w, 'K');
		break;
	case CXCursor_ReturnStmt:
		m->returns++;
		sig_add(w, 'R');
		break;
	case CXCursor_CallExpr: {
		m->calls++;
		CXString s = clang_getCursorSpelling(c);
		const char *name = clang_getCString(s);
		for (size_t i = 0; i < sizeof(helper_names) / sizeof(helper_names[0]); i++)
			if (name && !strcmp(name, helper_names[i])) {
				m->helper_calls++;
				sig_add(w, (char)('a' + i));
			}
		clang_disposeString(s);
		break;
	}
	default:
		break;
	}
	return CXChildVisit_Recurse;
}

/* Map a buffer line to the variant whose text holds it. */
static int variant_of_line(const unsigned *first_line, int n, unsigned line)
{
	int v = 0;

	while (v + 1 < n && first_line[v + 1] <= line)
		v++;
	return v;
}

struct fn_visit {
	const struct variant *vs;
	int n;
	const unsigned *first_line;
	struct metrics *m;
};

static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, CXClientData data)
{
	struct fn_visit *fv = data;
	(void)parent;

	if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c))
		return CXChildVisit_Continue;
	if (!clang_Location_isFromMainFile(clang_getCursorLocation(c)))
		return CXChildVisit_Continue;
	unsigned line;
	CXFile file;
	clang_getSpellingLocation(clang_getCursorLocation(c), &file, &line, NULL, NULL);
	int v = variant_of_line(fv->first_line, fv->n, line);
	struct walk w = {.m = &fv->m[v]};
	visit_children(c, &w);
	fv->m[v].signature = w.sig.p ? w.sig.p : xstrdup("");
	fv->m[v].lines = fv->vs[v].sk.lines;
	return CXChildVisit_Continue;
}

void check_pattern(const struct variant *vs, int nvariants, const struct gen_params *gp,
		   const char *templates_dir, struct metrics *m)
{
	const struct pattern *p = vs[0].p;
	struct buf src = {0};
	unsigned *first_line = xcalloc((size_t)nvariants, sizeof(*first_line));
	unsigned line = 1;
	int64_t *k = NULL;

	buf_puts(&src, "#include \"fl_extract.h\"\n");
	line++;
	for (int i = 0; i < nvariants; i++) {
		char name[64];
		k = xrealloc(k, ((size_t)vs[i].sk.nconsts + 1) * sizeof(*k));
		expand_draw(&vs[i], gp, 0, k);
		expand_symbol(&vs[i], 0, name, sizeof(name));
		first_line[i] = line;
		size_t before = src.len;
		expand_render(&vs[i], name, k, &src);
		for (size_t j = before; j < src.len; j++)
			line += src.p[j] == '\n';
	}
	free(k);

	struct buf inc = {0};
	buf_printf(&inc, "-I%s", templates_dir);
	const char *args[] = {inc.p, "-std=gnu11", "-Wall", "-Wextra", "-ferror-limit=5"};
	struct CXUnsavedFile uf = {"fl_check.c", src.p, (unsigned long)src.len};
	CXIndex idx = clang_createIndex(0, 0);
	CXTranslationUnit tu;
	enum CXErrorCode rc = clang_parseTranslationUnit2(idx, "fl_check.c", args,
							  (int)(sizeof(args) / sizeof(args[0])),
							  &uf, 1, CXTranslationUnit_None, &tu);
	if (rc != CXError_Success)
		fatal("%s: libclang could not parse the expanded pattern (error %d)", p->path, (int)rc);

	int warnings = 0;
	unsigned nd = clang_getNumDiagnostics(tu);
	for (unsigned i = 0; i < nd; i++) {
		CXDiagnostic d = clang_getDiagnostic(tu, i);
		enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
		if (sev < CXDiagnostic_Warning) {
			clang_disposeDiagnostic(d);
			continue;
		}
		CXSourceLocation loc = clang_getDiagnosticLocation(d);
		CXString pfile;
		unsigned pline, bline;
		CXFile bfile;
		clang_getPresumedLocation(loc, &pfile, &pline, NULL);
		clang_getSpellingLocation(loc, &bfile, &bline, NULL, NULL);
		CXString msg = clang_getDiagnosticSpelling(d);
		int v = variant_of_line(first_line, nvariants, bline);
		if (sev >= CXDiagnostic_Error) {
			CXString bn = clang_getFileName(bfile);
			const char *bname = clang_getCString(bn);
			int in_main = bname && !strcmp(bname, "fl_check.c");
			fatal("%s:%u: error in variant %d%s: %s", clang_getCString(pfile), pline,
			      in_main ? v : -1, in_main ? "" : " (in an included header)",
			      clang_getCString(msg));
		}
		if (warnings++ < MAX_WARNINGS)
			warn("%s:%u: variant %d: %s", clang_getCString(pfile), pline, v,
			     clang_getCString(msg));
		clang_disposeString(msg);
		clang_disposeString(pfile);
		clang_disposeDiagnostic(d);
	}
	if (warnings > MAX_WARNINGS)
		warn("%s: %d more warnings not shown", p->path, warnings - MAX_WARNINGS);

	struct fn_visit fv = {vs, nvariants, first_line, m};
	clang_visitChildren(clang_getTranslationUnitCursor(tu), visit_top, &fv);
	for (int i = 0; i < nvariants; i++)
		if (!m[i].signature)
			fatal("%s: variant %d: libclang found no function definition", p->path, i);

	clang_disposeTranslationUnit(tu);
	clang_disposeIndex(idx);
	buf_free(&inc);
	buf_free(&src);
	free(first_line);
}

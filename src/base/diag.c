// SPDX-License-Identifier: GPL-2.0-or-later
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "yamltree.h"

void kdiags_add(struct kdiags *d, const char *file, unsigned line, unsigned col, const char *fmt,
		...)
{
	va_list ap;
	va_start(ap, fmt);
	kdiags_vadd(d, file, line, col, fmt, ap);
	va_end(ap);
}

void kdiags_vadd(struct kdiags *d, const char *file, unsigned line, unsigned col, const char *fmt,
		 va_list ap)
{
	struct kdiag *v = realloc(d->v, (d->n + 1) * sizeof(*v));
	if (!v)
		return;
	d->v = v;
	struct strbuf sb = STRBUF_INIT;
	strbuf_vprintf(&sb, fmt, ap);
	char *msg = strbuf_steal(&sb);
	char *f = strdup(file);
	if (!msg || !f) {
		free(msg);
		free(f);
		return;
	}
	d->v[d->n++] = (struct kdiag){f, line, line ? (col ? col : 1) : 0, msg};
}

void kdiags_free(struct kdiags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

void kdiags_move(struct kdiags *to, struct kdiags *from)
{
	if (!from->n)
		return;
	struct kdiag *v = realloc(to->v, (to->n + from->n) * sizeof(*v));
	if (!v) {
		kdiags_free(from);
		return;
	}
	memcpy(v + to->n, from->v, from->n * sizeof(*v));
	to->v = v;
	to->n += from->n;
	free(from->v);
	from->v = NULL;
	from->n = 0;
}

void kdiag_format(const struct kdiag *d, struct strbuf *out)
{
	strbuf_put_escaped(out, d->file);
	if (d->line)
		strbuf_printf(out, ":%u:%u: error: ", d->line, d->col);
	else
		strbuf_puts(out, ": error: "); /* about the whole file: no position */
	strbuf_put_escaped(out, d->msg);
}

void kdiag_at(struct kdiag_file *f, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!f->prefix) {
		kdiags_vadd(f->diags, f->path, n->line, n->col, fmt, ap);
	} else {
		_cleanup_free_ char *msg = NULL;
		if (vasprintf(&msg, fmt, ap) < 0)
			msg = NULL;
		if (msg)
			kdiags_add(f->diags, f->path, n->line, n->col, "%s%s", f->prefix, msg);
		else
			f->oom = true;
	}
	va_end(ap);
	f->errors++;
}

char *kdiag_dup(struct kdiag_file *f, const char *s)
{
	char *d = strdup(s);
	if (!d)
		f->oom = true;
	return d;
}

void kdiags_report(const struct kdiags *d, struct strbuf *report)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < d->n; i++) {
		strbuf_reset(&sb);
		kdiag_format(&d->v[i], &sb);
		log_error("%s", strbuf_str(&sb));
		if (report)
			strbuf_printf(report, "%s\n", strbuf_str(&sb));
	}
}

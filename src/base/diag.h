/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Diagnostics of rule files: "FILE:LINE:COLUMN: error: MESSAGE", or
 * "FILE: error: MESSAGE" for one about the whole file (line 0). */
#ifndef KEVENT_DIAG_H
#define KEVENT_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct kdiag {
	char *file;
	unsigned line, col;
	char *msg;
};

struct kdiags {
	struct kdiag *v;
	size_t n;
};

void kdiags_add(struct kdiags *d, const char *file, unsigned line, unsigned col, const char *fmt,
		...) _printf_(5, 6);
void kdiags_vadd(struct kdiags *d, const char *file, unsigned line, unsigned col, const char *fmt,
		 va_list ap) _printf_(5, 0);
void kdiags_free(struct kdiags *d);
/* Moves every entry of from to the end of to. */
void kdiags_move(struct kdiags *to, struct kdiags *from);
/* Formats one entry, as the documented line (no trailing newline).  The
 * file name and the message, which may quote the file's text, are escaped
 * (strbuf_put_escaped()): a rule file cannot forge a line of its own. */
void kdiag_format(const struct kdiag *d, struct strbuf *out);
/* Logs each entry as an error and, with report, adds it there, a line
 * each (a reload's mistakes: said in the log and to who asked). */
void kdiags_report(const struct kdiags *d, struct strbuf *report);

struct ynode;

/* The mistakes of one configuration file (or of one of its sections):
 * where they go, how many, whether memory ran out, and the words each
 * message starts with ("alertmanager: "; NULL: none). */
struct kdiag_file {
	const char *path;
	struct kdiags *diags;
	size_t errors;
	bool oom;
	const char *prefix;
};

/* One mistake at node n's line and column, counted. */
void kdiag_at(struct kdiag_file *f, const struct ynode *n, const char *fmt, ...) _printf_(3, 4);
/* strdup(s), or NULL with f->oom set. */
char *kdiag_dup(struct kdiag_file *f, const char *s);

#endif

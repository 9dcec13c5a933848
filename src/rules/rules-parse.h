/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule file parser's state and the helpers its parts share
 * (rules-parse.c: rules; conddef.c: conditions).  Private to rules/.
 */
#ifndef KEVENT_RULES_PARSE_H
#define KEVENT_RULES_PARSE_H

#include <stdbool.h>

#include "diag.h"
#include "rules.h"
#include "shared.h"
#include "yamltree.h"

struct krules_parser {
	const char *path;
	struct kdiags *diags;
	unsigned errors;
	bool oom;
	/* the file's lists so far, by content, for rules that repeat them */
	struct kshared shared;
};

/* An error at n, counted. */
void krules_perr(struct krules_parser *p, const struct ynode *n, const char *fmt, ...)
	_printf_(3, 4);
/* A non-null scalar, or an error saying what the key wants (NULL). */
const char *krules_want_scalar(struct krules_parser *p, const struct ynode *n, const char *key);
/* true/false, yes/no, on/off: 0, or -EINVAL. */
int krules_parse_bool(const char *s, bool *out);
/* A rule's match: mapping n into r. */
void krules_parse_match(struct krules_parser *p, const struct ynode *n, struct krule *r);
/* A match: mapping n as a match-only rule of f (a condition's set or
 * clear, r->cond), its index the condition's. */
void krules_parse_matcher(struct krules_parser *p, const struct ynode *n, struct kfile *f,
			  struct krule *r, unsigned index);
/* The file's conditions: list (conddef.c). */
void krules_parse_conditions(struct krules_parser *p, const struct ynode *list, struct kfile *f);
/* A rule's share: (share.c). */
void krules_parse_share(struct krules_parser *p, const struct ynode *n, struct krule_extra *x);
/* Frees what a condition holds (rule.c). */
void kcond_def_release(struct kcond_def *c);

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/* The conditions: list of a rule file (keventd.rules(5), CONDITIONS). */
#include <errno.h>
#include <string.h>

#include "duration.h"
#include "rules-parse.h"
#include "suggest.h"
#include "util.h"

/* clang-format off */
static const char *const severities[] = {
	[KCOND_INFO] = "info",
	[KCOND_WARNING] = "warning",
	[KCOND_CRITICAL] = "critical",
};
/* clang-format on */

const char *kcond_severity_name(enum kcond_severity s)
{
	return (unsigned)s < ARRAY_SIZE(severities) ? severities[s] : "?";
}

int kcond_severity_from_name(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(severities); i++)
		if (strcmp(s, severities[i]) == 0)
			return (int)i;
	return -1;
}

const struct kcond_def *kcond_def_of(const struct krule *r)
{
	if (!r->cond || !r->file || r->index >= r->file->n_conds)
		return NULL;
	return &r->file->conds[r->index];
}

/* A condition's name: what ack and the outputs name it by. */
static bool name_valid(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n <= KCOND_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

enum cond_key { C_NAME, C_SET, C_CLEAR, C_SEVERITY, C_REMIND, C_EXPIRE, C_KEY, C_MAX };
static const char *const cond_keys[C_MAX] = {
	"name", "set", "clear", "severity", "remind", "expire", "key",
};

static void parse_remind(struct krules_parser *p, const struct ynode *n, struct kcond_def *c)
{
	const char *s = krules_want_scalar(p, n, "remind"), *why = NULL;
	if (!s)
		return;
	if (strcmp(s, "none") == 0) {
		c->remind = KCOND_REMIND_NONE;
	} else if (strcmp(s, "daily") == 0) {
		c->remind = KCOND_REMIND_DAILY;
	} else if (strcmp(s, "diminishing") == 0) {
		c->remind = KCOND_REMIND_DIMINISHING;
	} else if (strncmp(s, "every ", 6) == 0) {
		if (duration_parse(s + 6, &c->remind_ms, &why) < 0)
			krules_perr(p, n, "bad remind \"%s\": %s", s, why);
		else if (c->remind_ms < 1000)
			krules_perr(p, n, "bad remind \"%s\": at least every 1s", s);
		else
			c->remind = KCOND_REMIND_EVERY;
	} else {
		krules_perr(p, n,
			    "'remind' must be none, daily, diminishing or every DURATION, not "
			    "\"%s\"",
			    s);
	}
}

/* A condition's own events are not conditions' input (they would feed
 * themselves): say so rather than never set. */
static void check_not_conditions(struct krules_parser *p, const struct ynode *n,
				 const struct krule *r, const char *what)
{
	for (size_t i = 0; i < r->source.n; i++)
		if (!r->source.v[i].negate && strcmp(r->source.v[i].text, "condition") == 0) {
			krules_perr(p, n,
				    "a condition's %s cannot match the events of source "
				    "'condition': conditions are not set by conditions",
				    what);
			return;
		}
}

static void parse_condition(struct krules_parser *p, const struct ynode *n, struct kfile *f,
			    struct kcond_def *c)
{
	const struct ynode *at[C_MAX] = {NULL};
	unsigned index = (unsigned)f->n_conds;
	*c = (struct kcond_def){
		.file = f, .line = n->line, .col = n->col, .severity = KCOND_WARNING};
	if (n->kind != YNODE_MAP) {
		krules_perr(p, n, "a condition must be a mapping with 'name' and 'set', not %s",
			    ynode_kind_name(n));
		return;
	}
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i];
		size_t which = C_MAX;
		for (size_t j = 0; j < C_MAX && k->kind == YNODE_SCALAR; j++)
			if (strcmp(k->value, cond_keys[j]) == 0)
				which = j;
		const char *near;
		if (which == C_MAX && k->kind == YNODE_SCALAR &&
		    (near = suggest_word(k->value, cond_keys, C_MAX))) {
			krules_perr(p, k, "unknown key '%s' in condition: did you mean %s?",
				    k->value, near);
			continue;
		}
		if (which == C_MAX) {
			krules_perr(p, k,
				    "unknown key '%s' in condition (expected name, set, clear, "
				    "severity, remind, expire or key)",
				    k->kind == YNODE_SCALAR ? k->value : "?");
			continue;
		}
		if (at[which]) {
			krules_perr(p, k, "key '%s' given twice", cond_keys[which]);
			continue;
		}
		at[which] = n->kids[i + 1];
	}
	const char *s, *why = NULL;
	if (!at[C_NAME]) {
		krules_perr(p, n, "a condition needs a 'name'");
	} else if ((s = krules_want_scalar(p, at[C_NAME], "name"))) {
		if (!name_valid(s))
			krules_perr(
				p, at[C_NAME],
				"a condition's name is 1-%d characters of [a-z0-9-], not \"%s\"",
				KCOND_NAME_MAX, s);
		else if (!(c->name = strdup(s)))
			p->oom = true;
	}
	if (!at[C_SET])
		krules_perr(p, n, "a condition needs 'set': the match: of the events that set it");
	else
		krules_parse_matcher(p, at[C_SET], f, &c->set, index);
	if (at[C_SET])
		check_not_conditions(p, at[C_SET], &c->set, "set");
	if (at[C_CLEAR]) {
		krules_parse_matcher(p, at[C_CLEAR], f, &c->clear, index);
		check_not_conditions(p, at[C_CLEAR], &c->clear, "clear");
		c->has_clear = true;
	}
	if (at[C_SEVERITY] && (s = krules_want_scalar(p, at[C_SEVERITY], "severity"))) {
		int sev = kcond_severity_from_name(s);
		if (sev < 0)
			krules_perr(p, at[C_SEVERITY],
				    "'severity' must be info, warning or critical, not \"%s\"", s);
		else
			c->severity = (enum kcond_severity)sev;
	}
	if (at[C_REMIND])
		parse_remind(p, at[C_REMIND], c);
	if (at[C_EXPIRE] && (s = krules_want_scalar(p, at[C_EXPIRE], "expire"))) {
		if (duration_parse(s, &c->expire_ms, &why) < 0)
			krules_perr(p, at[C_EXPIRE], "bad expire \"%s\": %s", s, why);
		else if (c->expire_ms < 1000)
			krules_perr(p, at[C_EXPIRE], "bad expire \"%s\": at least 1s", s);
	}
	if (at[C_KEY] && (s = krules_want_scalar(p, at[C_KEY], "key"))) {
		if (strcmp(s, "object") == 0)
			;
		else if (strncmp(s, "payload.", 8) == 0 && kevent_prop_key_valid(s + 8))
			c->key_prop = strdup(s + 8), p->oom |= !c->key_prop;
		else
			krules_perr(p, at[C_KEY],
				    "'key' must be object or payload.NAME, not \"%s\"", s);
	}
}

/* The node of a condition's name, for pointing at duplicates. */
static const struct ynode *name_node(const struct ynode *cond)
{
	for (size_t i = 0; cond->kind == YNODE_MAP && i + 1 < cond->n_kids; i += 2)
		if (cond->kids[i]->kind == YNODE_SCALAR &&
		    strcmp(cond->kids[i]->value, "name") == 0)
			return cond->kids[i + 1];
	return cond;
}

void krules_parse_conditions(struct krules_parser *p, const struct ynode *list, struct kfile *f)
{
	if (ynode_is_null(list))
		return;
	if (list->kind != YNODE_SEQ) {
		krules_perr(p, list, "'conditions' must be a list of conditions, not %s",
			    ynode_kind_name(list));
		return;
	}
	if (!list->n_kids)
		return;
	f->conds = calloc(list->n_kids, sizeof(*f->conds));
	if (!f->conds) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < list->n_kids && !p->oom; i++) {
		struct kcond_def *c = &f->conds[f->n_conds];
		parse_condition(p, list->kids[i], f, c);
		f->n_conds++;
		for (size_t j = 0; c->name && j + 1 < f->n_conds; j++)
			if (f->conds[j].name && strcmp(f->conds[j].name, c->name) == 0) {
				krules_perr(
					p, name_node(list->kids[i]),
					"duplicate condition name \"%s\" (first used at line %u)",
					c->name, f->conds[j].line);
				break;
			}
	}
}

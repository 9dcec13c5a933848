// SPDX-License-Identifier: GPL-2.0-or-later
/* The parts of the rule file parser that a rule and a condition share:
 * match: mappings and the helpers of every key (rules-parse.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rules-parse.h"
#include "suggest.h"
#include "util.h"

void krules_perr(struct krules_parser *p, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kdiags_vadd(p->diags, n->file ? n->file : p->path, n->line, n->col, fmt, ap);
	va_end(ap);
	p->errors++;
}

static void note_rc(struct krules_parser *p, int rc)
{
	if (rc == -ENOMEM)
		p->oom = true;
}

/* A non-null scalar, or an error saying what the key wants. */
const char *krules_want_scalar(struct krules_parser *p, const struct ynode *n, const char *key)
{
	if (n->kind != YNODE_SCALAR || ynode_is_null(n)) {
		krules_perr(p, n, "'%s' must be a value, not %s", key, ynode_kind_name(n));
		return NULL;
	}
	return n->value;
}

/* A value or a list of values, each added to l after check(). */
static void parse_values(struct krules_parser *p, const struct ynode *n, const char *key,
			 struct kpattern_list *l, const char *(*check)(const struct kpattern *v))
{
	const struct ynode *const *items = (const struct ynode *const *)&n;
	size_t count = 1;
	if (n->kind == YNODE_SEQ) {
		items = (const struct ynode *const *)n->kids;
		count = n->n_kids;
		if (count == 0) {
			krules_perr(p, n, "'%s' must not be an empty list", key);
			return;
		}
	}
	for (size_t i = 0; i < count; i++) {
		const struct ynode *it = items[i];
		if (it->kind != YNODE_SCALAR || ynode_is_null(it)) {
			krules_perr(p, it, "'%s' must be a value or a list of values, not %s", key,
				    ynode_kind_name(it));
			continue;
		}
		const char *why = NULL;
		int rc = kpattern_list_add(l, it->value, &why);
		if (rc == -EINVAL) {
			krules_perr(p, it, "bad '%s' value \"%s\": %s", key, it->value, why);
			continue;
		}
		if (rc < 0) {
			note_rc(p, rc);
			return;
		}
		why = check ? check(&l->v[l->n - 1]) : NULL;
		if (why)
			krules_perr(p, it, "bad '%s' value \"%s\": %s", key, it->value, why);
	}
}

static const char *check_type(const struct kpattern *v)
{
	if (v->glob || kevent_type_from_name(v->text) < 0 ||
	    (v->text[0] >= '0' && v->text[0] <= '9'))
		return "not an event type (general, storage, power, fs or hotplug)";
	return NULL;
}

static const char *check_source(const struct kpattern *v)
{
	static char why[256];
	if (!v->glob && kevent_source_from_name(v->text) >= 0)
		return NULL;
	if (!why[0]) /* from the sources' list, once */
		snprintf(why, sizeof(why), "not a source (%s)", kevent_source_names());
	return why;
}

/* How long a signal is, for messages: "1-64". */
#define SIGNAL_LENGTHS "1-" STRINGIFY(KEVENT_SIGNAL_MAX)

static const char *check_signal(const struct kpattern *v)
{
	if (!v->glob && !kevent_signal_valid(v->text))
		return "a signal is " SIGNAL_LENGTHS
		       " characters of [A-Za-z0-9_.:-], so this never matches";
	return NULL;
}

/* Parses "OP NUMBER" or "A..B"; returns 1 if it is a number test, 0 if a
 * glob, -EINVAL if it starts like a number test but is not one. */
static int parse_number_test(const char *s, struct kpayload_test *t, const char **why)
{
	static const struct {
		const char *op;
		enum kcmp_op v;
	} ops[] = {
		{">=", KCMP_GE}, {"<=", KCMP_LE}, {"==", KCMP_EQ}, {">", KCMP_GT}, {"<", KCMP_LT}};
	while (*s == ' ')
		s++;
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		size_t l = strlen(ops[i].op);
		if (strncmp(s, ops[i].op, l) != 0)
			continue;
		if (parse_int64(s + l, &t->a) < 0) {
			*why = "a number test is OP NUMBER with OP one of >, >=, <, <=, == and an "
			       "integer";
			return -EINVAL;
		}
		t->kind = KPT_CMP;
		t->op = ops[i].v;
		return 1;
	}
	const char *dots = strstr(s, "..");
	if (!dots)
		return 0;
	char lo[32];
	size_t ll = (size_t)(dots - s);
	bool numeric_start = ll > 0 && ll < sizeof(lo) && strspn(s, "-+0123456789 ") == ll;
	if (!numeric_start)
		return 0;
	memcpy(lo, s, ll);
	lo[ll] = '\0';
	if (parse_int64(lo, &t->a) < 0 || parse_int64(dots + 2, &t->b) < 0) {
		*why = "a range is MIN..MAX with two integers";
		return -EINVAL;
	}
	if (t->a > t->b) {
		*why = "a range's MIN is greater than its MAX";
		return -EINVAL;
	}
	t->kind = KPT_RANGE;
	return 1;
}

/* A number test means nothing inside a list of globs: say so rather than
 * compare the text literally. */
static const char *check_not_number_test(const struct kpattern *v)
{
	struct kpayload_test t = {0};
	const char *why = NULL;
	if (!v->negate && parse_number_test(v->text, &t, &why) != 0)
		return "a number test must be the only value, not part of a list";
	return NULL;
}

static void parse_payload(struct krules_parser *p, const struct ynode *n, struct krule *r)
{
	if (ynode_is_null(n))
		return;
	if (n->kind != YNODE_MAP) {
		krules_perr(p, n, "'payload' must be a mapping of property names to tests, not %s",
			    ynode_kind_name(n));
		return;
	}
	r->payload = calloc(n->n_kids / 2 + 1, sizeof(*r->payload));
	if (!r->payload) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		if (k->kind != YNODE_SCALAR || !kevent_prop_key_valid(k->value)) {
			krules_perr(p, k, "a payload property name is [A-Za-z0-9_.-]+");
			continue;
		}
		bool dup = false;
		for (size_t j = 0; j < r->n_payload && !dup; j++)
			dup = strcasecmp(r->payload[j].key, k->value) == 0;
		if (dup) {
			krules_perr(p, k, "payload property '%s' is tested twice", k->value);
			continue;
		}
		struct kpayload_test t = {0};
		const char *why = NULL;
		int num = 0;
		if (v->kind == YNODE_SCALAR && !ynode_is_null(v)) {
			num = parse_number_test(v->value, &t, &why);
			if (num < 0) {
				krules_perr(p, v, "bad test for payload property '%s': %s",
					    k->value, why);
				continue;
			}
		}
		if (num == 0) {
			t.kind = KPT_GLOB;
			unsigned before = p->errors;
			parse_values(p, v, k->value, &t.globs, check_not_number_test);
			if (p->errors != before || p->oom) {
				kpattern_list_free(&t.globs);
				continue;
			}
		}
		t.key = strdup(k->value);
		t.text = strdup(v->kind == YNODE_SCALAR ? v->value : "(list)");
		if (!t.key || !t.text) {
			free(t.key);
			free(t.text);
			kpattern_list_free(&t.globs);
			p->oom = true;
			return;
		}
		r->payload[r->n_payload++] = t;
	}
}

void krules_parse_match(struct krules_parser *p, const struct ynode *n, struct krule *r)
{
	if (ynode_is_null(n))
		return;
	if (n->kind != YNODE_MAP) {
		krules_perr(p, n, "'match' must be a mapping, not %s", ynode_kind_name(n));
		return;
	}
	bool seen[5] = {false};
	static const char *const keys[] = {"type", "object", "signal", "payload", "source"};
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		size_t which = ARRAY_SIZE(keys);
		if (k->kind == YNODE_SCALAR)
			for (size_t j = 0; j < ARRAY_SIZE(keys); j++)
				if (strcmp(k->value, keys[j]) == 0)
					which = j;
		const char *near;
		if (which == ARRAY_SIZE(keys) && k->kind == YNODE_SCALAR &&
		    (near = suggest_word(k->value, keys, ARRAY_SIZE(keys)))) {
			krules_perr(p, k, "unknown key '%s' in match: did you mean %s?", k->value,
				    near);
			continue;
		}
		if (which == ARRAY_SIZE(keys)) {
			krules_perr(p, k,
				    "unknown key '%s' in match (expected type, object, signal, "
				    "payload or "
				    "source)",
				    k->kind == YNODE_SCALAR ? k->value : "?");
			continue;
		}
		if (seen[which]) {
			krules_perr(p, k, "key '%s' given twice", keys[which]);
			continue;
		}
		seen[which] = true;
		switch (which) {
		case 0:
			parse_values(p, v, "type", &r->type, check_type);
			break;
		case 1:
			parse_values(p, v, "object", &r->object, NULL);
			break;
		case 2:
			parse_values(p, v, "signal", &r->signal, check_signal);
			break;
		case 3:
			parse_payload(p, v, r);
			break;
		case 4:
			parse_values(p, v, "source", &r->source, check_source);
			break;
		}
	}
}

void krules_parse_matcher(struct krules_parser *p, const struct ynode *n, struct kfile *f,
			  struct krule *r, unsigned index)
{
	*r = (struct krule){
		.file = f, .line = n->line, .col = n->col, .index = index, .cond = true};
	if (n->kind != YNODE_MAP) {
		krules_perr(p, n, "a condition's set and clear are match: mappings, not %s",
			    ynode_kind_name(n));
		return;
	}
	krules_parse_match(p, n, r);
	r->type_mask = r->type.n ? 0 : (uint8_t)((1u << KEVENT_NTYPES) - 1);
	for (int t = 0; t < KEVENT_NTYPES && r->type.n; t++)
		if (kpattern_list_match(&r->type, kevent_type_name((enum kevent_type)t)))
			r->type_mask |= (uint8_t)(1u << t);
}

int krules_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
					  "YES",  "on",	  "On",	  "ON"};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No",
					 "NO",	  "off",   "Off",   "OFF"};
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

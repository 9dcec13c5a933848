// SPDX-License-Identifier: GPL-2.0-or-later
/* Matching an event against one rule, and against a whole ruleset. */
#include <string.h>

#include "index.h"
#include "ruleset.h"

static void list_text(const struct kpattern_list *l, struct strbuf *sb)
{
	if (l->n > 1)
		strbuf_putc(sb, '[');
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			strbuf_puts(sb, ", ");
		strbuf_puts(sb, l->v[i].negate ? "!" : "");
		strbuf_puts(sb, l->v[i].text);
	}
	if (l->n > 1)
		strbuf_putc(sb, ']');
}

static bool list_check(const char *key, const struct kpattern_list *l, const char *value,
		       struct strbuf *why)
{
	if (!l->n || kpattern_list_match(l, value))
		return true;
	if (why) {
		strbuf_printf(why, "%s ", key);
		strbuf_quote(why, value);
		strbuf_puts(why, " does not match ");
		list_text(l, why);
	}
	return false;
}

static bool cmp(enum kcmp_op op, int64_t v, int64_t a)
{
	switch (op) {
	case KCMP_GT:
		return v > a;
	case KCMP_GE:
		return v >= a;
	case KCMP_LT:
		return v < a;
	case KCMP_LE:
		return v <= a;
	case KCMP_EQ:
		return v == a;
	}
	return false;
}

static bool payload_check(const struct kpayload_test *t, const struct kevent *ev,
			  struct strbuf *why)
{
	const char *v = kevent_prop(ev, t->key);
	if (t->kind == KPT_GLOB) {
		if (kpattern_list_match(&t->globs, v))
			return true;
		if (why && !v) {
			strbuf_printf(why, "payload property %s is missing (wanted ", t->key);
			list_text(&t->globs, why);
			strbuf_putc(why, ')');
		} else if (why) {
			strbuf_printf(why, "payload property %s=", t->key);
			strbuf_quote(why, v);
			strbuf_puts(why, " does not match ");
			list_text(&t->globs, why);
		}
		return false;
	}
	int64_t n;
	if (!v) {
		if (why)
			strbuf_printf(why, "payload property %s is missing (wanted %s)", t->key,
				      t->text);
		return false;
	}
	if (parse_int64(v, &n) < 0) {
		if (why) {
			strbuf_printf(why, "payload property %s=", t->key);
			strbuf_quote(why, v);
			strbuf_printf(why, " is not a number (wanted %s)", t->text);
		}
		return false;
	}
	bool ok = t->kind == KPT_RANGE ? (n >= t->a && n <= t->b) : cmp(t->op, n, t->a);
	if (!ok && why)
		strbuf_printf(why, "payload property %s=%s is not %s", t->key, v, t->text);
	return ok;
}

bool krule_match(const struct krule *r, const struct kevent *ev, struct strbuf *why)
{
	if (r->disabled) {
		if (why)
			strbuf_puts(why, "the rule is switched off (enabled: false)");
		return false;
	}
	if (r->refused) {
		if (why)
			strbuf_puts(why,
				    "the rule was not loaded: 'transient: true' needs systemd");
		return false;
	}
	if (!(r->type_mask & (1u << ev->type))) {
		if (why) {
			strbuf_printf(why, "type \"%s\" does not match ",
				      kevent_type_name(ev->type));
			list_text(&r->type, why);
		}
		return false;
	}
	if (ev->source == KEVENT_SOURCE_MQTT && !r->source.n) {
		/* another machine's events are for rules written for them */
		if (why)
			strbuf_puts(why, "source \"mqtt\" needs a rule with source: mqtt");
		return false;
	}
	if (!list_check("source", &r->source, kevent_source_name(ev->source), why) ||
	    !list_check("signal", &r->signal, ev->signal, why) ||
	    !list_check("object", &r->object, ev->object, why))
		return false;
	for (size_t i = 0; i < r->n_payload; i++)
		if (!payload_check(&r->payload[i], ev, why))
			return false;
	return true;
}

struct cand {
	const uint32_t *v;
	size_t n, i;
};

static void add_bucket(struct cand *c, size_t *k, const struct kruleset *rs, uint8_t type,
		       const char *signal, const char *object)
{
	const struct kbucket *b = kindex_find(rs, type, signal, object);
	if (b)
		c[(*k)++] = (struct cand){kbucket_rules(b), b->n, 0};
}

/* The rules keyed on a start of the object ("/a", "/a/b", ... of "/a/b/c"),
 * at the lengths some key has: one pass of the hash over the object. */
static void add_prefix_buckets(struct cand *c, size_t *k, const struct kruleset *rs, uint8_t t,
			       const char *object)
{
	uint64_t h = kindex_prefix_start(t);
	for (size_t i = 0; object[i] && i < rs->prefix_len_max; i++) {
		h = kindex_prefix_step(h, object[i]);
		if (!kindex_prefix_len(rs, i + 1))
			continue;
		const struct kbucket *b = kindex_prefix_find(rs, h, t, object, i + 1);
		if (b)
			c[(*k)++] = (struct cand){kbucket_rules(b), b->n, 0};
	}
}

size_t kruleset_match(const struct kruleset *rs, const struct kevent *ev, kmatch_fn cb,
		      void *userdata)
{
	/* Candidates: the rules keyed on this signal and object, on the signal
	 * alone, on the object alone, on a start of the object, and those
	 * keyed on nothing. */
	struct cand c[4 + KINDEX_PREFIX_LENS];
	size_t k = 0, matches = 0;
	uint8_t t = (uint8_t)ev->type;
	add_bucket(c, &k, rs, t, ev->signal, ev->object);
	add_bucket(c, &k, rs, t, ev->signal, NULL);
	add_bucket(c, &k, rs, t, NULL, ev->object);
	if (rs->has_prefix_keys)
		add_prefix_buckets(c, &k, rs, t, ev->object);
	if (rs->n_generic[t])
		c[k++] = (struct cand){rs->generic[t], rs->n_generic[t], 0};

	/* Merge the ascending lists, so rule order holds.  A rule keyed on two
	 * starts of the object comes up twice, one right after the other. */
	uint32_t last = UINT32_MAX;
	for (;;) {
		size_t best = k;
		for (size_t j = 0; j < k; j++)
			if (c[j].i < c[j].n && (best == k || c[j].v[c[j].i] < c[best].v[c[best].i]))
				best = j;
		if (best == k)
			break;
		uint32_t pos = c[best].v[c[best].i++];
		if (pos == last)
			continue;
		last = pos;
		const struct krule *r = rs->rules[pos];
		if (!krule_match(r, ev, NULL))
			continue;
		matches++;
		if (!cb(r, userdata) || r->last)
			break;
	}
	return matches;
}

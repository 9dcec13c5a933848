// SPDX-License-Identifier: GPL-2.0-or-later
#include "pattern.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

const char *kpattern_check(const char *t)
{
	for (const char *p = t; *p; p++) {
		if (*p == '\\') {
			if (!p[1])
				return "glob ends with a lone backslash";
			p++;
		} else if (*p == '[') {
			const char *q = p + 1;
			if (*q == '!' || *q == '^')
				q++;
			if (*q == ']')
				q++;
			while (*q && *q != ']')
				q++;
			if (!*q)
				return "glob has '[' without a closing ']'";
			p = q;
		}
	}
	return NULL;
}

int kpattern_list_add(struct kpattern_list *l, const char *value, const char **why)
{
	bool negate = value[0] == '!';
	const char *text = value + negate;
	if (!*text) {
		*why = negate ? "'!' must be followed by a value" : "empty value";
		return -EINVAL;
	}
	const char *bad = kpattern_check(text);
	if (bad) {
		*why = bad;
		return -EINVAL;
	}
	struct kpattern p = {.negate = negate,
			     .glob = strpbrk(text, "*?[\\") != NULL,
			     .prefix = (uint32_t)strcspn(text, "*?[\\")};
	size_t len = strlen(text) + 1;
	if (!l->n) {
		/* most lists hold one value: it and its text in one allocation
		 * (10,000 rules are half a megabyte smaller) */
		struct kpattern *v = malloc(sizeof(*v) + len);
		if (!v)
			return -ENOMEM;
		p.text = memcpy(v + 1, text, len);
		v[0] = p;
		l->v = v;
		l->n = 1;
		return 0;
	}
	struct kpattern *v = malloc((l->n + 1) * sizeof(*v));
	p.text = strdup(text);
	char *first = l->n == 1 ? strdup(l->v[0].text) : NULL;
	if (!v || !p.text || (l->n == 1 && !first)) {
		free(v);
		free(p.text);
		free(first);
		return -ENOMEM;
	}
	memcpy(v, l->v, l->n * sizeof(*v));
	if (first)
		v[0].text = first; /* it was inline: now on its own */
	free(l->v);
	l->v = v;
	l->v[l->n++] = p;
	return 0;
}

bool kpattern_match_one(const struct kpattern *p, const char *s)
{
	if (!s)
		return false;
	if (!p->glob)
		return strcmp(p->text, s) == 0;
	/* most globs fail on their literal start: check it before fnmatch */
	return strncmp(p->text, s, p->prefix) == 0 && fnmatch(p->text, s, 0) == 0;
}

bool kpattern_list_match(const struct kpattern_list *l, const char *s)
{
	bool have_positive = false, positive_hit = false;
	for (size_t i = 0; i < l->n; i++) {
		const struct kpattern *p = &l->v[i];
		bool hit = kpattern_match_one(p, s);
		if (p->negate) {
			if (hit)
				return false;
		} else {
			have_positive = true;
			positive_hit |= hit;
		}
	}
	return !have_positive || positive_hit;
}

void kpattern_list_free(struct kpattern_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].text != (char *)(l->v + 1)) /* not the inline text of one value */
			free(l->v[i].text);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

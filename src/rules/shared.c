// SPDX-License-Identifier: GPL-2.0-or-later
/* A rule file's lists by content, to hold each once (shared.h). */
#include "shared.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct kshared_slot {
	uint64_t h;
	void *v;  /* a struct kpattern array, or an argv; NULL: free */
	size_t n; /* the list's length; 0 for an argv */
};

static uint64_t mix(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull; /* the end of a value: no text has 0xff alone */
}

static bool same_list(const struct kshared_slot *sl, const struct kpattern_list *l)
{
	const struct kpattern *v = sl->v;
	if (sl->n != l->n)
		return false;
	for (size_t i = 0; i < l->n; i++)
		if (v[i].negate != l->v[i].negate || strcmp(v[i].text, l->v[i].text) != 0)
			return false;
	return true;
}

static bool same_argv(const struct kshared_slot *sl, char **argv)
{
	char **a = sl->v;
	if (sl->n)
		return false;
	for (; *a && *argv; a++, argv++)
		if (strcmp(*a, *argv) != 0)
			return false;
	return !*a && !*argv;
}

static int grow(struct kshared *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	struct kshared_slot *v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->v[i].v)
			continue;
		size_t j = s->v[i].h & (cap - 1);
		while (v[j].v)
			j = (j + 1) & (cap - 1);
		v[j] = s->v[i];
	}
	free(s->v);
	s->v = v;
	s->cap = cap;
	return 0;
}

/* The slot of an equal entry (*found true), or the free one for it. */
static struct kshared_slot *lookup(struct kshared *s, uint64_t h, const struct kpattern_list *l,
				   char **argv, bool *found)
{
	for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		struct kshared_slot *sl = &s->v[i];
		*found = sl->v && sl->h == h && (l ? same_list(sl, l) : same_argv(sl, argv));
		if (!sl->v || *found)
			return sl;
	}
}

static int find_or_add(struct kshared *s, uint64_t h, const struct kpattern_list *l, char **argv,
		       void **found)
{
	if ((s->n + 1) * 2 > s->cap && grow(s) < 0)
		return -ENOMEM;
	bool hit;
	struct kshared_slot *sl = lookup(s, h, l, argv, &hit);
	if (hit) {
		*found = sl->v;
		return 1;
	}
	*sl = (struct kshared_slot){h, l ? (void *)l->v : (void *)argv, l ? l->n : 0};
	s->n++;
	return 0;
}

int kshared_list(struct kshared *s, const struct kpattern_list *l, struct kpattern **found)
{
	uint64_t h = 1469598103934665603ull ^ l->n;
	for (size_t i = 0; i < l->n; i++)
		h = mix((h ^ l->v[i].negate) * 1099511628211ull, l->v[i].text);
	void *v = NULL;
	int rc = find_or_add(s, h, l, NULL, &v);
	*found = v;
	return rc;
}

int kshared_argv(struct kshared *s, char **argv, char ***found)
{
	uint64_t h = 1469598103934665603ull;
	for (char **a = argv; *a; a++)
		h = mix(h, *a);
	void *v = NULL;
	int rc = find_or_add(s, h, NULL, argv, &v);
	*found = v;
	return rc;
}

void kshared_release(struct kshared *s)
{
	free(s->v);
	*s = (struct kshared){0};
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Value lists of a rule's match keys: each value is a literal or a glob,
 * optionally negated with a leading '!'.  A list matches a string when
 * (it has no positive value, or one of them matches) and no negated value
 * matches.  An absent string (a missing payload property) matches no
 * positive value and no negated one.
 */
#ifndef KEVENT_PATTERN_H
#define KEVENT_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kpattern {
	char *text;	 /* without the '!' */
	uint32_t prefix; /* length of the literal text before the first glob character
			  * (a rule file is at most 1 MiB) */
	bool negate;
	bool glob; /* has * ? or [ */
};

struct kpattern_list {
	struct kpattern *v;
	size_t n;
};

/* Checks a glob: brackets closed, no trailing backslash.  NULL if fine,
 * else a static reason. */
const char *kpattern_check(const char *text);
/* Appends one value; returns 0, -ENOMEM, or -EINVAL with *why. */
int kpattern_list_add(struct kpattern_list *l, const char *value, const char **why);
bool kpattern_list_match(const struct kpattern_list *l, const char *s);
void kpattern_list_free(struct kpattern_list *l);
/* The first value of the list that decided a failed match, for explanations. */
bool kpattern_match_one(const struct kpattern *p, const char *s);

#endif

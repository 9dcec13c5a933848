/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ruleset's index, private to ruleset.c and match.c. */
#ifndef KEVENT_INDEX_H
#define KEVENT_INDEX_H

#include "ruleset.h"

/*
 * Rules of one key, by ascending position.  A key is a type with a literal
 * signal, a literal object, or both; NULL stands for "any" (not indexed on
 * that part).  Rules that name neither literally are in the per-type
 * generic lists instead.
 */
struct kbucket {
	const char *signal; /* point into a rule's patterns */
	const char *object;
	uint32_t *v; /* inline while it has at most two rules, the common case;
		      * beyond, allocated with room for a power of two */
	uint32_t n;
	uint32_t inline_v[2];
	uint8_t type;
};

/* The bucket for the key, or NULL. */
const struct kbucket *kindex_find(const struct kruleset *rs, uint8_t type, const char *signal,
				  const char *object);

#endif

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
	bool used;
	uint8_t type;
	const char *signal; /* point into a rule's patterns */
	const char *object;
	uint32_t *v;
	size_t n, cap;
};

/* The bucket for the key, or the unused slot where it would go. */
struct kbucket *kindex_slot(const struct kruleset *rs, uint8_t type, const char *signal,
			    const char *object);

#endif

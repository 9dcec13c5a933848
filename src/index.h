/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ruleset's index, private to ruleset.c and match.c. */
#ifndef KEVENT_INDEX_H
#define KEVENT_INDEX_H

#include "ruleset.h"

/* Rules of one (type, literal signal) key, by ascending position. */
struct kbucket {
	const char *signal; /* NULL: empty slot; points into a rule's pattern */
	uint8_t type;
	uint32_t *v;
	size_t n, cap;
};

/* The bucket for (type, signal), or the empty slot where it would go. */
struct kbucket *kindex_slot(const struct kruleset *rs, uint8_t type, const char *signal);

#endif

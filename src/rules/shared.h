/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lists of one rule file by content, while the file is parsed: a rule
 * whose type, object, signal or source list, or whose run, equals an
 * earlier rule's points at that one (krule.shared).  Equal means equal
 * values, compared in full, not just a hash.
 */
#ifndef KEVENT_SHARED_H
#define KEVENT_SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "pattern.h"

struct kshared_slot;
struct kshared {
	struct kshared_slot *v; /* open addressing, at most half full */
	size_t n, cap;
};

/* 1 and *found: an equal list seen before; 0: l is remembered for the
 * next ones (it must live as long as s); -ENOMEM. */
int kshared_list(struct kshared *s, const struct kpattern_list *l, struct kpattern **found);
/* The same for a NULL-terminated argv. */
int kshared_argv(struct kshared *s, char **argv, char ***found);
void kshared_release(struct kshared *s);

#endif

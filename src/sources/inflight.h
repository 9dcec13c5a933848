/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sequence numbers a source handed on and that are not handled yet:
 * queued, or with a handler running.  The kernel source saves them in its
 * position (kernel-pos.h), so that a keventd that dies (SIGKILL, a crash)
 * before it handled them runs them at its next start.  Numbers are handed
 * on mostly in ascending order and handled in any order; how many are in
 * flight is bounded by the source's share of the queue and the handlers
 * running, not by how far apart they are.  Pure: no I/O.
 */
#ifndef KEVENT_INFLIGHT_H
#define KEVENT_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kinflight {
	/* ascending; an entry with KINFLIGHT_DONE set was handled, a hole
	 * that is dropped when it reaches the head or by a compaction */
	uint64_t *v;
	size_t head, end, cap; /* the entries are v[head..end) */
	size_t live;	       /* entries that are not holes */
	uint64_t changes;      /* counts additions and removals, for saving */
};

#define KINFLIGHT_DONE (UINT64_C(1) << 63)

/* Adds seq (1 to KINFLIGHT_DONE - 1; an add of a number in the set
 * changes nothing).  0; -ERANGE: seq is out of range; -ENOMEM. */
int kinflight_add(struct kinflight *f, uint64_t seq);
/* Removes seq: whether it was in the set. */
bool kinflight_remove(struct kinflight *f, uint64_t seq);
bool kinflight_has(const struct kinflight *f, uint64_t seq);
static inline size_t kinflight_count(const struct kinflight *f)
{
	return f->live;
}
/* Copies the numbers in the set, ascending, to out (room for
 * kinflight_count() of them); returns how many. */
size_t kinflight_list(const struct kinflight *f, uint64_t *out);
/* Empties the set (its memory is kept). */
void kinflight_clear(struct kinflight *f);
void kinflight_release(struct kinflight *f);

#endif

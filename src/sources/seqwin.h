/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which sequence numbers of a stream have arrived, when they may arrive a
 * little out of order: two CPUs that send at once take their numbers in
 * one order and may reach a listener in the other (send_kevent(9)).  A
 * number that has not arrived is a gap, not yet a loss; it is given up on
 * (lost) only when it falls out of the window, that is when a number
 * KSEQWIN_SPAN or more above it arrives, or when the stream ends
 * (kseqwin_settle()).  Late numbers that fill a gap, and duplicates, are
 * told apart from new ones, so that a caller could also fetch what is
 * missing and drop what it already has.  Pure: no I/O, no allocation.
 */
#ifndef KEVENT_SEQWIN_H
#define KEVENT_SEQWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSEQWIN_SPAN 64 /* numbers next .. next + 63 are in the window */

struct kseqwin {
	uint64_t next; /* the lowest number neither arrived nor given up on */
	uint64_t seen; /* bit i: next + i has arrived (bit 0 is never set) */
	uint64_t top;  /* the highest number that arrived */
	bool started;
};

enum kseqwin_verdict {
	KSEQWIN_NEW,	   /* first seen: in order, after a gap, or filling one */
	KSEQWIN_DUPLICATE, /* already arrived, within the window */
	KSEQWIN_OLD,	   /* below the window: arrived before, or given up on */
};

/* Records that seq arrived.  *lost: how many numbers this pushed out of
 * the window without their having arrived (0 mostly).  The first number
 * of a stream starts it: nothing before it is missing. */
enum kseqwin_verdict kseqwin_see(struct kseqwin *w, uint64_t seq, uint64_t *lost);

/* The stream ends here (or restarts from its own start): gives up on every
 * gap below the highest number that arrived, and returns how many numbers
 * that was.  The window goes on above that number. */
uint64_t kseqwin_settle(struct kseqwin *w);

/* How many numbers are missing now, still in the window. */
uint64_t kseqwin_pending(const struct kseqwin *w);

#endif

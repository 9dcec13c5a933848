/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef KEVENT_SEQSYNC_H
#define KEVENT_SEQSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Following a numbered stream that can be asked for what it missed: the
 * events after a number, then the current number and how many after it
 * are gone (kevent.ko's ring, KEVENT_CMD_GET in send_kevent(9)).  Events
 * are handed on strictly in sequence order, each number once: a live
 * event above the next number expected is a gap, so it is dropped and
 * the caller fetches everything after the last number handled, which
 * includes it.  While a fetch is under way, live events are dropped;
 * when it ends, another one follows if a live event it did not cover was
 * dropped meanwhile.  The stream's instance tells a restart (a reloaded
 * module counts from 1 again) from a gap.  Numbers below the next one
 * that were handed on but not handled after all (dropped at a stop) are
 * kept as to be redone: the next fetch asks from the oldest of them, and
 * of the numbers below the next one it hands on only those, each once.
 * Pure: no I/O.  Its states, inputs and actions are tabled in
 * SEQSYNC.txt beside this file.
 */
struct kseqsync {
	uint64_t instance;   /* 0: not known yet */
	uint64_t next;	     /* the lowest number not handled; 0: not known yet */
	uint64_t after;	     /* what the fetch under way asked for */
	uint64_t dropped;    /* the highest live number dropped during the fetch */
	uint64_t fetch_next; /* next when the fetch under way began */
	bool fetching;
	bool again;   /* fetch again when this one ends */
	bool restart; /* the answer is of another instance: the rest is ignored */
	/* numbers below next not handled, to be handed on when a fetch
	 * brings them: ascending once tidy; 0 marks one handed on during the
	 * fetch under way (redo_at: the first not passed yet) */
	uint64_t *redo;
	size_t n_redo, cap_redo, redo_at;
	bool redo_untidy;      /* appended to since the last sort */
	uint64_t redo_changes; /* counts changes to the list, for saving it */
	uint64_t forsaken;     /* numbers to redo of an instance gone since */
};

enum kseqsync_verdict {
	KSEQSYNC_HANDLE, /* the next number: hand it on */
	KSEQSYNC_DROP,	 /* a duplicate, a repeat, or the fetch will bring it */
	KSEQSYNC_FETCH,	 /* dropped; fetch (kseqsync_fetch()) to get it and what it skipped */
};

/* Starts from a saved position: the last number handled of instance
 * (0, 0: none; the first fetch then only asks for the current number).
 * s holds no list to redo (kseqsync_release()). */
void kseqsync_init(struct kseqsync *s, uint64_t instance, uint64_t last);

/* Frees the list of numbers to redo. */
void kseqsync_release(struct kseqsync *s);

/* seq was handed on (or read from a saved position) but not handled: the
 * next fetch brings it again and hands it on once.  0; -EINVAL: seq is
 * not below the next number (nothing to redo); -EBUSY: a fetch is under
 * way (kseqsync_abort() first); -ENOMEM. */
int kseqsync_unhandled(struct kseqsync *s, uint64_t seq);

/* The numbers to redo, ascending, no duplicates (*n of them), for the
 * saved position; valid until s changes.  Not during a fetch. */
const uint64_t *kseqsync_redo(struct kseqsync *s, size_t *n);

/* How many numbers to redo were given up on since the last call, because
 * the stream turned out to be another instance (their events are gone
 * with the old one): lost, to count. */
uint64_t kseqsync_forsaken(struct kseqsync *s);

/* Begins a fetch; returns the number to ask for the events after: the
 * oldest number to redo less one, else the last number handled
 * (UINT64_MAX: no position, a query of the current number only). */
uint64_t kseqsync_fetch(struct kseqsync *s);

/* A live event. */
enum kseqsync_verdict kseqsync_live(struct kseqsync *s, uint64_t instance, uint64_t seq);

/* An event of the fetch's answer: KSEQSYNC_HANDLE (recovered) or
 * KSEQSYNC_DROP (below the next number and not to redo: handled before). */
enum kseqsync_verdict kseqsync_fetched(struct kseqsync *s, uint64_t instance, uint64_t seq);

/* The fetch's final answer: the current number, how many numbers after
 * the one asked for are gone.  *lost: how many of those count as lost
 * (all of them but those handled before, unless the answer was of
 * another instance), and the numbers to redo that the answer did not
 * bring; the list to redo is then empty.  Returns whether to fetch again
 * (kseqsync_fetch()) at once. */
bool kseqsync_end(struct kseqsync *s, uint64_t instance, uint64_t current, uint64_t gone,
		  uint64_t *lost);

/* The fetch failed, or its answer never ended: no fetch is under way.
 * The numbers to redo that it handed on are no longer listed. */
void kseqsync_abort(struct kseqsync *s);

/* The receive buffer overran: the tail of the stream may be gone with no
 * gap to show it.  Returns whether to fetch now (false: one is under
 * way, and another follows it). */
bool kseqsync_overrun(struct kseqsync *s);

/* The last number handled (0: none), for the saved position. */
static inline uint64_t kseqsync_last(const struct kseqsync *s)
{
	return s->next ? s->next - 1 : 0;
}

#endif

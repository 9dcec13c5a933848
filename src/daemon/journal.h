/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The journal of accepted events (keventd(8), THE JOURNAL): segments
 * "journal-N" in the state directory, each a run of records
 * (journal-rec.h).  An event is appended once it is matched, its record
 * naming the rules that run something, before anything is done about it;
 * the runs that end set their done bits (kjournal_progress()), and the
 * event is retired (its record's state byte set to done) once its fate is
 * final.  A segment whose events are all retired is deleted, or emptied
 * when it is the one written to.  Appends wait in memory until
 * kjournal_flush() writes them with one pwrite(); a caller that answers
 * for an event flushes first, and when its record is still pending after
 * that (kjournal_pending_ref(), kjournal_failing()) refuses the event and
 * retires the record.  Nothing is synced: the journal outlives keventd's
 * death, not the machine's.
 *
 * The bound is the live records' bytes: segments are a quarter of the
 * size each, and when the segments and the next one would pass the size,
 * the segments before the one written to are compacted -- their live
 * records copied forward into as few files as hold them, which take the
 * first one's name by rename() (a kill in between leaves a copy beside
 * its original, which the replay tells apart).  A record keeps its
 * reference (an event's journal_ref, the holds, the settled runs) across
 * a compaction: the journal maps it to where the record went.  Only when
 * the live records alone reach the size is the journal full, and intake
 * pauses (the daemon's flow control), never forgetting an event.
 *
 * At open the segments a previous keventd left are read: a damaged piece
 * costs its record alone, counted and kept aside as
 * "journal-N@OFFSET.corrupt" (a bounded number, of bounded size).
 */
#ifndef KEVENT_JOURNAL_H
#define KEVENT_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KJOURNAL_SEGMENTS     4 /* a segment is a quarter of the size */
#define KJOURNAL_DEFAULT_SIZE (4u << 20)
#define KJOURNAL_SIZE_MIN     (64u << 10)
#define KJOURNAL_SIZE_MAX     (1u << 30)

struct kjournal;

/* Opens the journal in the state directory dirfd (statedir.h: checked,
 * its state.lock held by the caller; the journal keeps a copy of the
 * descriptor), taking over the segments a previous keventd left there.
 * A segment that kstatedir_openat() refuses is logged and left as found,
 * never replayed.  0 or -errno. */
int kjournal_open(int dirfd, size_t size, struct kjournal **out);

/* The replay of the segments found at open: each unfinished event handed
 * on, in their order, once (a compaction's copy and its original are
 * one), flagged redelivered and holding its record; a damaged record is
 * skipped, counted and kept aside.  It reads one segment at a time and
 * hands its events on as the caller has room for them, so a restart
 * never takes in the whole journal at once; the segments stay uncompacted
 * until it ends.
 *
 * kjournal_replay_start() begins it (nothing to replay: it has ended);
 * kjournal_replay_more() hands on events in order while may(ev) says
 * there is room for ev (may NULL: all of them), and returns how many it
 * handed; kjournal_replaying() says whether events are left.  What is
 * left at kjournal_free() stays in the journal for the next start. */
void kjournal_replay_start(struct kjournal *j);
size_t kjournal_replay_more(struct kjournal *j,
			    bool (*may)(void *userdata, const struct kevent *ev),
			    int (*submit)(void *userdata, struct kevent *ev), void *userdata);
bool kjournal_replaying(const struct kjournal *j);
/* Before the replay: fn(userdata, ev) for each unfinished event of source
 * src in the segments found at open, in order, read only (ev is freed
 * after the call; damage is left for the replay to count).  The
 * condition table reads back its events so, before any event that made
 * them is weighed again. */
void kjournal_peek(struct kjournal *j, enum kevent_source src,
		   void (*fn)(void *userdata, const struct kevent *ev), void *userdata);
/* All at once: kjournal_replay_start() and kjournal_replay_more(NULL). */
size_t kjournal_replay(struct kjournal *j, int (*submit)(void *userdata, struct kevent *ev),
		       void *userdata);

/* Appends ev and notes its record in ev->journal_ref.  The record is
 * pending, in memory, until kjournal_flush() (or past a bound of pending
 * bytes): the caller flushes before it acknowledges the event or runs
 * anything for it.  0, or -errno when no record could be made (the event
 * goes on unjournaled). */
int kjournal_append(struct kjournal *j, struct kevent *ev);

/* Writes the pending records with one pwrite().  0 (also when none were
 * pending), or -errno: they stay pending, for the next flush.  NULL is
 * fine. */
int kjournal_flush(struct kjournal *j);
/* Whether the record ref waits for kjournal_flush(), not written yet. */
bool kjournal_pending_ref(struct kjournal *j, uint64_t ref);
/* 0, or -errno of the last write when it failed: the journal cannot write
 * until a flush succeeds.  NULL is fine. */
int kjournal_failing(const struct kjournal *j);
/* Whether records (or what kjournal_settle() put off) wait for
 * kjournal_flush(). */
bool kjournal_pending(const struct kjournal *j);

/* Retires the record ref (an event's journal_ref; 0 is none).  lazy: the
 * event ran nothing, and a redelivery would run nothing either; its
 * record may be marked later, or go with its segment. */
void kjournal_retire(struct kjournal *j, uint64_t ref, bool lazy);

/* Sets the done bits done (journal-rec.h) in the record ref, the ones
 * set before staying: the runs of its event that ended, which a restart
 * does not run again. */
void kjournal_progress(struct kjournal *j, uint64_t ref, uint32_t done);

/* One more holder of the record ref besides its event (a debounced run
 * waiting for it): each holder retires it once, and only the last
 * retirement marks it done.  0, -ENOMEM or -EINVAL (ref 0). */
int kjournal_hold(struct kjournal *j, uint64_t ref);
/* Whether ref has holders besides its event. */
bool kjournal_held(const struct kjournal *j, uint64_t ref);
/* Sets bits in ref and retires it once, as kjournal_progress() and
 * kjournal_retire() do, but only once the records pending now are
 * written: a debounced run that a later event's run replaces is done
 * only when that event is in the journal. */
void kjournal_settle(struct kjournal *j, uint64_t ref, uint32_t bits);

/* Whether the journal is full: its live records reach its size, what
 * cannot be written reaches a segment, or a compaction failed (until a
 * segment goes). */
bool kjournal_full(const struct kjournal *j);

struct kjournal_status {
	uint64_t corrupt;     /* damaged records skipped */
	uint64_t bytes;	      /* the segments' bytes */
	uint64_t live;	      /* events not finished */
	uint64_t segments;    /* segment files */
	uint64_t writes;      /* flushes that wrote (or tried to write) records */
	uint64_t live_bytes;  /* the unfinished events' records' bytes */
	uint64_t compactions; /* times the segments were compacted */
};
void kjournal_status(const struct kjournal *j, struct kjournal_status *out);

/* Marks the lazily retired records, deletes what holds nothing live, and
 * frees j.  NULL is fine. */
void kjournal_free(struct kjournal *j);

#endif

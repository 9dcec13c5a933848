/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event history: a ring of the last N events the daemon handled, each
 * with what became of every rule it matched (queued, running, its exit
 * status or signal and run time, rate-limited, dry-run...), for
 * `keventctl events` and `keventctl explain` (keventctl(8)).  Its memory
 * is bounded: N entries of fixed size, each with one buffer for its text
 * (object, signal, rule names, at most KHISTORY_RULES_MAX of them, and
 * payload), reused when the ring comes round, and the buffers in all
 * within a bound in bytes (khistory_set_max_bytes()); and references on the rule
 * files in force when each event was handled, for at most
 * KHISTORY_GENERATIONS rule sets (when a reload makes one more, the
 * entries of the oldest lose theirs).  Pure: the daemon feeds it
 * (daemon.c) and logs.
 */
#ifndef KEVENT_HISTORY_H
#define KEVENT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "filter.h"
#include "rules.h"
#include "ruleset.h"
#include "runner.h"
#include "util.h"

#define KHISTORY_MAX	     1048576
#define KHISTORY_RULES_MAX   32 /* rules named per event; the rest are counted */
#define KHISTORY_GENERATIONS 8	/* rule sets kept for the entries that were handled by them */
/* keventd's bound on the entries' buffers, unless --history-bytes says:
 * this much per entry of --history (2 MiB at the default) */
#define KHISTORY_BYTES_PER_ENTRY 2048
#define KHISTORY_BYTES_MIN	 4096
#define KHISTORY_BYTES_MAX	 ((size_t)1 << 40)

struct khistory;

/* cap entries; 0 is a history that keeps nothing.  0 or -ENOMEM. */
int khistory_new(size_t cap, struct khistory **out);
/* A bound on the bytes of the entries' buffers (khistory_bytes() less the
 * ring's fixed size; 0: none, the default): the oldest entries go when a
 * new one would take it over, and an entry that could not fit alone is
 * not kept.  It holds from the next khistory_add() on. */
void khistory_set_max_bytes(struct khistory *h, size_t max);
size_t khistory_max_bytes(const struct khistory *h); /* 0: none */
void khistory_free(struct khistory *h);
static inline void khistory_freep(struct khistory **h)
{
	khistory_free(*h);
}

/* Records event number serial (the daemon's count, 1 for its first) and
 * the rules it matched, in order: those that run something are "queued"
 * (or "dropped" when dropped is set: keventd was stopping), the others
 * "matched".  rs (may be NULL) is the rule set it was matched against,
 * number generation: a new number keeps references on rs's files.  The
 * oldest entry makes room.  0 or -ENOMEM (nothing kept). */
int khistory_add(struct khistory *h, uint64_t serial, const struct kevent *ev,
		 const struct krule *const *rules, size_t n, bool dropped,
		 const struct kruleset *rs, uint64_t generation);
/* A step of a rule's run for event serial (runner.h); nothing when that
 * event has left the ring. */
void khistory_report(struct khistory *h, uint64_t serial, const struct krun_report *rep);
/* Event serial's job is over: a rule still queued was not run (stopping). */
void khistory_done(struct khistory *h, uint64_t serial);

/* An entry, valid until the next khistory_add(). */
struct khistory_entry;
/* The newest entry of seqnum (of source, unless it is -1); with last, the
 * newest entry (of source).  NULL when there is none. */
const struct khistory_entry *khistory_find(const struct khistory *h, int source, uint64_t seqnum,
					   bool last);
const struct khistory_entry *khistory_oldest(const struct khistory *h); /* NULL: empty */
/* The entry's event, made again (no uevent variables).  0 or -errno. */
int khistory_entry_event(const struct khistory_entry *e, struct kevent **out);
void khistory_entry_where(const struct khistory_entry *e, enum kevent_source *source,
			  uint64_t *seqnum, uint64_t *timestamp);
/* The rule files in force when it was handled, in order; NULL (with *n 0)
 * when they are no longer kept. */
struct kfile *const *khistory_entry_files(const struct khistory_entry *e, size_t *n);
/* The rule files that were broken then (and the first error of each);
 * NULL (with *n 0) when there were none or they are no longer kept. */
const struct kbroken *khistory_entry_broken(const struct khistory_entry *e, size_t *n);
size_t khistory_generations(const struct khistory *h); /* rule sets kept */

size_t khistory_capacity(const struct khistory *h);
size_t khistory_len(const struct khistory *h);	  /* entries held */
size_t khistory_bytes(const struct khistory *h);  /* memory held, allocated */
uint64_t khistory_lost(const struct khistory *h); /* events not kept: no memory */

/* The last n entries (0: all), oldest first: as text, a line per event and
 * an indented line per rule, or as one JSON object a line. */
void khistory_render(const struct khistory *h, size_t n, bool json, struct strbuf *out);

/* The same, an entry at a time, for a reply sent as it is read: the
 * entries the rendering of the moment khistory_cursor_init() was called
 * would show, each as it is when its turn comes.  Those that left the
 * history before their turn are skipped, and counted. */
struct khistory_cursor {
	uint64_t next, end; /* serials: the next to show, the last */
	uint64_t skipped;   /* entries that left the history before their turn */
	bool json;
	struct kfilter filter; /* the entries shown pass it, n of them */
};
void khistory_cursor_init(const struct khistory *h, size_t n, bool json,
			  struct khistory_cursor *cur);
/* The same for the last n entries (0: all) that pass f, each tested again
 * at its turn (a run may have failed meanwhile). */
void khistory_cursor_init_filtered(const struct khistory *h, size_t n, bool json,
				   const struct kfilter *f, struct khistory_cursor *cur);
/* Renders the next entry into out; false, rendering nothing, when none is
 * left. */
bool khistory_cursor_next(const struct khistory *h, struct khistory_cursor *cur,
			  struct strbuf *out);

/* What events says of a rule whose run came to rep: "exited 0 after 3 ms". */
void khistory_put_report(struct strbuf *out, const struct krun_report *rep);
/* A run's stderr tail (runner.h), a line "INDENTstderr: LINE" for each of
 * its lines, escaped; nothing for NULL. */
void khistory_put_tail(struct strbuf *out, const char *tail, const char *indent);
/* What became of the runs of the entry's rules (those that run something),
 * with their stderr tails: as text under a heading, or as one JSON line
 * {"runs":[...]}; nothing when none ran. */
void khistory_entry_put_runs(const struct khistory_entry *e, bool json, struct strbuf *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scheduler: a bounded queue of jobs (an event and the rules it
 * matched), run so that jobs of one object run one at a time in arrival
 * order, and jobs of different objects in parallel up to a cap.
 * The bound is per source: each source may have max_pending jobs queued
 * or running, so one source filling its share leaves the others theirs.
 * When a slot frees, the sources take turns (round-robin over those with
 * a job that may start) and each source's oldest such job goes first: a
 * flood from one source delays another's job by one start at most.
 * It decides only *when* a job runs; what running means is the caller's
 * start callback, which later reports back with ksched_done().
 */
#ifndef KEVENT_SCHEDULER_H
#define KEVENT_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"
#include "rules.h"

struct kobjq;

struct kjob {
	struct kevent *ev;
	const struct krule **rules; /* matched rules that run something, in order */
	size_t n_rules;
	size_t next;	/* the rule to run next */
	size_t not_run; /* rules left out because keventd was stopping */
	unsigned runs, suppressed;
	struct kfile **files; /* references keeping the rules alive across reloads */
	size_t n_files;
	uint64_t order;	 /* arrival, for oldest-first within a source */
	uint64_t serial; /* the owner's number for the event (the daemon's observers) */
	bool deferred;	 /* a debounced run, after its event was counted handled */
	struct kjob *next_in_object;
	struct kobjq *q;
	void *userdata; /* the caller's, e.g. the running child */
};

struct ksched;

typedef void (*ksched_start_fn)(struct ksched *s, struct kjob *job, void *userdata);

/* max_pending is each source's share: the jobs of one source queued or
 * running before ksched_full() says so for that source. */
int ksched_new(size_t max_running, size_t max_pending, ksched_start_fn start, void *userdata,
	       struct ksched **out);
/* Frees the scheduler and every job still queued (running ones must be done). */
void ksched_free(struct ksched *s);

/* Makes a job of ev (taken) and rules (the job references their files). */
int kjob_new(struct kevent *ev, const struct krule *const *rules, size_t n, struct kjob **out);
void kjob_free(struct kjob *job);

/* Queues a job (taken; on error it is freed) and starts what can start.
 * The caller checks ksched_full() first: a full share still accepts. */
int ksched_submit(struct ksched *s, struct kjob *job);
/* The job started earlier is finished: frees it and starts the next ones. */
void ksched_done(struct ksched *s, struct kjob *job);
/* Starts jobs while fewer than max_running run (after the cap changes, say). */
void ksched_pump(struct ksched *s);

/* The source's share is full: it should stop submitting. */
bool ksched_full(const struct ksched *s, enum kevent_source src);
/* At or below the low-water mark (3/4 of the share): the source may read again. */
bool ksched_has_room(const struct ksched *s, enum kevent_source src);
size_t ksched_room(const struct ksched *s, enum kevent_source src); /* jobs before full */
size_t ksched_share(const struct ksched *s);			    /* max_pending */
size_t ksched_pending(const struct ksched *s); /* queued + running, every source */
size_t ksched_pending_of(const struct ksched *s, enum kevent_source src);
size_t ksched_running(const struct ksched *s);
/* Stops starting jobs (shutdown); running ones still finish. */
void ksched_hold(struct ksched *s, bool hold);
/* Takes every job that has not started out of the queue: calls fn on each
 * (in no particular order), then frees it.  Running jobs stay.  Returns
 * how many were dropped. */
size_t ksched_drop_queued(struct ksched *s, void (*fn)(const struct kjob *job, void *userdata),
			  void *userdata);

#endif

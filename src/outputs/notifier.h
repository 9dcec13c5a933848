/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The notifier: an observer of the events keventd handles that, for each
 * rule with notify: (keventd.rules(5)), queues a delivery per target of
 * keventd.yaml's notify: section (keventd.yaml(5), NOTIFICATIONS) on disk
 * (notify-queue.h) and sends it through libcurl from keventd's own loop
 * (curl-loop.h), at most KNOTIFY_PARALLEL at a time per target.  A try
 * that fails holds its target back (exponential backoff, from
 * KNOTIFY_BACKOFF_MIN_MS to KNOTIFY_BACKOFF_MAX_MS) and never another
 * target; a delivery older than its target's max_age is dropped and
 * counted.  libcurl is loaded (curl-dl.h) only when it is made.
 */
#ifndef KEVENT_NOTIFIER_H
#define KEVENT_NOTIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "loop.h"
#include "notify-config.h"
#include "rules.h"

#define KNOTIFY_PARALLEL       2
#define KNOTIFY_QUEUE_MAX      10000 /* deliveries held per target; then the oldest go */
#define KNOTIFY_BACKOFF_MIN_MS 1000
#define KNOTIFY_BACKOFF_MAX_MS (5 * 60 * 1000)

struct knotifier;

struct knotify_counters {
	uint64_t sent;		/* deliveries the server took */
	uint64_t retried;	/* tries after a delivery's first */
	uint64_t failed;	/* tries that failed */
	uint64_t dropped;	/* deliveries given up: past max_age, refused, or the queue full */
	size_t queued;		/* deliveries waiting now */
	const char *off;	/* why the target sends nothing (NULL: it does) */
	const char *last_error; /* the last failure's words; NULL: none yet */
};

/*
 * Sets up the targets of cfg (which must outlive it), reads their secrets
 * and the queue in lib_dir (keventd's --lib-dir, already checked; NULL:
 * none, deliveries kept in memory alone), and starts sending what it
 * holds.  What keeps
 * a target from sending (a secret file others may read) turns it off,
 * logged and in its counters; a queue that cannot be opened leaves the
 * deliveries in memory alone, logged.  0, or -errno with *why when libcurl
 * cannot be loaded (nothing is sent then).
 */
int knotifier_new(struct kloop *loop, const struct knotify_config *cfg, const char *lib_dir,
		  struct knotifier **out, const char **why);
/* Queues ev's notifications: one per target of each rule of rules that has
 * notify:.  Never blocks on the network (it writes the queue's files). */
void knotifier_event(struct knotifier *n, const struct kevent *ev, const struct krule *const *rules,
		     size_t n_rules);
size_t knotifier_n_targets(const struct knotifier *n);
/* Target i's name and counters (valid until the next call that changes them). */
const char *knotifier_counters(const struct knotifier *n, size_t i, struct knotify_counters *out);
/* Deliveries lost with damaged files of the queue. */
uint64_t knotifier_damaged(const struct knotifier *n);
/* Rules' targets that keventd.yaml does not name (notifications not made). */
uint64_t knotifier_unknown(const struct knotifier *n);
/* Stops every try (what was under way stays queued) and frees.  NULL is fine. */
void knotifier_free(struct knotifier *n);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Alertmanager output (keventd.yaml(5), ALERTMANAGER): every
 * condition that holds posted to Alertmanager's API v2 as one JSON array
 * of alerts (POST URL/api/v2/alerts), through libcurl on keventd's own
 * loop (curl-loop.h), never blocking it.  It knows nothing of the
 * condition table: its caller fills each post with the alerts that hold
 * (fill), and hands it each resolved alert once (kam_resolved()).
 *
 *   - kam_changed(): posted in the loop's next round (a round's changes
 *     make one post), after the post in flight, if one is;
 *   - every resend while anything holds; each holding alert's endsAt is
 *     now + KAM_ENDS_AFTER_RESENDS x resend, so that Alertmanager
 *     resolves it if keventd is gone, and a restart resolves nothing;
 *   - a resolved alert rides along in every post until one succeeds;
 *   - a post that fails (no connection, an answer not 2xx) is tried
 *     again after KAM_BACKOFF_MIN_MS, doubling up to resend, counted.
 * libcurl is loaded (curl-dl.h) only when it is made.
 */
#ifndef KEVENT_ALERTMANAGER_H
#define KEVENT_ALERTMANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "am-config.h"
#include "loop.h"
#include "util.h"

#define KAM_BACKOFF_MIN_MS     1000
#define KAM_CONNECT_TIMEOUT_MS 10000
#define KAM_ANSWER_MAX	       512 /* bytes of the answer kept for the last error */

struct kam;

/* The endsAt of an alert that holds, posted at now (ns since the epoch):
 * KAM_ENDS_AFTER_RESENDS resends later. */
static inline uint64_t kam_ends_at(uint64_t now, uint64_t resend_ms)
{
	return now + KAM_ENDS_AFTER_RESENDS * resend_ms * 1000000ull;
}

/* Appends the alerts that hold, each an object of kcond_render_alert()
 * with endsAt ends_at, with kam_sep() before each; returns how many. */
typedef size_t (*kam_fill_fn)(void *userdata, uint64_t ends_at, struct strbuf *body);

struct kam_counters {
	uint64_t posts;	 /* posts Alertmanager took (2xx) */
	uint64_t failed; /* posts that failed */
	size_t resolved; /* resolved alerts not yet posted */
	bool up;	 /* the last post succeeded */
	const char *off; /* why nothing is posted (NULL: it is) */
	const char *last_error;
};

/* Sets up the poster for cfg (which must outlive it) and posts what fill
 * gives in the loop's first round.  A password file that will not do
 * turns it off (logged, in its counters).  0, or -errno with *why when
 * libcurl cannot be loaded. */
int kam_new(struct kloop *loop, const struct kam_config *cfg, kam_fill_fn fill, void *userdata,
	    struct kam **out, const char **why);
/* A condition changed: a post is due. */
void kam_changed(struct kam *a);
/* The alert of row id (any string naming it) resolved: alert, an object
 * of kcond_render_alert() with its endsAt, is posted until a post that
 * carries it succeeds.  0 or -ENOMEM. */
int kam_resolved(struct kam *a, const char *id, const char *alert);
/* Row id holds again: its resolved alert, if one waits, is not sent. */
void kam_holds(struct kam *a, const char *id);
void kam_counters(const struct kam *a, struct kam_counters *out);
/* A ',' unless body ends with '[': before each alert of fill. */
void kam_sep(struct strbuf *body);
/* Stops the post in flight (nothing is resolved by it) and frees.  NULL
 * is fine. */
void kam_free(struct kam *a);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's side of the condition table (cond.h), a part of the
 * daemon's library (daemon-cond.c): where it is
 * weighed, how its events go the way of every event, its file written
 * after the journal, its control requests and its part of status.  Every
 * call is a no-op without a table (--lib-dir none).
 */
#ifndef KEVENT_COND_DAEMON_COND_H
#define KEVENT_COND_DAEMON_COND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl-server.h"
#include "event.h"
#include "stats.h"

struct kdaemon;
struct kcond;
struct kcond_row;

/* Opens cfg.lib_dir and its table, before the journal hands anything
 * again (its condition events are read back into the table).  0, or
 * -errno: a lib directory refused stops keventd, as the state directory
 * does (keventd(8), --lib-dir). */
int kdaemon_cond_start(struct kdaemon *d);
void kdaemon_cond_free(struct kdaemon *d);

/* Each event, as its observers see it (the table registers as one,
 * after the history and MQTT), is weighed: its changes made, their
 * events accepted and journaled -- the journal written -- before its own
 * runs are queued; once its commit is over (the core's cond_hooks) they
 * are handed on.  A reload of the rules and a round's end (the table's
 * file written after the journal) come through the hooks too. */

/* The sources are about to start: the start-up check begins, so that
 * what they report as they start confirms rows (keventd.rules(5)). */
void kdaemon_cond_settle(struct kdaemon *d);

/* keventctl ack, by uid: the rows acknowledged, or -errno (cond.h). */
int kdaemon_cond_ack(struct kdaemon *d, const char *name, const char *key, uid_t uid,
		     const char *note);
/* keventctl conditions: the rows (all: also those cleared in the last
 * day) as text or JSON lines, sent as read.  NULL on ENOMEM. */
struct kctl_stream *kdaemon_cond_list(struct kdaemon *d, bool json, bool all);
/* keventctl conditions --check: the plugin's line into out, its status. */
int kdaemon_cond_check(struct kdaemon *d, const char *names, struct strbuf *out);
/* Prometheus: keventd_condition{...} of every row that holds. */
struct kctl_stream *kdaemon_cond_prometheus(struct kdaemon *d);

/* For the outputs that say what holds (the Alertmanager's, observers.c):
 * fn(userdata, row) for each row that holds, in no order (fn NULL: only
 * counted); returns how many hold.  The rows are read only, and valid
 * until the loop goes on. */
size_t kdaemon_cond_each(struct kdaemon *d, void (*fn)(void *userdata, const struct kcond_row *r),
			 void *userdata);
/* The row of condition name and key, holding or cleared; NULL: none. */
const struct kcond_row *kdaemon_cond_find(struct kdaemon *d, const char *name, const char *key);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The replies whose size is not the client's to bound (events, explain,
 * status: the history and the rule set decide it) as streams
 * (ctl-server.h: struct kctl_stream), rendered a part at a time as the
 * client reads them: a cursor into the history by serial, a rule's index.
 * What one holds is its cursor and the part being cut into replies.
 */
#ifndef KEVENT_REPLY_H
#define KEVENT_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "ctl-server.h"
#include "history.h"
#include "stats.h"

struct kdaemon;

/*
 * The last n events of d's history (0: all), oldest first, as they are
 * when their turn comes.  Those that leave the history before their turn
 * are skipped: the reply goes on with the oldest still kept, and its last
 * message is an error that says how many.  Only those that pass f (NULL:
 * all).  NULL on ENOMEM.
 */
struct kctl_stream *kreply_events(struct kdaemon *d, size_t n, bool json, const struct kfilter *f);
/* status, as text, JSON or the Prometheus text format.  NULL on ENOMEM. */
struct kctl_stream *kreply_status(struct kdaemon *d, enum kstatus_format format);
/*
 * status's verdict (keventctl(8)), a field at a time: fn(ud, key, values,
 * n) for version, pid, since (ns since the epoch), config, each rule_dir,
 * state_dir, lib_dir, each source on (its name and what it watches or why
 * it waits), rules (how many, in how many files), each broken or
 * broken_kept file (its name and why), journal_failing (why), conditions
 * (rows that hold: all, critical, warning, info) and the first
 * KREPLY_ABOUT_CONDITIONS of them as condition (severity, name, object,
 * since, acknowledged 0 or 1), the most severe and the oldest first.
 */
#define KREPLY_ABOUT_CONDITIONS 10
typedef void kreply_about_fn(void *ud, const char *key, const char *const *v, size_t n);
void kreply_about(struct kdaemon *d, kreply_about_fn *fn, void *ud);
/* The same as the members of a JSON object (status --json's "keventd"),
 * with "state": "running" or "degraded" (a broken file, a journal that
 * cannot write).  Allocated; NULL on ENOMEM. */
char *kreply_about_json(struct kdaemon *d);

/* explain of history entry e (a stream of it taken).  0 or -errno. */
int kreply_explain(struct kdaemon *d, const struct khistory_entry *e, bool json,
		   struct kctl_stream **out);

#endif

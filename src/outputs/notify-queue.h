/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The notifications' queue on disk: LIB_DIR/notify/ (keventd(8),
 * --lib-dir), a file per delivery named for its id (notify-rec.h), written
 * whole: to ID.tmp, synced, renamed to ID.q, the directory synced, so that
 * a delivery once queued survives a kill and a crash of the machine.
 * Before a try the file becomes ID.r (renamed, not synced: it is for
 * keventd's death), and back to ID.q after a try that never reached the
 * server: a delivery found as ID.r at the next start may have been made,
 * and is sent again flagged a retry.  A file that does not read as a
 * record is renamed NAME.damaged, and costs that delivery alone.
 */
#ifndef KEVENT_NOTIFY_QUEUE_H
#define KEVENT_NOTIFY_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "notify-rec.h"

#define KNOTIFY_QUEUE_SUBDIR "notify"

struct knotify_queue;

/* Opens (makes, checks: statedir.h) lib_dir's notify/ (lib_dir itself
 * checked by its opener).  0, or -errno
 * with *why (static). */
int knotify_queue_open(const char *lib_dir, struct knotify_queue **out, const char **why);
void knotify_queue_free(struct knotify_queue *q);
/* The directory, for messages. */
const char *knotify_queue_path(const struct knotify_queue *q);

/* Writes r as ID.q, whole and synced.  0; -EEXIST when the id is queued
 * already (ID.q or ID.r); -errno. */
int knotify_queue_put(struct knotify_queue *q, const struct knotify_rec *r);
/* Renames the id's file to ID.r (tried) or ID.q.  0 or -errno. */
int knotify_queue_mark(struct knotify_queue *q, uint64_t id, bool tried);
/* Reads the id's file (ID.r when tried): 0 with *out, -EINVAL with *why
 * for a damaged one (renamed NAME.damaged), or -errno. */
int knotify_queue_get(struct knotify_queue *q, uint64_t id, bool tried, struct knotify_rec *out,
		      const char **why);
/* Removes the id's file. */
int knotify_queue_remove(struct knotify_queue *q, uint64_t id, bool tried);

/* Calls fn for each delivery in the directory, its record read (fn takes
 * it), tried for ID.r; a damaged file is renamed NAME.damaged and counted
 * in *damaged; what a write cut short left (ID.tmp) is removed.  0 or
 * -errno. */
int knotify_queue_scan(struct knotify_queue *q,
		       void (*fn)(void *userdata, struct knotify_rec *r, bool tried),
		       void *userdata, uint64_t *damaged);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event sockets across a restart, through the service manager's
 * file-descriptor store (FDSTORE=1).  At start-up the descriptors it
 * passed back (LISTEN_FDS, LISTEN_FDNAMES) wait here by name until a
 * source takes its own; the source checks what it takes and refuses what
 * does not fit.  A source says which of its descriptors to hand over
 * (keep, and forget when it closes one); at a clean stop they go to the
 * service manager, one message each, named.  Every function accepts a
 * NULL store: no service manager, nothing passed, nothing handed over.
 */
#ifndef KEVENT_FDSTORE_H
#define KEVENT_FDSTORE_H

#include <stdbool.h>
#include <stddef.h>

struct kfdstore;

/* The descriptors passed to this process (LISTEN_PID is ours), taken out
 * of the environment so that no handler inherits them.  0 or -ENOMEM. */
int kfdstore_new(struct kfdstore **out);
/* Closes what is still waiting. */
void kfdstore_free(struct kfdstore *st);

/* The first descriptor passed under name, now the caller's; -1: none. */
int kfdstore_take(struct kfdstore *st, const char *name);
/* A descriptor taken under name that does not fit: logged, closed (fd
 * -1: closed already). */
void kfdstore_refuse(struct kfdstore *st, const char *name, int fd, const char *why);
/* Once the sources are made: what no source took is closed and logged,
 * the service manager's store emptied of the names passed, and the
 * descriptors taken back are logged.  Returns how many were taken. */
size_t kfdstore_settle(struct kfdstore *st);

/* Hands fd over at a clean stop, under name (copied: printable ASCII, no
 * ':', as systemd wants it); poll: whether the service manager may drop it
 * on a hang-up (a device unplugged).  0, -EINVAL (the name) or -ENOMEM. */
int kfdstore_keep(struct kfdstore *st, const char *name, int fd, bool poll);
/* fd is about to be closed: not handed over. */
void kfdstore_forget(struct kfdstore *st, int fd);
/* At a clean stop: every descriptor kept, to the service manager.
 * Returns how many it was sent (0 without $NOTIFY_SOCKET). */
size_t kfdstore_hand_over(struct kfdstore *st);

/* Checks for what a source takes: NULL if fd is a netlink socket of
 * protocol (bound to exactly the groups, when not 0), else why not. */
const char *kfdstore_not_netlink(int fd, int protocol, unsigned groups);

#endif

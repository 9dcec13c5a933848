/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's side of the users socket (users-server.h, users-client.h),
 * a part of the daemon's library (daemon-users.c): the system instance
 * listens and offers each event it handled, after its rules, to the user
 * instances; a user instance connects and takes them in.  Its part of
 * status.  Every call is a no-op with --users-socket none.
 */
#ifndef KEVENT_USERS_DAEMON_USERS_H
#define KEVENT_USERS_DAEMON_USERS_H

struct kdaemon;
struct ksink;

/* 0, or -errno: the system instance cannot listen (logged; keventd runs on
 * without it). */
int kdaemon_users_start(struct kdaemon *d, const struct ksink *sink);
void kdaemon_users_free(struct kdaemon *d);

#endif

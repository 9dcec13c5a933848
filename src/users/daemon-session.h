/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A user instance's session, a part of the daemon's library
 * (daemon-session.c): its handlers get the session's environment
 * (session-env.h), and rules' notify: desktop is shown on the session's
 * notification server (desktop.h), with its row in status's notify:.
 * Both are no-ops in the system instance.
 */
#ifndef KEVENT_USERS_DAEMON_SESSION_H
#define KEVENT_USERS_DAEMON_SESSION_H

struct kdaemon;

/* 0 or -ENOMEM. */
int kdaemon_session_start(struct kdaemon *d);
/* After the runner, whose handlers read its environment. */
void kdaemon_session_free(struct kdaemon *d);

#endif

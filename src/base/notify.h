/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The service manager's readiness protocol ($NOTIFY_SOCKET). */
#ifndef KEVENT_NOTIFY_H
#define KEVENT_NOTIFY_H

/* Sends state ("READY=1", ...) when NOTIFY_SOCKET is set.  Returns 1 if
 * sent, 0 if there is no socket, -errno on failure. */
int notify_service_manager(const char *state);

/* The same with the descriptor fd (-1: none) attached (SCM_RIGHTS), as
 * FDSTORE=1 wants it.  The service manager gets a copy; fd stays open. */
int notify_service_manager_fd(const char *state, int fd);

#endif

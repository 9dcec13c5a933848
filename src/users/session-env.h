/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The session's environment of a user instance's handlers (keventd(8),
 * USER INSTANCE): the variables of the user's systemd manager
 * (org.freedesktop.systemd1.Manager's Environment, which a desktop fills
 * at login: DISPLAY, WAYLAND_DISPLAY, XAUTHORITY ...) over keventd's own
 * (HOME, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS ...), less what is
 * keventd's or its service's alone.  The manager is asked again when a
 * handler starts, at most once a KSESSION_ENV_REFRESH_NS; a manager that
 * does not answer within KSESSION_ENV_TIMEOUT_US leaves the last answer.
 */
#ifndef KEVENT_USERS_SESSION_ENV_H
#define KEVENT_USERS_SESSION_ENV_H

#include <stdbool.h>
#include <stdint.h>

#define KSESSION_ENV_REFRESH_NS (1000000000ull)
#define KSESSION_ENV_TIMEOUT_US (250000ull)

struct ksession_env;

/* Whether "NAME=value" e goes to a handler: not PATH (keventd's own),
 * nor KEVENT_*, nor what systemd gives its service alone (NOTIFY_SOCKET,
 * LISTEN_*, INVOCATION_ID, JOURNAL_STREAM, MANAGERPID, WATCHDOG_*,
 * SYSTEMD_EXEC_PID, MAINPID, ...); a NAME of [A-Za-z_][A-Za-z0-9_]*. */
bool ksession_var_passed(const char *e);
/* The merge, pure: each passed "NAME=value" of manager, then of own whose
 * NAME manager has not; NULL-terminated, in *out (strv_free()).  Either
 * may be NULL.  0 or -ENOMEM. */
int ksession_env_merge(char *const *manager, char *const *own, char ***out);

/* own: keventd's environment at start (environ). 0 or -ENOMEM. */
int ksession_env_new(char *const *own, struct ksession_env **out);
/* The variables now (krunner_set_env()'s callback): asks the manager when
 * the last answer is older than KSESSION_ENV_REFRESH_NS. */
const char *const *ksession_env_get(void *userdata);
void ksession_env_free(struct ksession_env *s);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A handler run as a transient systemd service: the unit's name and the
 * properties of its StartTransientUnit call, built from the rule, its
 * plan and the event.  Pure: what goes on the bus is decided here and can
 * be tested without one; sending it is the daemon's work.
 */
#ifndef KEVENT_TRANSIENT_H
#define KEVENT_TRANSIENT_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "unitprops.h"

/* A property of the call: the scalars of unitprops.h ('s', 'b', 't',
 * 'i'), or ExecStart ('X': a(sasb), path and argv, no ignoring failure)
 * or Environment ('E': as). */
struct ktransient_prop {
	const char *name;
	char type;
	const char *s; /* 's'; 'X': the path */
	int b;
	uint64_t u;
	int64_t i;
	char *const *strv; /* 'X': argv; 'E': "NAME=value" */
};

#define KTRANSIENT_FIXED 5 /* Description, ExecStart, Environment, User, RuntimeMaxUSec */

struct ktransient {
	char *unit; /* keventd-<rule>-<seq>.service */
	char *description;
	struct ktransient_prop *props;
	size_t n_props;
};

/* "keventd-<rule>-<seq>.service", the rule's name escaped as systemd
 * escapes unit names: every byte outside [A-Za-z0-9:_.] (and a leading
 * '.') as \xNN.  0, or -ENOMEM. */
int ktransient_unit_name(const char *rule, uint64_t seq, char **out);

/*
 * The call for rule (its name, user and timeout) run with plan (argv
 * and environment) as the program at path, for event seq, with the
 * rule's unit properties props (which come last and replace a fixed
 * property of the same name).  The strings are borrowed from its
 * arguments, which must outlive out.  0, or -ENOMEM.
 */
int ktransient_build(const char *rule, const char *user, uint64_t timeout_ms,
		     const struct kunitprop *props, size_t n_props, const struct kplan *plan,
		     const char *path, uint64_t seq, struct ktransient *out);
void ktransient_release(struct ktransient *t);

/* The active session of seat0, as logind says (session: active). */
struct ksession {
	const char *id;	  /* logind's session id */
	const char *user; /* its user's name: the unit's User= */
	uint32_t uid;
	const char *display; /* logind's Display: X11's, or "" */
	const char *type;    /* logind's Type: x11, wayland, tty, ... */
};

/*
 * The environment of a session rule's unit: envp (the handler's) and then
 * XDG_RUNTIME_DIR=/run/user/UID, DBUS_SESSION_BUS_ADDRESS=unix:path=
 * /run/user/UID/bus, DISPLAY (when logind has one), WAYLAND_DISPLAY=
 * wayland-0 (type wayland: logind does not know the socket's name; the
 * compositors' default), KEVENT_SESSION=id and KEVENT_SESSION_USER=user,
 * each replacing a variable of the same name in envp.  *out is a new
 * NULL-terminated vector (strv_free()).  0, or -ENOMEM.
 */
int ktransient_session_env(char *const *envp, const struct ksession *s, char ***out);

#endif

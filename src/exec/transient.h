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
 * 'i'), or ExecStartEx ('X': a(sasas), the path, argv and the command's
 * flags) or Environment ('E': as). */
struct ktransient_prop {
	const char *name;
	char type;
	const char *s; /* 's'; 'X': the path */
	int b;
	uint64_t u;
	int64_t i;
	char *const *strv;  /* 'X': argv; 'E': "NAME=value" */
	char *const *flags; /* 'X': ExecStartEx's flags */
};

/* Description, ExecStartEx, Environment, User, RuntimeMaxUSec, and for a
 * session rule ExecConditionEx */
#define KTRANSIENT_FIXED 6

/* The flags of the handler's command: systemd expands no "$NAME" or
 * "${NAME}" in it, so argv reaches the program as the rule wrote it, as in
 * a direct run (keventd.rules(5), Transient units). */
extern char *const ktransient_exec_flags[];

/* A session rule's ExecConditionEx: /bin/sh -c with a fixed script that
 * asks logind whether the session in KEVENT_SESSION is still the active
 * one, right before the handler is executed; if not, systemd skips the
 * unit (keventd.rules(5), Transient units). */
extern char *const ktransient_session_check[];

struct ktransient {
	const char *unit; /* borrowed: ktransient_unit_name()'s */
	char *description;
	struct ktransient_prop *props;
	size_t n_props;
};

/* "keventd-<rule>-<instance>-<run>.service": the rule's name escaped as
 * systemd escapes unit names (every byte outside [A-Za-z0-9:_.], and a
 * leading '.', as \xNN), this keventd's instance (kinstance_id(), 16 hex
 * digits) and its number for the run.  Nothing a sender chooses is in it,
 * so no two runs of any keventd share a name.  Run 0 gives the pattern,
 * "keventd-<rule>-INSTANCE-RUN.service" (keventctl test).  0, or -ENOMEM. */
int ktransient_unit_name(const char *rule, uint64_t instance, uint64_t run, char **out);

/*
 * The call for rule (its name, user and timeout) run as unit with plan
 * (argv and environment) as the program at path, for event seq (in the
 * description), with the rule's unit properties props (which come last
 * and replace a fixed property of the same name); with session, the unit
 * checks that the session is still active (ktransient_session_check).  The strings are
 * borrowed from its arguments, which must outlive out.  0, or -ENOMEM.
 */
int ktransient_build(const char *rule, const char *unit, const char *user, uint64_t timeout_ms,
		     const struct kunitprop *props, size_t n_props, const struct kplan *plan,
		     const char *path, uint64_t seq, bool session, struct ktransient *out);
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

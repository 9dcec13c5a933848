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

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The handler plan: the exact argv and environment a matched rule runs with
 * (keventd.rules(5), HANDLERS and ENVIRONMENT).  Building it spawns nothing.
 */
#ifndef KEVENT_PLAN_H
#define KEVENT_PLAN_H

#include "event.h"
#include "rules.h"

#define KEVENT_HANDLER_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define KEVENT_SHELL	    "/bin/sh"

struct kplan {
	char **argv; /* NULL-terminated */
	size_t argc;
	char **envp; /* NULL-terminated, "NAME=value" */
	size_t n_env;
	int cgroup_fd; /* the run's own cgroup, borrowed; -1: keventd's */
};

/* Whether NAME is a variable that keventd alone sets (KEVENT_TYPE ...
 * KEVENT_HOST, KEVENT_RECOVERED, KEVENT_SYNTHETIC, KEVENT_SESSION ...):
 * no payload property of any event becomes one (keventd.rules(5)). */
bool kplan_var_reserved(const char *name);
/*
 * Builds the environment for rule r and event ev: PATH, KEVENT_* of the
 * event and rule, KEVENT_<KEY> per payload property (never overriding the
 * fixed ones; first of a name wins), then udev's own variables.
 */
int kplan_build_env(const struct krule *r, const struct kevent *ev, char ***envp, size_t *n);

/* Builds argv and environment (cgroup_fd -1).  0, or -ENOMEM; -EINVAL if r
 * runs nothing. */
int kplan_build(const struct krule *r, const struct kevent *ev, struct kplan *plan);
void kplan_release(struct kplan *plan);
/* Adds each "NAME=value" of extra (NULL-terminated; NULL is fine) whose
 * NAME plan's environment has not yet: a user instance's session
 * (keventd(8), USER INSTANCE).  A NAME keventd alone sets
 * (kplan_var_reserved()) or PATH is never taken.  0 or -ENOMEM. */
int kplan_add_env(struct kplan *plan, const char *const *extra);

/* "Cpu" -> "KEVENT_CPU"; "fan-speed" -> "KEVENT_FAN_SPEED".  buf is at least
 * 8 + strlen(key) bytes. */
void kplan_prop_var(const char *key, char *buf);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user instance's places (keventd(8), USER INSTANCE): keventd --user
 * and keventctl --user spell them from here, one function for both.  The
 * rule directories, highest precedence first: the user's own
 * ($XDG_CONFIG_HOME/keventd/rules.d), the run-time one
 * ($XDG_RUNTIME_DIR/keventd/rules.d), the admin's and the packages' for
 * every user (KEVENT_USER_RULES_DIR_ETC, _LIB); the control socket and
 * the state directory in $XDG_RUNTIME_DIR/keventd; what outlives a reboot
 * in $XDG_STATE_HOME/keventd; the configuration file
 * $XDG_CONFIG_HOME/keventd/keventd.yaml.  As the XDG base directory
 * specification says, a variable that is empty or not an absolute path
 * is as if unset, and then $HOME/.config and $HOME/.local/state stand in;
 * there is no stand-in for $XDG_RUNTIME_DIR.
 */
#ifndef KEVENT_USERDIRS_H
#define KEVENT_USERDIRS_H

#include <stddef.h>

/* at most this many directories in KEVENTD_USER_SYSTEM_RULES */
#define KUSERDIRS_MAX_SYSTEM	4
#define KUSERDIRS_MAX_RULE_DIRS (2 + KUSERDIRS_MAX_SYSTEM)

/* What the places are made of: the environment's variables (NULL: unset)
 * and the home directory of the user's passwd entry (NULL: none). */
struct kuserenv {
	const char *home;	 /* $HOME */
	const char *pw_home;	 /* the passwd entry's, when $HOME will not do */
	const char *config_home; /* $XDG_CONFIG_HOME */
	const char *runtime_dir; /* $XDG_RUNTIME_DIR */
	const char *state_home;	 /* $XDG_STATE_HOME */
	/* $KEVENTD_USER_SYSTEM_RULES, for tests: a ':'-separated list of
	 * directories in the place of the admin's and the packages' */
	const char *system_rules;
};

struct kuserdirs {
	char *rule_dirs[KUSERDIRS_MAX_RULE_DIRS]; /* highest precedence first */
	size_t n_rule_dirs;
	char *config;	 /* .../keventd/keventd.yaml, read when it exists */
	char *control;	 /* $XDG_RUNTIME_DIR/keventd/control */
	char *state_dir; /* $XDG_RUNTIME_DIR/keventd */
	char *lib_dir;	 /* $XDG_STATE_HOME/keventd */
};

/* Pure: the places of env in *out.  0; -EINVAL with *why (static) when
 * $XDG_RUNTIME_DIR is unset, empty or relative, when a home directory is
 * needed and there is none, or KEVENTD_USER_SYSTEM_RULES is not a list of
 * up to KUSERDIRS_MAX_SYSTEM absolute paths; -ENOMEM.  Nothing in *out on
 * an error. */
int kuserdirs_compute(const struct kuserenv *env, struct kuserdirs *out, const char **why);
/* The same for this process: its environment, and the passwd entry of
 * geteuid() when $HOME is unset or relative. */
int kuserdirs_get(struct kuserdirs *out, const char **why);
/* Makes the missing directories above lib_dir (mode 0700, as the XDG
 * specification wants $XDG_STATE_HOME), so that keventd can make lib_dir
 * itself.  0 or -errno. */
int kuserdirs_make_lib_parents(const struct kuserdirs *u);
void kuserdirs_release(struct kuserdirs *u);

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/* The user instance's places: from the environment, one function. */
#include "userdirs.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h" /* KEVENT_USER_RULES_DIR_ETC, _LIB */
#include "util.h"

/* A variable of the XDG specification that counts: set, and absolute. */
static const char *usable(const char *v)
{
	return v && v[0] == '/' ? v : NULL;
}

static char *join(const char *a, const char *b)
{
	char *s;
	return asprintf(&s, "%s%s", a, b) < 0 ? NULL : s;
}

void kuserdirs_release(struct kuserdirs *u)
{
	for (size_t i = 0; i < u->n_rule_dirs; i++)
		free(u->rule_dirs[i]);
	free(u->config);
	free(u->control);
	free(u->state_dir);
	free(u->lib_dir);
	*u = (struct kuserdirs){0};
}

/* The system-wide directories: KEVENTD_USER_SYSTEM_RULES's, or the two. */
static int system_dirs(const char *list, struct kuserdirs *u, const char **why)
{
	if (!list) {
		if (!(u->rule_dirs[u->n_rule_dirs++] = strdup(KEVENT_USER_RULES_DIR_ETC)) ||
		    !(u->rule_dirs[u->n_rule_dirs++] = strdup(KEVENT_USER_RULES_DIR_LIB)))
			return -ENOMEM;
		return 0;
	}
	size_t n = 0;
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ":");
		if (l == 0 || p[0] != '/' || ++n > KUSERDIRS_MAX_SYSTEM) {
			*why = "KEVENTD_USER_SYSTEM_RULES is not a ':'-separated list of up to 4 "
			       "absolute paths";
			return -EINVAL;
		}
		if (!(u->rule_dirs[u->n_rule_dirs++] = strndup(p, l)))
			return -ENOMEM;
		p += l + (p[l] == ':');
	}
	return 0;
}

int kuserdirs_compute(const struct kuserenv *env, struct kuserdirs *out, const char **why)
{
	const char *run = usable(env->runtime_dir), *config = usable(env->config_home),
		   *state = usable(env->state_home);
	const char *home = usable(env->home) ? env->home : usable(env->pw_home);
	if (!run) {
		*why = env->runtime_dir && *env->runtime_dir
			       ? "XDG_RUNTIME_DIR is not an absolute path"
			       : "XDG_RUNTIME_DIR is not set: the user instance keeps its "
				 "control socket in the user's run-time directory, which "
				 "systemd-logind makes at login (/run/user/UID)";
		return -EINVAL;
	}
	if ((!config || !state) && !home) {
		*why = "no home directory: HOME is not set and the user has none (or set "
		       "XDG_CONFIG_HOME and XDG_STATE_HOME)";
		return -EINVAL;
	}
	_cleanup_free_ char *config_home = config ? strdup(config) : join(home, "/.config");
	_cleanup_free_ char *state_home = state ? strdup(state) : join(home, "/.local/state");
	struct kuserdirs u = {0};
	int rc = -ENOMEM;
	if (!config_home || !state_home)
		goto fail;
	if (!(u.rule_dirs[u.n_rule_dirs++] = join(config_home, "/keventd/rules.d")) ||
	    !(u.rule_dirs[u.n_rule_dirs++] = join(run, "/keventd/rules.d")))
		goto fail;
	/* set but empty is unset, as an XDG variable */
	const char *list = env->system_rules && *env->system_rules ? env->system_rules : NULL;
	if ((rc = system_dirs(list, &u, why)) < 0)
		goto fail;
	rc = -ENOMEM;
	if (!(u.config = join(config_home, "/keventd/keventd.yaml")) ||
	    !(u.state_dir = join(run, "/keventd")) ||
	    !(u.control = join(run, "/keventd/control")) ||
	    !(u.lib_dir = join(state_home, "/keventd")))
		goto fail;
	*out = u;
	return 0;
fail:
	kuserdirs_release(&u);
	return rc;
}

int kuserdirs_get(struct kuserdirs *out, const char **why)
{
	struct kuserenv env = {
		.home = getenv("HOME"),
		.config_home = getenv("XDG_CONFIG_HOME"),
		.runtime_dir = getenv("XDG_RUNTIME_DIR"),
		.state_home = getenv("XDG_STATE_HOME"),
		.system_rules = getenv("KEVENTD_USER_SYSTEM_RULES"),
	};
	if (!usable(env.home)) {
		struct passwd *pw = getpwuid(geteuid());
		env.pw_home = pw ? pw->pw_dir : NULL;
	}
	return kuserdirs_compute(&env, out, why);
}

int kuserdirs_make_lib_parents(const struct kuserdirs *u)
{
	_cleanup_free_ char *path = strdup(u->lib_dir);
	if (!path)
		return -ENOMEM;
	/* each missing directory from the top, as mkdir -p, but not lib_dir */
	char *last = strrchr(path, '/');
	for (char *p = strchr(path + 1, '/'); p && p <= last; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

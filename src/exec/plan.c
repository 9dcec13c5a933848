// SPDX-License-Identifier: GPL-2.0-or-later
#include "plan.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "template.h"
#include "util.h"

void kplan_prop_var(const char *key, char *buf)
{
	memcpy(buf, "KEVENT_", 7);
	size_t i = 0;
	for (; key[i]; i++) {
		char c = (char)toupper((unsigned char)key[i]);
		buf[7 + i] =
			((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') ? c : '_';
	}
	buf[7 + i] = '\0';
}

static const char *const fixed_vars[] = {
	"KEVENT_TYPE",	    "KEVENT_OBJECT", "KEVENT_SIGNAL", "KEVENT_PAYLOAD",	  "KEVENT_SEQNUM",
	"KEVENT_TIMESTAMP", "KEVENT_SOURCE", "KEVENT_RULE",   "KEVENT_RULE_FILE",
};

/* What keventd alone says, for any source, whether or not this event
 * carries it: a payload line such as "Host: x" never becomes one. */
static const char *const reserved_vars[] = {
	"KEVENT_RECOVERED",    "KEVENT_HOST",	  "KEVENT_SYNTHETIC",
	"KEVENT_REDELIVERED",  "KEVENT_INSTANCE", "KEVENT_SESSION",
	"KEVENT_SESSION_USER", "KEVENT_UNIT",	  "KEVENT_TEST",
};

bool kplan_var_reserved(const char *name)
{
	for (size_t j = 0; j < ARRAY_SIZE(fixed_vars); j++)
		if (strcmp(fixed_vars[j], name) == 0)
			return true;
	for (size_t j = 0; j < ARRAY_SIZE(reserved_vars); j++)
		if (strcmp(reserved_vars[j], name) == 0)
			return true;
	return false;
}

static int env_add(char **env, size_t *n, const char *name, const char *value)
{
	if (asprintf(&env[*n], "%s=%s", name, value) < 0) {
		env[*n] = NULL;
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

int kplan_build_env(const struct krule *r, const struct kevent *ev, char ***envp, size_t *count)
{
	size_t cap = 1 + ARRAY_SIZE(fixed_vars) + ARRAY_SIZE(reserved_vars) + ev->n_props +
		     ev->n_uevent_env + 1;
	char **env = calloc(cap, sizeof(char *));
	if (!env)
		return -ENOMEM;
	size_t n = 0;
	char seq[24], ts[24];
	snprintf(seq, sizeof(seq), "%" PRIu64, ev->seqnum);
	snprintf(ts, sizeof(ts), "%" PRIu64, ev->timestamp);
	const char *values[] = {
		kevent_type_name(ev->type),
		ev->object,
		ev->signal,
		ev->payload,
		seq,
		ts,
		kevent_source_name(ev->source),
		r->name,
		r->file ? r->file->path : "",
	};
	int rc = env_add(env, &n, "PATH", KEVENT_HANDLER_PATH);
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(fixed_vars); i++)
		rc = env_add(env, &n, fixed_vars[i], values[i]);
	if (rc == 0 && ev->recovered)
		rc = env_add(env, &n, "KEVENT_RECOVERED", "1");
	if (rc == 0 && ev->redelivered)
		rc = env_add(env, &n, "KEVENT_REDELIVERED", "1");
	if (rc == 0 && ev->host)
		rc = env_add(env, &n, "KEVENT_HOST", ev->host);
	if (rc == 0 && ev->synthetic)
		rc = env_add(env, &n, "KEVENT_SYNTHETIC", "1");
	if (rc == 0 && ev->test)
		rc = env_add(env, &n, "KEVENT_TEST", "1");

	size_t first_prop = n;
	for (size_t i = 0; rc == 0 && i < ev->n_props; i++) {
		const char *key = ev->props[i].key;
		char *name = malloc(8 + strlen(key));
		if (!name) {
			rc = -ENOMEM;
			break;
		}
		kplan_prop_var(key, name);
		size_t len = strlen(name);
		/* a payload's "Host:" never passes for the sender's host */
		bool taken = kplan_var_reserved(name);
		for (size_t j = first_prop; j < n && !taken; j++)
			taken = strncmp(env[j], name, len) == 0 && env[j][len] == '=';
		if (!taken)
			rc = env_add(env, &n, name, ev->props[i].value);
		free(name);
	}
	size_t first_uevent = n;
	for (size_t i = 0; rc == 0 && i < ev->n_uevent_env; i++) {
		const char *e = ev->uevent_env[i];
		size_t len = strcspn(e, "=");
		/* kevent_new() filtered them; an event made otherwise is not trusted */
		if (!e[len] || !kevent_env_name_allowed(e, len))
			continue;
		bool taken = false;
		for (size_t j = first_uevent; j < n && !taken; j++)
			taken = strncmp(env[j], e, len + 1) == 0;
		if (taken)
			continue;
		env[n] = strdup(e);
		if (!env[n])
			rc = -ENOMEM;
		else
			n++;
	}
	if (rc < 0) {
		strv_free(env);
		return rc;
	}
	*envp = env;
	*count = n;
	return 0;
}

int kplan_build(const struct krule *r, const struct kevent *ev, struct kplan *plan)
{
	*plan = (struct kplan){.cgroup_fd = -1};
	if (!krule_runs_something(r))
		return -EINVAL;
	int rc = kplan_build_env(r, ev, &plan->envp, &plan->n_env);
	if (rc < 0)
		return rc;
	size_t argc = r->shell ? 3 : strv_length(r->run);
	plan->argv = calloc(argc + 1, sizeof(char *));
	if (!plan->argv)
		goto oom;
	plan->argc = argc;
	if (r->shell) {
		plan->argv[0] = strdup(KEVENT_SHELL);
		plan->argv[1] = strdup("-c");
		plan->argv[2] = strdup(r->shell);
	} else {
		for (size_t i = 0; i < argc; i++)
			plan->argv[i] = ktemplate_expand(r->run[i], plan->envp);
	}
	for (size_t i = 0; i < argc; i++)
		if (!plan->argv[i])
			goto oom;
	return 0;
oom:
	kplan_release(plan);
	return -ENOMEM;
}

void kplan_release(struct kplan *plan)
{
	for (size_t i = 0; plan->argv && i < plan->argc; i++)
		free(plan->argv[i]);
	free(plan->argv);
	strv_free(plan->envp);
	*plan = (struct kplan){.cgroup_fd = -1};
}

int kplan_add_env(struct kplan *plan, const char *const *extra)
{
	size_t more = 0;
	for (size_t i = 0; extra && extra[i]; i++)
		more++;
	if (!more)
		return 0;
	char **env = realloc(plan->envp, (plan->n_env + more + 1) * sizeof(char *));
	if (!env)
		return -ENOMEM;
	plan->envp = env;
	for (size_t i = 0; i < more; i++) {
		const char *e = extra[i];
		size_t len = strcspn(e, "=");
		if (!e[len] || len == 0 || len >= 64)
			continue;
		char name[64];
		memcpy(name, e, len);
		name[len] = '\0';
		bool taken = strcmp(name, "PATH") == 0 || kplan_var_reserved(name);
		for (size_t j = 0; j < plan->n_env && !taken; j++)
			taken = strncmp(env[j], e, len + 1) == 0;
		if (taken)
			continue;
		if (!(env[plan->n_env] = strdup(e))) {
			env[plan->n_env] = NULL;
			return -ENOMEM;
		}
		plan->n_env++;
	}
	env[plan->n_env] = NULL;
	return 0;
}

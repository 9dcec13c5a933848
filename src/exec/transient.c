// SPDX-License-Identifier: GPL-2.0-or-later
/* A handler as a transient systemd service (transient.h). */
#include "transient.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *const ktransient_exec_flags[] = {"no-env-expand", NULL};

char *const ktransient_session_check[] = {
	"/bin/sh", "-c",
	"a=$(loginctl show-session \"$KEVENT_SESSION\" -p Active --value) && [ \"$a\" = yes ]",
	NULL};

/* "keventd-<rule>", the rule's name escaped as systemd escapes unit names. */
static void put_prefix(struct strbuf *sb, const char *rule)
{
	strbuf_puts(sb, "keventd-");
	for (const unsigned char *p = (const unsigned char *)rule; *p; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == ':' || *p == '_' ||
			  (*p == '.' && p != (const unsigned char *)rule);
		if (ok)
			strbuf_putc(sb, (char)*p);
		else
			strbuf_printf(sb, "\\x%02x", *p);
	}
}

int ktransient_unit_name(const char *rule, uint64_t instance, uint64_t run, char **out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	put_prefix(&sb, rule);
	if (run)
		strbuf_printf(&sb, "-%016" PRIx64 "-%" PRIu64 ".service", instance, run);
	else
		strbuf_puts(&sb, "-INSTANCE-RUN.service");
	*out = sb.oom ? NULL : strbuf_steal(&sb);
	return *out ? 0 : -ENOMEM;
}

int ktransient_build(const char *rule, const char *unit, const char *user, uint64_t timeout_ms,
		     const struct kunitprop *props, size_t n_props, const struct kplan *plan,
		     const char *path, uint64_t seq, bool session, struct ktransient *out)
{
	*out = (struct ktransient){0};
	struct ktransient_prop *v = calloc(KTRANSIENT_FIXED + n_props, sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->props = v;
	out->unit = unit;
	if (asprintf(&out->description, "keventd rule %s, seq %" PRIu64, rule, seq) < 0) {
		out->description = NULL;
		ktransient_release(out);
		return -ENOMEM;
	}
	size_t n = 0;
	v[n++] =
		(struct ktransient_prop){.name = "Description", .type = 's', .s = out->description};
	v[n++] = (struct ktransient_prop){.name = "ExecStartEx",
					  .type = 'X',
					  .s = path,
					  .strv = plan->argv,
					  .flags = ktransient_exec_flags};
	v[n++] = (struct ktransient_prop){.name = "Environment", .type = 'E', .strv = plan->envp};
	if (session)
		v[n++] = (struct ktransient_prop){.name = "ExecConditionEx",
						  .type = 'X',
						  .s = ktransient_session_check[0],
						  .strv = ktransient_session_check,
						  .flags = ktransient_exec_flags};
	if (user)
		v[n++] = (struct ktransient_prop){.name = "User", .type = 's', .s = user};
	v[n++] = (struct ktransient_prop){
		.name = "RuntimeMaxUSec", .type = 't', .u = timeout_ms * 1000};
	for (size_t i = 0; i < n_props; i++) {
		const struct kunitprop *p = &props[i];
		struct ktransient_prop t = {.name = p->name,
					    .type = p->type,
					    .s = p->s,
					    .b = p->b,
					    .u = p->u,
					    .i = p->i};
		size_t k = 0;
		while (k < n && strcmp(v[k].name, p->name) != 0)
			k++;
		v[k] = t; /* a fixed one of the same name is replaced */
		if (k == n)
			n++;
	}
	out->n_props = n;
	return 0;
}

void ktransient_release(struct ktransient *t)
{
	free(t->description);
	free(t->props);
	*t = (struct ktransient){0};
}

/* Sets NAME=value in v (n entries, room for one more): replaces one of
 * the same name, or adds it.  0, or -ENOMEM. */
static int env_set(char **v, size_t *n, const char *name, const char *value)
{
	char *e;
	if (asprintf(&e, "%s=%s", name, value) < 0)
		return -ENOMEM;
	size_t len = strlen(name) + 1;
	for (size_t i = 0; i < *n; i++)
		if (strncmp(v[i], e, len) == 0) {
			free(v[i]);
			v[i] = e;
			return 0;
		}
	v[(*n)++] = e;
	return 0;
}

int ktransient_session_env(char *const *envp, const struct ksession *s, char ***out)
{
	enum { ADDED = 6 };
	size_t n = 0, have = strv_length(envp);
	char **v = calloc(have + ADDED + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (; n < have; n++)
		if (!(v[n] = strdup(envp[n]))) {
			strv_free(v);
			return -ENOMEM;
		}
	char dir[64], bus[80];
	snprintf(dir, sizeof(dir), "/run/user/%" PRIu32, s->uid);
	snprintf(bus, sizeof(bus), "unix:path=%s/bus", dir);
	int rc = env_set(v, &n, "XDG_RUNTIME_DIR", dir);
	if (rc == 0)
		rc = env_set(v, &n, "DBUS_SESSION_BUS_ADDRESS", bus);
	if (rc == 0 && s->display && s->display[0])
		rc = env_set(v, &n, "DISPLAY", s->display);
	if (rc == 0 && s->type && strcmp(s->type, "wayland") == 0)
		rc = env_set(v, &n, "WAYLAND_DISPLAY", "wayland-0");
	if (rc == 0)
		rc = env_set(v, &n, "KEVENT_SESSION", s->id);
	if (rc == 0)
		rc = env_set(v, &n, "KEVENT_SESSION_USER", s->user);
	if (rc < 0) {
		strv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
#include "session-env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "util.h"
#if KEVENT_DBUS
#include <systemd/sd-bus.h>
#endif

/* What systemd sets for its service alone, never the session's. */
static const char *const service_only[] = {
	"PATH",
	"NOTIFY_SOCKET",
	"LISTEN_FDS",
	"LISTEN_PID",
	"LISTEN_FDNAMES",
	"INVOCATION_ID",
	"JOURNAL_STREAM",
	"MANAGERPID",
	"WATCHDOG_PID",
	"WATCHDOG_USEC",
	"SYSTEMD_EXEC_PID",
	"MAINPID",
	"SERVICE_RESULT",
	"EXIT_CODE",
	"EXIT_STATUS",
	"MONITOR_SERVICE_RESULT",
	"TRIGGER_UNIT",
	"CREDENTIALS_DIRECTORY",
	"RUNTIME_DIRECTORY",
	"STATE_DIRECTORY",
	"CACHE_DIRECTORY",
	"LOGS_DIRECTORY",
	"CONFIGURATION_DIRECTORY",
};

bool ksession_var_passed(const char *e)
{
	size_t len = strcspn(e, "=");
	if (!e[len] || !env_name_valid(e, len))
		return false;
	if (len >= 7 && strncmp(e, "KEVENT_", 7) == 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(service_only); i++)
		if (strlen(service_only[i]) == len && strncmp(e, service_only[i], len) == 0)
			return false;
	return true;
}

static bool has_name(char *const *v, size_t n, const char *e)
{
	size_t len = strcspn(e, "=");
	for (size_t i = 0; i < n; i++)
		if (strncmp(v[i], e, len + 1) == 0)
			return true;
	return false;
}

int ksession_env_merge(char *const *manager, char *const *own, char ***out)
{
	size_t cap = strv_length(manager) + strv_length(own) + 1, n = 0;
	char **v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	char *const *from[] = {manager, own};
	for (size_t f = 0; f < ARRAY_SIZE(from); f++)
		for (size_t i = 0; from[f] && from[f][i]; i++) {
			const char *e = from[f][i];
			if (!ksession_var_passed(e) || has_name(v, n, e))
				continue;
			if (!(v[n] = strdup(e))) {
				strv_free(v);
				return -ENOMEM;
			}
			n++;
		}
	*out = v;
	return 0;
}

struct ksession_env {
	char **own;	   /* keventd's, at start */
	char **merged;	   /* what handlers get now */
	uint64_t asked_ns; /* the manager, last asked */
#if KEVENT_DBUS
	sd_bus *bus; /* to the user's manager; NULL: not reached */
	bool said;   /* that it cannot be reached, logged */
#endif
};

int ksession_env_new(char *const *own, struct ksession_env **out)
{
	struct ksession_env *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int rc = ksession_env_merge(NULL, own, &s->own);
	if (rc == 0)
		rc = ksession_env_merge(NULL, own, &s->merged);
	if (rc < 0) {
		ksession_env_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

#if KEVENT_DBUS
/* The manager's Environment, or NULL (said once) when it does not answer. */
static char **ask_manager(struct ksession_env *s)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	char **env = NULL;
	int r = 0;
	if (!s->bus) {
		r = sd_bus_open_user(&s->bus);
		if (r >= 0)
			r = sd_bus_set_method_call_timeout(s->bus, KSESSION_ENV_TIMEOUT_US);
	}
	if (r >= 0)
		r = sd_bus_get_property_strv(
			s->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			"org.freedesktop.systemd1.Manager", "Environment", &error, &env);
	if (r < 0) {
		if (!s->said)
			log_info("handlers get keventd's own environment: the user's service "
				 "manager does not say its own (%s)",
				 error.message ? error.message : strerror(-r));
		s->said = true;
		/* a connection that failed is made again next time */
		if (!sd_bus_is_open(s->bus))
			s->bus = sd_bus_flush_close_unref(s->bus);
		env = NULL;
	} else {
		s->said = false;
	}
	sd_bus_error_free(&error);
	return env;
}
#endif

const char *const *ksession_env_get(void *userdata)
{
	struct ksession_env *s = userdata;
	uint64_t now = now_monotonic_ns();
	if (s->asked_ns && now - s->asked_ns < KSESSION_ENV_REFRESH_NS)
		return (const char *const *)s->merged;
	s->asked_ns = now;
#if KEVENT_DBUS
	char **manager = ask_manager(s), **merged = NULL;
	if (manager && ksession_env_merge(manager, s->own, &merged) == 0) {
		strv_free(s->merged);
		s->merged = merged;
	}
	strv_free(manager);
#endif
	return (const char *const *)s->merged;
}

void ksession_env_free(struct ksession_env *s)
{
	if (!s)
		return;
#if KEVENT_DBUS
	sd_bus_flush_close_unref(s->bus);
#endif
	strv_free(s->own);
	strv_free(s->merged);
	free(s);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* A user instance's session (daemon-session.h). */
#include "daemon-session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon-internal.h"
#include "desktop.h"
#include "observer.h"
#include "session-env.h"
#include "util.h"

extern char **environ;

struct kdaemon_session {
	struct ksession_env *env;
	struct kdesktop *desktop;
};

static void desktop_event(void *userdata, const struct kobs_event *e)
{
	kdesktop_event(userdata, e->ev, e->rules, e->n_rules);
}

/* The target desktop, a row after keventd.yaml's targets. */
static void desktop_status(void *userdata, struct kstatus_extra *x)
{
	struct kdesktop_counters c;
	kdesktop_counters(userdata, &c);
	x->notify_enabled = true;
	if (x->notify_n >= KSTATUS_NOTIFY_MAX)
		return;
	struct kstatus_notify *t = &x->notify[x->notify_n++];
	*t = (struct kstatus_notify){.name = KDESKTOP_TARGET,
				     .sent = c.shown,
				     .queued = 0,
				     .failed = c.failed,
				     .sending = true};
	if (c.last_error) {
		snprintf(t->error_buf, sizeof(t->error_buf), "%s", c.last_error);
		t->last_error = t->error_buf;
	}
}

int kdaemon_session_start(struct kdaemon *d)
{
	if (!d->cfg.user)
		return 0;
	struct kdaemon_session *s = calloc(1, sizeof(*s));
	char host[256] = "";
	if (!s)
		return -ENOMEM;
	d->session = s;
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	int rc = ksession_env_new(environ, &s->env);
	if (rc == 0)
		rc = kdesktop_new(d->loop, host, &s->desktop);
	if (rc < 0)
		return rc;
	krunner_set_env(d->runner, ksession_env_get, s->env);
	return kdaemon_observe(d, &(struct kobserver){.name = "desktop",
						      .event = desktop_event,
						      .status = desktop_status,
						      .userdata = s->desktop});
}

void kdaemon_session_free(struct kdaemon *d)
{
	struct kdaemon_session *s = TAKE_PTR(d->session);
	if (!s)
		return;
	kdesktop_free(s->desktop);
	ksession_env_free(s->env);
	free(s);
}

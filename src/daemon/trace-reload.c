// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventd.yaml's trace: entries, read again at a reload (SIGHUP,
 * keventctl reload; config-reload.c reads and checks the file): the trace
 * source is made again with the new entries, or goes when none are left,
 * without a restart.
 */
#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "options.h"
#include "source-trace.h"

static bool str_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_entries(const struct ktrace_config *a, const struct ktrace_config *b)
{
	size_t na = a ? a->n : 0, nb = b ? b->n : 0;
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		const struct ktrace_entry *x = &a->v[i], *y = &b->v[i];
		if (!str_same(x->system, y->system) || !str_same(x->event, y->event) ||
		    !str_same(x->filter, y->filter) || x->type != y->type)
			return false;
	}
	return true;
}

static void say(struct strbuf *report, const char *line)
{
	log_notice("%s", line);
	if (report)
		strbuf_printf(report, "%s\n", line);
}

/* Stops and frees the running trace source, if there is one. */
static void drop_source(struct kdaemon *d)
{
	struct ksource *s = TAKE_PTR(d->source[KEVENT_SOURCE_TRACE]);
	if (s && s->stop)
		s->stop(s);
	if (s && s->free)
		s->free(s);
}

void kdaemon_reload_trace(struct kdaemon *d, struct koptions *o, struct strbuf *report)
{
	int rc;
	if (same_entries(d->cfg.trace, &o->trace))
		return;
	drop_source(d);
	ktrace_config_release(&d->trace);
	d->trace = o->trace; /* taken */
	o->trace = (struct ktrace_config){0};
	d->cfg.trace = &d->trace;
	if (!d->trace.n) {
		say(report, "keventd.yaml: no trace entry left: the trace source is stopped");
		return;
	}
	struct ksource *src = NULL;
	rc = ksource_trace_new(&d->sources_sink, &d->trace, &src);
	if (rc < 0 || !src) {
		log_error("trace source unavailable: %s", strerror(rc < 0 ? -rc : ENODEV));
		return;
	}
	d->source[KEVENT_SOURCE_TRACE] = src;
	if (d->paused[KEVENT_SOURCE_TRACE])
		src->pause(src, true);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_printf(&sb, "keventd.yaml: trace entries changed: reading %zu tracepoint%s",
		      d->trace.n, d->trace.n == 1 ? "" : "s");
	say(report, strbuf_str(&sb));
}

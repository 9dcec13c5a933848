// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's sources, each made from its row (source-type.h): at the
 * start, those --sources names; and at a reload (SIGHUP, keventctl
 * reload, a change in the rule directories), keventd.yaml read again,
 * once, and checked as at start-up, the kernel's checks included: a
 * source whose section changed takes it without a restart (its row's
 * configure) or is made again with it.  A file with a mistake changes
 * nothing, and says why.  The file's other settings take effect at the
 * next start.
 */
#include <errno.h>
#include <string.h>

#include "daemon-internal.h"
#include "log.h"
#include "options.h"

/* Makes the source of kind with its section in force; made: the one
 * another part of keventd made.  One that cannot be made is logged. */
static void make_source(struct kdaemon *d, enum kevent_source kind, struct ksource *made)
{
	struct ksource_args a = {
		.sink = &d->sources_sink,
		.section = d->section[kind],
		.udev_monitor = d->cfg.udev_monitor,
		.thermal_sysfs = d->cfg.thermal_sysfs,
		.made = made,
	};
	struct ksource *src = NULL;
	int rc = ksource_types[kind]->make(&a, &src);
	if (rc < 0)
		log_error("%s source unavailable: %s", kevent_source_name(kind), strerror(-rc));
	d->source[kind] = src;
	if (src && d->paused[kind] && src->pause)
		src->pause(src, true);
}

void kdaemon_start_sources(struct kdaemon *d, const struct ksink *sink,
			   struct ksource *const made[KEVENT_SOURCE_MAX])
{
	d->sources_sink = *sink;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (d->cfg.sources & (1u << i))
			make_source(d, (enum kevent_source)i, made[i]);
	d->sources_started = true;
}

static void say(struct strbuf *report, const char *line)
{
	log_notice("keventd.yaml: %s", line);
	if (report)
		strbuf_printf(report, "keventd.yaml: %s\n", line);
}

/* Stops and frees the running source of kind, if there is one. */
static void drop_source(struct kdaemon *d, enum kevent_source kind)
{
	struct ksource *s = TAKE_PTR(d->source[kind]);
	if (s && s->stop)
		s->stop(s);
	if (s && s->free)
		s->free(s);
}

/* Puts o's section of kind in force (taken from o), the source
 * configured or made again, and says what was done. */
static void apply(struct kdaemon *d, struct koptions *o, enum kevent_source kind,
		  struct strbuf *report)
{
	const struct ksource_type *t = ksource_types[kind];
	const void *now = ksource_section(&o->sections, kind);
	void *old = d->taken.v[kind];
	_cleanup_strbuf_ struct strbuf said = STRBUF_INIT;
	if (t->equal(d->section[kind], now))
		return;
	if (!t->configure) {
		if (!(d->cfg.allowed & (1u << kind)))
			return;
		drop_source(d, kind); /* before its section goes */
	}
	d->taken.v[kind] = TAKE_PTR(o->sections.v[kind]);
	d->section[kind] = now;
	if (t->configure) {
		t->configure(d->source[kind], now, &said);
	} else if (!t->idle || !t->idle(now)) {
		make_source(d, kind, NULL);
		if (d->source[kind] && t->remade)
			t->remade(now, &said);
	} else if (t->remade) {
		t->remade(now, &said);
	}
	ksource_section_free(kind, old); /* after the source that read it */
	if (said.len)
		say(report, strbuf_str(&said));
}

void kdaemon_reload_config(struct kdaemon *d, struct strbuf *report)
{
	if (!d->sources_started || d->stopping || !d->cfg.config_path)
		return;
	_cleanup_(koptions_release) struct koptions o;
	struct kdiags diags = {0};
	koptions_init(&o);
	/* no file (any more): the defaults, as at a start without one */
	int rc = koptions_load_file(&o, d->cfg.config_path, d->cfg.trust, &diags);
	if (rc < 0 && rc != -ENOENT)
		kdiags_add(&diags, d->cfg.config_path, 0, 0, "cannot read: %s", strerror(-rc));
	if (!diags.n && ksource_sections_check(&o.sections, d->cfg.allowed, &diags) < 0) {
		kdiags_free(&diags);
		return;
	}
	if (diags.n) {
		d->stats.reload_errors++;
		kdiags_report(&diags, report);
		say(report, "keeping the current trace entries and fs settings");
		kdiags_free(&diags);
		return;
	}
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (ksource_types[i]->section_size)
			apply(d, &o, (enum kevent_source)i, report);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The outputs as observers (observer.h): the history, the D-Bus forwarder,
 * the MQTT publisher, the notifications and the Alertmanager output, each
 * made from keventd's configuration and told of every event through the
 * record the core fills once.  Each adapter reads only the record (the
 * Alertmanager's the condition table too, through daemon-cond.h), and
 * says its own status fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alertmanager.h"
#include "config.h"
#include "daemon-cond.h"
#include "daemon-internal.h"
#include "dbus.h"
#include "history.h"
#include "log.h"
#include "mqtt.h"
#include "notifier.h"
#include "render.h"

/* --- the history: every event, its runs' steps, the end of its job --- */

static void history_event(void *userdata, const struct kobs_event *e)
{
	/* one it cannot keep, for lack of memory, it counts (khistory_lost()) */
	(void)khistory_add(userdata, e->serial, e->ev, e->rules, e->n_rules, e->stopping,
			   e->ruleset, e->generation);
}

static void history_report(void *userdata, uint64_t serial, const struct krun_report *rep)
{
	khistory_report(userdata, serial, rep);
}

static void history_done(void *userdata, const struct kjob *job)
{
	khistory_done(userdata, job->serial);
}

static void history_status(void *userdata, struct kstatus_extra *x)
{
	x->history_len = khistory_len(userdata);
	x->history_capacity = khistory_capacity(userdata);
	x->history_bytes = khistory_bytes(userdata);
	x->history_lost = khistory_lost(userdata);
}

int kdaemon_history_start(struct kdaemon *d)
{
	if (!d->cfg.history)
		return 0;
	int rc = khistory_new(d->cfg.history, &d->history);
	if (rc < 0)
		return rc;
	khistory_set_max_bytes(d->history, d->cfg.history_bytes
						   ? d->cfg.history_bytes
						   : d->cfg.history * KHISTORY_BYTES_PER_ENTRY);
	return kdaemon_observe(d, &(struct kobserver){.name = "history",
						      .event = history_event,
						      .report = history_report,
						      .done = history_done,
						      .status = history_status,
						      .userdata = d->history});
}

/* --- D-Bus: a signal per event --- */

static void dbus_event(void *userdata, const struct kobs_event *e)
{
	kdbus_emit(userdata, e->ev);
}

void kdaemon_dbus_start(struct kdaemon *d)
{
	int rc = kdbus_new(d->loop, &d->dbus);
	if (rc < 0)
		log_error("D-Bus: cannot start the forwarder (%s): no event signals",
			  strerror(-rc));
	else
		(void)kdaemon_observe(d, &(struct kobserver){.name = "dbus",
							     .event = dbus_event,
							     .userdata = d->dbus});
}

/* --- MQTT: a message per event, and the broker's counters --- */

static void mqtt_event(void *userdata, const struct kobs_event *e)
{
	kmqtt_publish(userdata, e->ev, e->n_rules > 0);
}

static void mqtt_status(void *userdata, struct kstatus_extra *x)
{
	struct kmqtt_counters c;
	kmqtt_counters(userdata, &c);
	x->mqtt_off = false;
	x->mqtt_enabled = true;
	x->mqtt_connected = c.connected;
	x->mqtt_disconnected = !c.connected;
	x->mqtt_published = c.published;
	x->mqtt_acked = c.acked;
	x->mqtt_spooled = c.spooled;
	x->mqtt_dropped = c.dropped;
	x->mqtt_received = c.received;
	x->mqtt_duplicates = c.duplicates;
	x->mqtt_attempts = c.attempts;
	x->mqtt_corrupt = c.corrupt;
	x->mqtt_publishing = !c.off;
	x->mqtt_off_why = NULL;
	x->mqtt_publishing_text = "on";
	if (c.off) {
		snprintf(x->mqtt_off_buf, sizeof(x->mqtt_off_buf), "%s", c.off);
		snprintf(x->mqtt_publishing_buf, sizeof(x->mqtt_publishing_buf), "off (%s)",
			 x->mqtt_off_buf);
		x->mqtt_off_why = x->mqtt_off_buf;
		x->mqtt_publishing_text = x->mqtt_publishing_buf;
	}
}

/* The broker of keventd.yaml: whatever goes wrong with it turns publishing
 * off (kmqtt_new() says why) and never stops keventd.  sink: the source
 * mqtt's, or NULL when it is not wanted. */
struct ksource *kdaemon_mqtt_start(struct kdaemon *d, const struct ksink *sink)
{
	const char *why = NULL;
	int rc = kmqtt_new(d->loop, d->cfg.mqtt, sink, &d->mqtt, &why);
	if (rc < 0) {
		log_error("mqtt: %s%s%s: publishing is off, and so is the source mqtt",
			  why ? why : "", why ? ": " : "", strerror(-rc));
		return NULL;
	}
	(void)kdaemon_observe(d, &(struct kobserver){.name = "mqtt",
						     .event = mqtt_event,
						     .status = mqtt_status,
						     .userdata = d->mqtt});
	return sink && d->cfg.mqtt->n_subscribe ? kmqtt_source(d->mqtt) : NULL;
}

/* --- notifications: a delivery per rule's target, and their counters --- */

static void notify_event(void *userdata, const struct kobs_event *e)
{
	knotifier_event(userdata, e->ev, e->rules, e->n_rules);
}

static void notify_status(void *userdata, struct kstatus_extra *x)
{
	struct knotifier *n = userdata;
	x->notify_enabled = true;
	x->notify_damaged = knotifier_damaged(n);
	x->notify_unknown = knotifier_unknown(n);
	x->notify_n = knotifier_n_targets(n);
	if (x->notify_n > KSTATUS_NOTIFY_MAX)
		x->notify_n = KSTATUS_NOTIFY_MAX;
	for (size_t i = 0; i < x->notify_n; i++) {
		struct kstatus_notify *t = &x->notify[i];
		struct knotify_counters c;
		t->name = knotifier_counters(n, i, &c);
		t->sent = c.sent;
		t->queued = c.queued;
		t->retried = c.retried;
		t->failed = c.failed;
		t->dropped = c.dropped;
		t->sending = !c.off;
		t->off = t->last_error = NULL;
		if (c.off) {
			snprintf(t->off_buf, sizeof(t->off_buf), "%s", c.off);
			t->off = t->off_buf;
		}
		if (c.last_error) {
			snprintf(t->error_buf, sizeof(t->error_buf), "%s", c.last_error);
			t->last_error = t->error_buf;
		}
	}
}

int kdaemon_notify_start(struct kdaemon *d)
{
	const char *why = NULL;
	/* the queue in --lib-dir, opened and checked once for all that keep
	 * something there (a directory that is not keventd's alone stops the
	 * start, logged); without one (--lib-dir none) deliveries are kept in
	 * memory alone */
	int rc = kdaemon_lib_open(d);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	const char *lib = rc == 0 ? d->cfg.lib_dir : NULL;
	rc = knotifier_new(d->loop, d->cfg.notify, lib, &d->notifier, &why);
	if (rc < 0) {
		log_error("notify: %s%s%s: no notification is sent", why ? why : "",
			  why ? ": " : "", strerror(-rc));
		return 0;
	}
	(void)kdaemon_observe(d, &(struct kobserver){.name = "notify",
						     .event = notify_event,
						     .status = notify_status,
						     .userdata = d->notifier});
	return 0;
}

/* --- Alertmanager: every condition that holds, as an alert --- */

struct kdaemon_am {
	struct kdaemon *d;
	struct kam *am;
	char host[256];
	/* while filling a post */
	struct strbuf *body;
	uint64_t ends_at;
};

static void am_one(void *userdata, const struct kcond_row *r)
{
	struct kdaemon_am *g = userdata;
	const struct kam_config *cfg = g->d->cfg.alertmanager;
	kam_sep(g->body);
	kcond_render_alert(g->body, r, g->host, (const char *const *)cfg->labels, cfg->n_labels,
			   g->ends_at);
}

static size_t am_fill(void *userdata, uint64_t ends_at, struct strbuf *body)
{
	struct kdaemon_am *g = userdata;
	g->body = body;
	g->ends_at = ends_at;
	size_t n = kdaemon_cond_each(g->d, am_one, g);
	g->body = NULL;
	return n;
}

/* A condition event: its row's alert resolved when it cleared, and a post. */
static void am_event(void *userdata, const struct kobs_event *e)
{
	struct kdaemon_am *g = userdata;
	const struct kevent *ev = e->ev;
	const char *name = kevent_prop(ev, "Condition"), *key = kevent_prop(ev, "Key");
	if (ev->source != KEVENT_SOURCE_CONDITION || ev->host || !name || !*name)
		return;
	if (!key)
		key = ev->object;
	_cleanup_strbuf_ struct strbuf id = STRBUF_INIT, alert = STRBUF_INIT;
	strbuf_printf(&id, "%s\x1f%s", name, key);
	const struct kcond_row *r = kdaemon_cond_find(g->d, name, key);
	const struct kam_config *cfg = g->d->cfg.alertmanager;
	if (r && !kcond_row_holds(r)) {
		kcond_render_alert(&alert, r, g->host, (const char *const *)cfg->labels,
				   cfg->n_labels, 0);
		if (id.oom || alert.oom ||
		    kam_resolved(g->am, strbuf_str(&id), strbuf_str(&alert)) < 0)
			log_error("alertmanager: out of memory: the alert of %s %s is not resolved "
				  "(Alertmanager resolves it by its endsAt)",
				  name, key);
	} else if (r && !id.oom) {
		kam_holds(g->am, strbuf_str(&id));
	}
	kam_changed(g->am);
}

static void am_status(void *userdata, struct kstatus_extra *x)
{
	struct kdaemon_am *g = userdata;
	struct kam_counters c;
	kam_counters(g->am, &c);
	x->am_enabled = true;
	x->am_posts = c.posts;
	x->am_failed = c.failed;
	x->am_alerts = kdaemon_cond_each(g->d, NULL, NULL);
	x->am_resolved = c.resolved;
	x->am_up = c.up;
	x->am_down = !c.up;
	x->am_off = x->am_last_error = NULL;
	if (c.off) {
		snprintf(x->am_off_buf, sizeof(x->am_off_buf), "%s", c.off);
		x->am_off = x->am_off_buf;
	}
	if (c.last_error) {
		snprintf(x->am_error_buf, sizeof(x->am_error_buf), "%s", c.last_error);
		x->am_last_error = x->am_error_buf;
	}
}

void kdaemon_am_start(struct kdaemon *d)
{
	const char *why = NULL;
	struct kdaemon_am *g = calloc(1, sizeof(*g));
	if (!g) {
		log_error("alertmanager: out of memory: no alert is posted");
		return;
	}
	g->d = d;
	if (gethostname(g->host, sizeof(g->host) - 1) < 0 || !g->host[0])
		strcpy(g->host, "localhost");
	if (!d->cond)
		log_warning("alertmanager: keventd keeps no condition table (--lib-dir none, or "
			    "condition not in --sources): no alert is posted");
	int rc = kam_new(d->loop, d->cfg.alertmanager, am_fill, g, &g->am, &why);
	if (rc < 0) {
		log_error("alertmanager: %s%s%s: no alert is posted", why ? why : "",
			  why ? ": " : "", strerror(-rc));
		free(g);
		return;
	}
	d->am = g;
	(void)kdaemon_observe(d, &(struct kobserver){.name = "alertmanager",
						     .event = am_event,
						     .status = am_status,
						     .userdata = g});
}

void kdaemon_outputs_free(struct kdaemon *d)
{
	if (d->am) {
		kam_free(d->am->am);
		free(TAKE_PTR(d->am));
	}
	knotifier_free(TAKE_PTR(d->notifier));
	kdbus_free(TAKE_PTR(d->dbus));
	kmqtt_free(TAKE_PTR(d->mqtt));
	khistory_free(TAKE_PTR(d->history));
}

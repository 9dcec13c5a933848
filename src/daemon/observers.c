// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The outputs as observers (observer.h): the history, the D-Bus forwarder
 * and the MQTT publisher, each made from keventd's configuration and told
 * of every event through the record the core fills once.  Each adapter
 * reads only the record, and says its own status fields.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "daemon-internal.h"
#include "dbus.h"
#include "history.h"
#include "log.h"
#include "mqtt.h"
#include "notifier.h"

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

void kdaemon_outputs_free(struct kdaemon *d)
{
	knotifier_free(TAKE_PTR(d->notifier));
	kdbus_free(TAKE_PTR(d->dbus));
	kmqtt_free(TAKE_PTR(d->mqtt));
	khistory_free(TAKE_PTR(d->history));
}

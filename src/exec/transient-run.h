/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Transient runs: a rule with transient: true runs as a transient systemd
 * service, started with org.freedesktop.systemd1.Manager.StartTransientUnit
 * on the system bus (keventd.rules(5), Transient units).  Its own sd-bus
 * connection, watched in keventd's loop and opened at the first run;
 * every call is asynchronous.  The unit's start (its job done) goes back
 * to the runner (krunner_unit_started()), so the object's queue moves on;
 * its end (the service's result, exit status or signal) is logged as a
 * run's record and handed to the owner's ended().  Built when KEVENT_DBUS
 * (sd-bus) is on.
 */
#ifndef KEVENT_TRANSIENT_RUN_H
#define KEVENT_TRANSIENT_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "loop.h"
#include "plan.h"
#include "runner.h"

struct ktrun;

/* Whether transient rules can run here: this build has sd-bus and systemd
 * is the service manager (sd_booted()). */
bool ktrun_available(void);

/* ended() gets the end of a unit that started: rep->job is NULL, rep->rule
 * (alive until it returns), rep->unit, the outcome KRUN_EXITED or
 * KRUN_KILLED, status, timed_out, duration_ms and oom_kills; serial is the
 * owner's number of the event (kjob.serial). */
struct ktrun_ops {
	void (*ended)(void *userdata, uint64_t serial, const struct krun_report *rep);
	/* u's unit started (error 0) or could not (-errno):
	 * krunner_unit_started() */
	void (*started)(void *userdata, struct krunner_unit *u, int error);
	/* u's session rule found no active session: krunner_unit_skipped() */
	void (*skipped)(void *userdata, struct krunner_unit *u);
};

/* 0, or -ENOMEM; connects nothing yet. */
int ktrun_new(struct kloop *loop, const struct ktrun_ops *ops, void *userdata, struct ktrun **out);
/* Starts u's unit (krunner_ops.start_unit): 0 when under way, or -errno. */
int ktrun_start(struct ktrun *t, struct krunner_unit *u, const struct kplan *plan,
		const char *path);
/* Units started and not yet ended. */
size_t ktrun_running(const struct ktrun *t);
#if KEVENT_DBUS
#include <systemd/sd-bus.h>

#include "transient.h"
/* The StartTransientUnit call for tu on bus (which need not be connected):
 * the one encoder of every transient and session run.  The handler's
 * command goes as ExecStartEx with the flag no-env-expand, so that systemd
 * leaves "$NAME", "${NAME}" and "$$" in argv as they are.  0, or -errno. */
int ktrun_start_message(sd_bus *bus, const struct ktransient *tu, sd_bus_message **out);

/* One property of an a{sv} to read: its name, its variant's signature and
 * the places its one or two values go (b: NULL for one). */
struct ktrun_prop {
	const char *key, *sig;
	void *a, *b;
};
/* The one reader of a reply's a{sv} (a unit's result, a session's
 * properties): reads it at m's place into the places of props[0..n) by
 * name, skipping the other properties.  >= 0, or -errno. */
int ktrun_read_props(sd_bus_message *m, const struct ktrun_prop *props, size_t n);
#endif

/* Disconnects: the units go on under systemd, their ends not logged (said
 * once).  Starts under way must be over (the runner's jobs done).  NULL is
 * fine. */
void ktrun_free(struct ktrun *t);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The way out, the mirror of the way in (source.h): what listens to the
 * events and to what became of them (the history, the D-Bus forwarder,
 * the MQTT publisher, the monitors of the control socket) is told through
 * one record filled once per event, and callbacks for each run's report,
 * a job's end and its own status fields.  An observer reads the record;
 * it never reaches into struct kdaemon.  The outputs' adapters are in
 * observers.c; docs/HACKING.md says how to add one.
 */
#ifndef KEVENT_OBSERVER_H
#define KEVENT_OBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "rules.h"
#include "ruleset.h"
#include "runner.h"
#include "scheduler.h"
#include "stats.h"

/* One event as every observer sees it, after matching. */
struct kobs_event {
	const struct kevent *ev;
	uint64_t serial;		  /* the daemon's number for it (kjob.serial) */
	const struct krule *const *rules; /* every rule it matched, in order */
	size_t n_rules;
	const struct kruleset *ruleset; /* the rule set in force */
	uint64_t generation;		/* and its number */
	bool stopping;			/* keventd is stopping: nothing more starts */
};

struct kobserver {
	const char *name;
	void (*event)(void *userdata, const struct kobs_event *e);
	/* a step of a rule's run for event serial, a transient unit's end
	 * (after its job) included; NULL: not wanted */
	void (*report)(void *userdata, uint64_t serial, const struct krun_report *rep);
	/* every rule of the event's job has run or was left out */
	void (*done)(void *userdata, const struct kjob *job);
	/* its own fields of keventctl status */
	void (*status)(void *userdata, struct kstatus_extra *x);
	void *userdata;
};

#endif

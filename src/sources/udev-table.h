/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The devices the udev source knew, kept in the state directory
 * ("udev.devices", a "DEVPATH SUBSYSTEM" line each, sorted) so that a
 * start, or a resync after an overrun, reports what came and went
 * meanwhile.  Pure: parsed from and rendered to text, diffed in memory.
 */
#ifndef KEVENT_UDEV_TABLE_H
#define KEVENT_UDEV_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct kudevtab {
	char **v; /* "DEVPATH SUBSYSTEM", sorted by DEVPATH */
	size_t n, cap;
};

void kudevtab_release(struct kudevtab *t);
/* Sets (or replaces) devpath's subsystem; removes it with subsystem
 * NULL.  A devpath outside /devices/ (a module's, a driver's, a
 * subsystem's uevent) is no device and is left out.  Returns whether the
 * table changed, or -ENOMEM. */
int kudevtab_set(struct kudevtab *t, const char *devpath, const char *subsystem);
/* The table of text (lines as kudevtab_render() writes them; a line of
 * another shape is skipped).  0 or -ENOMEM. */
int kudevtab_parse(struct kudevtab *t, const char *text, size_t len);
void kudevtab_render(const struct kudevtab *t, struct strbuf *sb);
/* Calls fn for each device of now missing from was ("add") and each of
 * was missing from now ("remove"), in DEVPATH order. */
void kudevtab_diff(const struct kudevtab *was, const struct kudevtab *now,
		   void (*fn)(void *userdata, const char *action, const char *devpath,
			      const char *subsystem),
		   void *userdata);

#endif

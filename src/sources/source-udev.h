/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "udev" source: uevents through libudev's monitor, from udevd when it
 * runs (or --udev-monitor udev), else straight from the kernel, mapped to
 * events as uevent-map.h says.
 */
#ifndef KEVENT_SOURCE_UDEV_H
#define KEVENT_SOURCE_UDEV_H

#include "source.h"

/* Where uevents come from (--udev-monitor). */
enum kudev_monitor { KUDEV_AUTO, KUDEV_UDEV, KUDEV_KERNEL };

int ksource_udev_new(const struct ksink *sink, enum kudev_monitor mode, struct ksource **out);

struct kudev_trigger;
/* A trigger that waited is over: rc 0 (every device reported) or -errno. */
typedef void (*ktrigger_done_fn)(struct kudev_trigger *t, int rc, void *userdata);

/*
 * Reports the devices present, of the subsystems given (none: of all), as
 * uevents with ACTION action ("add" or "change") through s's sink, each
 * flagged synthetic: made by keventd from libudev's enumeration, for
 * keventd alone (no uevent file is written, no udev rule runs again).
 * s is the udev source.  The devices go in while the source's share of
 * the queue has room (ksink_room()), never past it: 1 when all went in at
 * once; 0 when the rest waits for the source to resume, and done is
 * called when they are in (or it failed).  Either way *out is the
 * trigger, the caller's to free (freeing a waiting one cancels it).
 * -EINVAL (s is not the udev source), -ENOMEM or another -errno of the
 * enumeration, with no trigger.
 */
int ksource_udev_trigger(struct ksource *s, const char *action, const char *const *subsystems,
			 size_t n_subsystems, ktrigger_done_fn done, void *userdata,
			 struct kudev_trigger **out);
/* The devices reported so far (one that cannot be mapped is rejected and
 * counted, not reported). */
size_t ksource_udev_trigger_count(const struct kudev_trigger *t);
void ksource_udev_trigger_free(struct kudev_trigger *t);

#endif

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

/*
 * Reports the devices present, of the subsystems given (none: of all), as
 * uevents with ACTION action ("add" or "change") through s's sink, each
 * flagged synthetic: made by keventd from libudev's enumeration, for
 * keventd alone (no uevent file is written, no udev rule runs again).
 * s is the udev source.  0 and *n, the devices reported (one that cannot
 * be mapped is rejected and counted, and not in *n); -EINVAL (s is not the
 * udev source), -ENOMEM or another -errno of the enumeration.
 */
int ksource_udev_trigger(struct ksource *s, const char *action, const char *const *subsystems,
			 size_t n_subsystems, size_t *n);

#endif

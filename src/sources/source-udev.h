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

#endif

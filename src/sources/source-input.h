/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "input" source: the power, sleep and media keys and the lid, tablet,
 * dock and headphone switches of evdev devices (libevdev), found and
 * followed through libudev, mapped as input-map.h says.  A device is
 * opened read-only and never grabbed: everyone else still sees every key.
 */
#ifndef KEVENT_SOURCE_INPUT_H
#define KEVENT_SOURCE_INPUT_H

#include "source-udev.h"

/* mode: where the devices' add and remove uevents come from, as for the
 * udev source (--udev-monitor). */
int ksource_input_new(const struct ksink *sink, enum kudev_monitor mode, struct ksource **out);

#endif

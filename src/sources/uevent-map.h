/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mapping a uevent (its KEY=value properties) to an event: type by
 * subsystem (block: storage, power_supply: power, else hotplug), object
 * "/org/kernel" + DEVPATH, signal ACTION, a "KEY: value" payload line per
 * property, and the properties as the hotplug environment.  Pure, for
 * tests and the fuzzer.
 */
#ifndef KEVENT_UEVENT_MAP_H
#define KEVENT_UEVENT_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KEVENT_UDEV_OBJECT_PREFIX "/org/kernel"

int kuevent_map(char *const *props, size_t n, uint64_t timestamp, struct kevent **out,
		const char **why);

#endif

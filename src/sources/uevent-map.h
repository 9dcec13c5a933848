/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mapping a uevent (its KEY=value properties) to an event: type by
 * subsystem (block: storage, power_supply: power, else hotplug), object
 * "/org/kernel" + DEVPATH, signal ACTION, a "KEY: value" payload line per
 * property, and the properties as the hotplug environment, as the kernel
 * gave them (DEVNAME=sda; the payload's DEVNAME is the /dev path, as
 * udevd gives it).  A payload that would be over KEVENT_PAYLOAD_MAX has
 * its longest values cut until it fits, and a "Truncated: NAME..." line
 * names them: a long serial or label cannot make a device escape a rule.
 * Pure, for tests and the fuzzer.
 */
#ifndef KEVENT_UEVENT_MAP_H
#define KEVENT_UEVENT_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KEVENT_UDEV_OBJECT_PREFIX "/org/kernel"

/* 0 with *out and *truncated, the number of values cut; -EINVAL with *why;
 * -ENOMEM. */
int kuevent_map(char *const *props, size_t n, uint64_t timestamp, struct kevent **out,
		unsigned *truncated, const char **why);

#endif

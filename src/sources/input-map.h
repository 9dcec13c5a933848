/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The input source's mapping: which evdev keys and switches keventd
 * reports, and the event of each (docs/sources.md).  Every other code is
 * dropped here, before anything is formatted from it: keventd is not a key
 * logger.  Pure, for the tests and the fuzzer.
 */
#ifndef KEVENT_INPUT_MAP_H
#define KEVENT_INPUT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KINPUT_KEY_PREFIX    "/org/kernel/input/key/"
#define KINPUT_SWITCH_PREFIX "/org/kernel/input/switch/"

/* One code keventd reports: EV_KEY or EV_SW, its number, the last part of
 * its object ("power") and the kernel's name of it ("KEY_POWER"). */
struct kinput_code {
	uint16_t type;
	uint16_t code;
	const char *name;
	const char *code_name;
};

/* The reported codes, keys first, then switches. */
extern const struct kinput_code kinput_codes[];
extern const size_t kinput_n_codes;

/* The reported code (type, code), or NULL for every other one. */
const struct kinput_code *kinput_code_find(unsigned type, unsigned code);

/*
 * The event of one evdev event of the device devnode (/dev/input/eventN)
 * whose name is name.  A key's value 1 is press, 0 release; a switch's
 * non-zero on, 0 off.  *out is NULL and 0 returned when nothing is
 * reported: an unlisted code, a key's autorepeat (2) or any other value,
 * a type other than EV_KEY and EV_SW, or a key with initial set.  initial:
 * a switch's state as it was found (start-up, or its device appeared),
 * Initial: yes in the payload.  Characters of name or devnode that are not
 * printable ASCII become '?'.  0, -EINVAL with *why, or -ENOMEM.
 */
int kinput_event(unsigned type, unsigned code, int value, bool initial, const char *devnode,
		 const char *name, uint64_t seqnum, uint64_t timestamp, struct kevent **out,
		 const char **why);

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The input source's mapping: kinput_event() of a stream of evdev events.
 * The input is a device name up to a NUL, then records of 8 bytes, each
 * an event as the kernel's struct input_event ends: type (u16, its top bit
 * standing for "initial state"), code (u16), value (s32).  Only a listed
 * code may ever make an event, a key only on 0 or 1 and never as an
 * initial state, with the right object and signal and exactly its payload
 * lines: nothing in a name can forge another line or another code.
 */
#include <errno.h>
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "input-map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, 8192))
		return 0;
	const uint8_t *nul = memchr(data, '\0', size);
	size_t name_len = nul ? (size_t)(nul - data) : size;
	char *name = fuzz_cstring(data, name_len);
	if (!name)
		return 0;
	size_t at = nul ? name_len + 1 : size;
	for (uint64_t seq = 1; at + 8 <= size; at += 8, seq++) {
		uint16_t type, code;
		int32_t value;
		memcpy(&type, data + at, 2);
		memcpy(&code, data + at + 2, 2);
		memcpy(&value, data + at + 4, 4);
		bool initial = type & 0x8000;
		type &= 0x7fff;
		struct kevent *ev = NULL;
		const char *why = NULL;
		int rc = kinput_event(type, code, value, initial, "/dev/input/event0", name, seq, 2,
				      &ev, &why);
		FUZZ_CHECK(rc == 0 || rc == -ENOMEM || (rc == -EINVAL && why));
		FUZZ_CHECK(rc == 0 || !ev);
		const struct kinput_code *c = kinput_code_find(type, code);
		if (!c || (type == EV_KEY && (initial || (value != 0 && value != 1)))) {
			FUZZ_CHECK(!ev);
			continue;
		}
		if (!ev)
			continue; /* -EINVAL: a name too long for a payload */
		FUZZ_CHECK(c->type == type && c->code == code);
		char object[64];
		snprintf(object, sizeof(object), "%s%s",
			 type == EV_KEY ? KINPUT_KEY_PREFIX : KINPUT_SWITCH_PREFIX, c->name);
		FUZZ_CHECK(strcmp(ev->object, object) == 0);
		const char *signal =
			type == EV_KEY ? (value ? "press" : "release") : (value ? "on" : "off");
		FUZZ_CHECK(strcmp(ev->signal, signal) == 0);
		FUZZ_CHECK(ev->type == KEVENT_POWER && ev->source == KEVENT_SOURCE_INPUT);
		FUZZ_CHECK(ev->seqnum == seq);
		FUZZ_CHECK(ev->n_props == (initial ? 4u : 3u));
		FUZZ_CHECK(strcmp(kevent_prop(ev, "Code"), c->code_name) == 0);
		FUZZ_CHECK(strcmp(kevent_prop(ev, "Device"), "/dev/input/event0") == 0);
		FUZZ_CHECK(!initial || strcmp(kevent_prop(ev, "Initial"), "yes") == 0);
		FUZZ_CHECK(kevent_check((int)ev->type, ev->object, ev->signal, ev->payload, &why) ==
			   0);
		/* one line of printable ASCII for the name, whatever it was */
		for (const char *p = ev->payload; *p; p++)
			FUZZ_CHECK(*p == '\n' || (*p >= ' ' && *p <= '~'));
		kevent_free(ev);
	}
	free(name);
	return 0;
}

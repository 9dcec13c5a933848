// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The acpi source: the stock kernel's "acpi_event" Generic Netlink
 * messages.  The input is one netlink message, decoded with kacpi_decode()
 * and, when it decodes, mapped with kacpi_event(); the event must be within
 * the limits, of the right object and signal, and carry exactly the five
 * payload lines: nothing in a class or bus id can forge another.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "acpi-msg.h"
#include "fuzz.h"

#define FAMILY 0x17 /* as tests/unit/test-acpi-msg.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, 4096))
		return 0;
	void *buf = malloc(size ? size : 1); /* aligned as a receive buffer */
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct kacpi_msg m;
	const char *why = NULL;
	int rc = kacpi_decode(buf, size, FAMILY, &m, &why);
	FUZZ_CHECK(rc == 0 || ((rc == -EINVAL || rc == -EBADMSG) && why));
	if (rc == 0) {
		struct kevent *ev = NULL;
		FUZZ_CHECK(memchr(m.device_class, '\0', sizeof(m.device_class)));
		FUZZ_CHECK(memchr(m.bus_id, '\0', sizeof(m.bus_id)));
		rc = kacpi_event(&m, 1, 2, &ev, &why);
		FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
		if (rc == 0) {
			char object[64];
			snprintf(object, sizeof(object), KACPI_OBJECT_PREFIX "%s", m.device_class);
			FUZZ_CHECK(kevent_check((int)ev->type, ev->object, ev->signal, ev->payload,
						&why) == 0);
			FUZZ_CHECK(ev->type == KEVENT_POWER && ev->source == KEVENT_SOURCE_ACPI);
			FUZZ_CHECK(strcmp(ev->object, object) == 0);
			FUZZ_CHECK(ev->n_props == 5);
			FUZZ_CHECK(strcmp(kevent_prop(ev, "Class"), m.device_class) == 0);
			FUZZ_CHECK(strncmp(kevent_prop(ev, "Acpid"), m.device_class,
					   strlen(m.device_class)) == 0);
			kevent_free(ev);
		}
	}
	free(buf);
	return 0;
}

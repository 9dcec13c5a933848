/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stock kernel's ACPI events, as acpid reads them: the Generic Netlink
 * family "acpi_event", group "acpi_mc_group", command 1 with one
 * attribute (1) holding the kernel's struct acpi_genl_event (device class,
 * bus id, event type, data).  Decoding and mapping to an event
 * (docs/sources.md) are pure, for the tests and the fuzzer.
 */
#ifndef KEVENT_ACPI_MSG_H
#define KEVENT_ACPI_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KACPI_GENL_FAMILY     "acpi_event"
#define KACPI_GENL_GROUP      "acpi_mc_group"
#define KACPI_GENL_CMD_EVENT  1
#define KACPI_GENL_ATTR_EVENT 1
#define KACPI_OBJECT_PREFIX   "/org/kernel/acpi/"

/* struct acpi_genl_event of drivers/acpi/event.c, as it lies in the
 * attribute: class (20 bytes) and bus id (15), NUL-terminated, then the
 * type and the data, u32 each, 4-aligned. */
#define KACPI_CLASS_LEN	 20
#define KACPI_BUS_ID_LEN 15
#define KACPI_EVENT_LEN	 44

struct kacpi_msg {
	char device_class[KACPI_CLASS_LEN];
	char bus_id[KACPI_BUS_ID_LEN];
	uint32_t type;
	uint32_t data;
};

/* Decodes the netlink message at buf (len bytes available, which may hold
 * more than this message) of the family whose id is family_id.  0 with *m;
 * -EINVAL or -EBADMSG with *why: wrong family or command, the attribute
 * missing, of another size, or with a string that is not terminated, empty
 * (the class) or not printable ASCII without spaces. */
int kacpi_decode(const void *buf, size_t len, int family_id, struct kacpi_msg *m, const char **why);

/* The event of m: type power, object /org/kernel/acpi/CLASS, signal
 * pressed (a button/ class), online or offline (ac_adapter, by data),
 * change (battery), else the type as 0x%02x; payload Class:, Bus-Id:,
 * Event:, Data: and Acpid:, the line acpid prints.  0, -EINVAL with *why,
 * or -ENOMEM. */
int kacpi_event(const struct kacpi_msg *m, uint64_t seqnum, uint64_t timestamp, struct kevent **out,
		const char **why);

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/* Decoding and mapping the ACPI family's events (acpi-msg.h). */
#include "acpi-msg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "genl-msg.h"
#include "util.h"

/* A string field: terminated within its size, and printable ASCII with no
 * blank, since it becomes part of an object and of payload lines. */
static bool field_ok(const char *s, size_t size, bool may_be_empty)
{
	size_t n = strnlen(s, size);
	if (n == size || (n == 0 && !may_be_empty))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

int kacpi_decode(const void *buf, size_t len, int family_id, struct kacpi_msg *m, const char **why)
{
	static const struct kgenl_shape shape = {.cmds = {KACPI_GENL_CMD_EVENT},
						 .ncmds = 1,
						 .max = KACPI_GENL_ATTR_EVENT,
						 .other = "unknown ACPI event command"};
	struct kgenl_attr at[KACPI_GENL_ATTR_EVENT + 1];
	uint8_t cmd;
	int rc = kgenl_decode(buf, len, family_id, &shape, &cmd, at, why);
	if (rc < 0)
		return rc;
	const struct kgenl_attr *a = &at[KACPI_GENL_ATTR_EVENT];
	if (!a->seen) {
		*why = "ACPI message without an event";
		return -EINVAL;
	}
	if (a->len != KACPI_EVENT_LEN) {
		*why = "ACPI event of an unexpected size";
		return -EINVAL;
	}
	memcpy(m->device_class, a->data, KACPI_CLASS_LEN);
	memcpy(m->bus_id, a->data + KACPI_CLASS_LEN, KACPI_BUS_ID_LEN);
	memcpy(&m->type, a->data + 36, sizeof(m->type));
	memcpy(&m->data, a->data + 40, sizeof(m->data));
	if (!field_ok(m->device_class, KACPI_CLASS_LEN, false)) {
		*why = "ACPI device class empty, unterminated or not printable";
		return -EINVAL;
	}
	if (!field_ok(m->bus_id, KACPI_BUS_ID_LEN, true)) {
		*why = "ACPI bus id unterminated or not printable";
		return -EINVAL;
	}
	return 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int kacpi_event(const struct kacpi_msg *m, uint64_t seqnum, uint64_t timestamp, struct kevent **out,
		const char **why)
{
	char signal[16];
	if (has_prefix(m->device_class, "button/"))
		strcpy(signal, "pressed");
	else if (strcmp(m->device_class, "ac_adapter") == 0)
		strcpy(signal, m->data ? "online" : "offline");
	else if (strcmp(m->device_class, "battery") == 0)
		strcpy(signal, "change");
	else
		snprintf(signal, sizeof(signal), "0x%02" PRIx32, m->type);

	_cleanup_strbuf_ struct strbuf object = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf payload = STRBUF_INIT;
	strbuf_printf(&object, KACPI_OBJECT_PREFIX "%s", m->device_class);
	strbuf_printf(&payload,
		      "Class: %s\nBus-Id: %s\nEvent: 0x%08" PRIx32 "\nData: 0x%08" PRIx32
		      "\nAcpid: %s %s %08" PRIx32 " %08" PRIx32 "\n",
		      m->device_class, m->bus_id, m->type, m->data, m->device_class, m->bus_id,
		      m->type, m->data);
	if (object.oom || payload.oom)
		return -ENOMEM;
	return kevent_new(KEVENT_POWER, object.buf, signal, payload.buf, KEVENT_SOURCE_ACPI, seqnum,
			  timestamp, NULL, 0, out, why);
}

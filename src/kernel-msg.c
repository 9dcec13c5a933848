// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel-msg.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <stdio.h>
#include <string.h>

#include "genl-msg.h"
#include "util.h"

static int str_attr(const struct kgenl_attr *a, size_t max, const char **out, const char **why,
		    const char *name)
{
	static char msg[96];
	if (!a->seen) {
		snprintf(msg, sizeof(msg), "missing %s attribute", name);
		*why = msg;
		return -EINVAL;
	}
	if (a->len == 0 || a->data[a->len - 1] != '\0' || strlen(a->data) + 1 != a->len) {
		snprintf(msg, sizeof(msg), "%s attribute is not one NUL-terminated string", name);
		*why = msg;
		return -EINVAL;
	}
	if (a->len - 1 > max) {
		snprintf(msg, sizeof(msg), "%s attribute longer than %zu bytes", name, max);
		*why = msg;
		return -EINVAL;
	}
	*out = a->data;
	return 0;
}

static int u64_attr(const struct kgenl_attr *a, uint64_t *out)
{
	if (!a->seen || a->len != sizeof(uint64_t))
		return -EINVAL;
	memcpy(out, a->data, sizeof(*out));
	return 0;
}

int kkernel_decode(const void *buf, size_t len, int family_id, struct kevent **out,
		   const char **why)
{
	struct kgenl_attr at[KEVENT_A_MAX + 1];
	const char *attrs;
	size_t attrs_len;
	uint8_t cmd;

	int rc = kgenl_header(buf, len, family_id, &cmd, &attrs, &attrs_len, why);
	if (rc < 0)
		return rc;
	if (cmd != KEVENT_CMD_EVENT) {
		*why = "unknown kevent command";
		return -EINVAL;
	}
	rc = kgenl_attrs(attrs, attrs_len, at, KEVENT_A_MAX, KEVENT_A_PAD, why);
	if (rc < 0)
		return rc;

	uint32_t type;
	if (!at[KEVENT_A_TYPE].seen || at[KEVENT_A_TYPE].len != sizeof(type)) {
		*why = "missing or malformed type attribute";
		return -EINVAL;
	}
	memcpy(&type, at[KEVENT_A_TYPE].data, sizeof(type));
	const char *object, *signal, *payload = "";
	uint64_t seqnum, timestamp;
	if (str_attr(&at[KEVENT_A_OBJECT], KEVENT_OBJECT_MAX, &object, why, "object") < 0 ||
	    str_attr(&at[KEVENT_A_SIGNAL], KEVENT_SIGNAL_MAX, &signal, why, "signal") < 0)
		return -EINVAL;
	if (at[KEVENT_A_PAYLOAD].seen &&
	    str_attr(&at[KEVENT_A_PAYLOAD], KEVENT_PAYLOAD_MAX, &payload, why, "payload") < 0)
		return -EINVAL;
	if (u64_attr(&at[KEVENT_A_SEQNUM], &seqnum) < 0 ||
	    u64_attr(&at[KEVENT_A_TIMESTAMP], &timestamp) < 0) {
		*why = "missing or malformed seqnum or timestamp attribute";
		return -EINVAL;
	}
	if (type > KEVENT_TYPE_MAX) {
		*why = "unknown event type";
		return -EINVAL;
	}
	return kevent_new((int)type, object, signal, payload, KEVENT_SOURCE_KERNEL, seqnum,
			  timestamp, NULL, 0, out, why);
}

// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel-msg.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <string.h>

#include "genl-msg.h"
#include "util.h"

/* A string attribute, with its limit and the reasons to reject it: static
 * strings, so that decoding writes no state of its own. */
struct str_attr {
	size_t max;
	const char *missing, *not_string, *too_long;
};

#define STR_ATTR(name, limit)                                                         \
	{                                                                             \
		.max = (limit), .missing = "missing " name " attribute",              \
		.not_string = name " attribute is not one NUL-terminated string",     \
		.too_long = name " attribute longer than " STRINGIFY(limit) " bytes", \
	}

static const struct str_attr object_attr = STR_ATTR("object", KEVENT_OBJECT_MAX),
			     signal_attr = STR_ATTR("signal", KEVENT_SIGNAL_MAX),
			     payload_attr = STR_ATTR("payload", KEVENT_PAYLOAD_MAX);

static int str_attr(const struct kgenl_attr *a, const struct str_attr *s, const char **out,
		    const char **why)
{
	if (!a->seen) {
		*why = s->missing;
		return -EINVAL;
	}
	if (a->len == 0 || a->data[a->len - 1] != '\0' || strlen(a->data) + 1 != a->len) {
		*why = s->not_string;
		return -EINVAL;
	}
	if (a->len - 1 > s->max) {
		*why = s->too_long;
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
	struct kkernel_meta meta;
	int rc = kkernel_decode_meta(buf, len, family_id, out, &meta, why);
	if (rc == 0 && meta.end) {
		*why = "unknown kevent command";
		return -EINVAL;
	}
	return rc;
}

int kkernel_decode_meta(const void *buf, size_t len, int family_id, struct kevent **out,
			struct kkernel_meta *meta, const char **why)
{
	static const struct kgenl_shape shape = {.cmds = {KEVENT_CMD_EVENT, KEVENT_CMD_GET},
						 .ncmds = 2,
						 .max = KEVENT_A_MAX,
						 .pad = KEVENT_A_PAD,
						 .other = "unknown kevent command"};
	struct kgenl_attr at[KEVENT_A_MAX + 1];
	uint8_t cmd;

	*meta = (struct kkernel_meta){0};
	*out = NULL;
	int rc = kgenl_decode(buf, len, family_id, &shape, &cmd, at, why);
	if (rc < 0)
		return rc;
	if (at[KEVENT_A_INSTANCE].seen && u64_attr(&at[KEVENT_A_INSTANCE], &meta->instance) < 0) {
		*why = "malformed instance attribute";
		return -EINVAL;
	}
	if (cmd == KEVENT_CMD_GET) {
		if (u64_attr(&at[KEVENT_A_SEQNUM], &meta->current) < 0 ||
		    u64_attr(&at[KEVENT_A_LOST], &meta->gone) < 0) {
			*why = "malformed end of a kevent dump";
			return -EINVAL;
		}
		meta->end = true;
		return 0;
	}

	uint32_t type;
	if (!at[KEVENT_A_TYPE].seen || at[KEVENT_A_TYPE].len != sizeof(type)) {
		*why = "missing or malformed type attribute";
		return -EINVAL;
	}
	memcpy(&type, at[KEVENT_A_TYPE].data, sizeof(type));
	const char *object, *signal, *payload = "";
	uint64_t seqnum, timestamp;
	if (str_attr(&at[KEVENT_A_OBJECT], &object_attr, &object, why) < 0 ||
	    str_attr(&at[KEVENT_A_SIGNAL], &signal_attr, &signal, why) < 0)
		return -EINVAL;
	if (at[KEVENT_A_PAYLOAD].seen &&
	    str_attr(&at[KEVENT_A_PAYLOAD], &payload_attr, &payload, why) < 0)
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
	rc = kevent_new((int)type, object, signal, payload, KEVENT_SOURCE_KERNEL, seqnum, timestamp,
			NULL, 0, out, why);
	if (rc == 0)
		(*out)->instance = meta->instance;
	return rc;
}

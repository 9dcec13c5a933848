// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel-msg.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/* Attributes, walked by hand so that every length is checked here. */
struct attr_view {
	const char *data;
	size_t len;
	bool seen;
};

static int str_attr(const struct attr_view *a, size_t max, const char **out, const char **why,
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

static int u64_attr(const struct attr_view *a, uint64_t *out)
{
	if (!a->seen || a->len != sizeof(uint64_t))
		return -EINVAL;
	memcpy(out, a->data, sizeof(*out));
	return 0;
}

int kkernel_decode(const void *buf, size_t len, int family_id, struct kevent **out,
		   const char **why)
{
	struct attr_view at[KEVENT_A_MAX + 1] = {0};
	const struct nlmsghdr *nlh = buf;

	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > len) {
		*why = "truncated netlink message";
		return -EBADMSG;
	}
	if (nlh->nlmsg_type != family_id) {
		*why = "message not of the kevent family";
		return -EINVAL;
	}
	size_t body = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (body < GENL_HDRLEN) {
		*why = "truncated generic netlink header";
		return -EBADMSG;
	}
	const struct genlmsghdr *gh = (const struct genlmsghdr *)((const char *)buf + NLMSG_HDRLEN);
	if (gh->cmd != KEVENT_CMD_EVENT) {
		*why = "unknown kevent command";
		return -EINVAL;
	}
	const char *p = (const char *)gh + GENL_HDRLEN;
	size_t left = body - GENL_HDRLEN;
	while (left >= NLA_HDRLEN) {
		const struct nlattr *na = (const struct nlattr *)p;
		if (na->nla_len < NLA_HDRLEN || na->nla_len > left) {
			*why = "attribute length out of bounds";
			return -EBADMSG;
		}
		unsigned type = na->nla_type & NLA_TYPE_MASK;
		if (type <= KEVENT_A_MAX && type != KEVENT_A_UNSPEC && type != KEVENT_A_PAD) {
			if (at[type].seen) {
				*why = "duplicated attribute";
				return -EINVAL;
			}
			at[type] =
				(struct attr_view){p + NLA_HDRLEN, na->nla_len - NLA_HDRLEN, true};
		}
		size_t step = NLA_ALIGN(na->nla_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}

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

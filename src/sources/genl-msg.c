// SPDX-License-Identifier: GPL-2.0-or-later
#include "genl-msg.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>

int kgenl_header(const void *buf, size_t len, int family_id, uint8_t *cmd, const char **attrs,
		 size_t *attrs_len, const char **why)
{
	const struct nlmsghdr *nlh = buf;
	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > len) {
		*why = "truncated netlink message";
		return -EBADMSG;
	}
	if (nlh->nlmsg_type != family_id) {
		*why = "message not of the expected family";
		return -EINVAL;
	}
	size_t body = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (body < GENL_HDRLEN) {
		*why = "truncated generic netlink header";
		return -EBADMSG;
	}
	const struct genlmsghdr *gh = (const struct genlmsghdr *)((const char *)buf + NLMSG_HDRLEN);
	*cmd = gh->cmd;
	*attrs = (const char *)gh + GENL_HDRLEN;
	*attrs_len = body - GENL_HDRLEN;
	return 0;
}

int kgenl_attrs(const char *p, size_t left, struct kgenl_attr *at, unsigned max, unsigned pad,
		const char **why)
{
	memset(at, 0, (max + 1) * sizeof(*at));
	while (left >= NLA_HDRLEN) {
		const struct nlattr *na = (const struct nlattr *)p;
		if (na->nla_len < NLA_HDRLEN || na->nla_len > left) {
			*why = "attribute length out of bounds";
			return -EBADMSG;
		}
		unsigned type = na->nla_type & NLA_TYPE_MASK;
		if (type && type <= max && type != pad) {
			if (at[type].seen) {
				*why = "duplicated attribute";
				return -EINVAL;
			}
			at[type] =
				(struct kgenl_attr){p + NLA_HDRLEN, na->nla_len - NLA_HDRLEN, true};
		}
		size_t step = NLA_ALIGN(na->nla_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	return 0;
}

int kgenl_decode(const void *buf, size_t len, int family_id, const struct kgenl_shape *shape,
		 uint8_t *cmd, struct kgenl_attr *at, const char **why)
{
	const char *attrs;
	size_t attrs_len;
	int rc = kgenl_header(buf, len, family_id, cmd, &attrs, &attrs_len, why);
	if (rc < 0)
		return rc;
	bool wanted = false;
	for (size_t i = 0; i < shape->ncmds; i++)
		wanted |= *cmd == shape->cmds[i];
	if (!wanted && shape->other) {
		*why = shape->other;
		return -EINVAL;
	}
	if (!wanted)
		return 0;
	rc = kgenl_attrs(attrs, attrs_len, at, shape->max, shape->pad, why);
	return rc < 0 ? rc : 1;
}

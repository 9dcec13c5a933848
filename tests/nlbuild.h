/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Building generic netlink messages by hand, for tests and fuzz seeds. */
#ifndef KEVENT_TESTS_NLBUILD_H
#define KEVENT_TESTS_NLBUILD_H

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct msg {
	char buf[12288] __attribute__((aligned(4)));
	size_t len;
};

/* An empty message of family type with generic netlink command cmd. */
static inline void nl_begin(struct msg *m, int type, int cmd)
{
	memset(m, 0, sizeof(*m));
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	nlh->nlmsg_type = (uint16_t)type;
	struct genlmsghdr *gh = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	gh->cmd = (uint8_t)cmd;
	gh->version = 1;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	nlh->nlmsg_len = (uint32_t)m->len;
}

/* Appends an attribute (no bounds are checked: tests make bad ones too). */
static inline void nl_put(struct msg *m, int type, const void *data, size_t len)
{
	struct nlattr *na = (struct nlattr *)(m->buf + m->len);
	na->nla_type = (uint16_t)type;
	na->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	m->len += NLA_ALIGN(NLA_HDRLEN + len);
	((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

static inline void nl_put_str(struct msg *m, int type, const char *s)
{
	nl_put(m, type, s, strlen(s) + 1);
}

static inline void nl_put_u32(struct msg *m, int type, uint32_t v)
{
	nl_put(m, type, &v, sizeof(v));
}

static inline void nl_put_u64(struct msg *m, int type, uint64_t v)
{
	nl_put(m, type, &v, sizeof(v));
}

#endif

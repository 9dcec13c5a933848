// SPDX-License-Identifier: GPL-2.0-or-later
#include "genl.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

#define RCVBUF_BYTES (8 * 1024 * 1024)

static void raise_rcvbuf(int fd)
{
	int size = RCVBUF_BYTES;
	/* for tests: a small buffer, to make overruns on purpose (keventd(8)) */
	const char *force = getenv("KEVENTD_GENL_RCVBUF");
	if (force && atoi(force) > 0)
		size = atoi(force);
	/* SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it, take what the limit allows */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

int kgenl_dump_open(const char *family, uint8_t cmd, uint16_t attr, uint64_t value,
		    struct nl_sock **out, int *family_id)
{
	struct nl_sock *s = nl_socket_alloc();
	if (!s)
		return -ENOMEM;
	nl_socket_disable_seq_check(s);
	int rc = genl_connect(s);
	int id = rc < 0 ? rc : genl_ctrl_resolve(s, family);
	if (id < 0) {
		nl_socket_free(s);
		return rc < 0 ? -EIO : -ENOENT;
	}
	struct nl_msg *m = nlmsg_alloc();
	rc = -ENOMEM;
	if (m && genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, id, 0, NLM_F_DUMP, cmd, 1) &&
	    nla_put_u64(m, attr, value) == 0)
		rc = nl_send_auto(s, m) < 0 ? -EIO : 0;
	nlmsg_free(m);
	if (rc == 0 && nl_socket_set_nonblocking(s) < 0)
		rc = -EIO;
	if (rc < 0) {
		nl_socket_free(s);
		return rc;
	}
	*out = s;
	*family_id = id;
	return 0;
}

/* s connected: a new socket, or the one adopted (then s owns it). */
static int connect_or_adopt(struct nl_sock *s, int adopt)
{
	if (adopt < 0)
		return genl_connect(s);
	/* libnl learns the socket's port id from it (getsockname) */
	return nl_socket_set_fd(s, NETLINK_GENERIC, adopt);
}

int kgenl_subscribe(const char *family, const char *const *groups, size_t n_groups, int adopt,
		    struct nl_sock **out, int *family_id)
{
	_cleanup_close_ int keep = adopt; /* closed on failure, else libnl's */
	int ids[16];
	if (n_groups > 16)
		return -EINVAL;
	/* resolve on a socket of its own, so no reply mixes with events */
	struct nl_sock *q = nl_socket_alloc();
	if (!q)
		return -ENOMEM;
	int rc = genl_connect(q);
	int id = rc < 0 ? rc : genl_ctrl_resolve(q, family);
	for (size_t i = 0; id >= 0 && i < n_groups; i++) {
		ids[i] = genl_ctrl_resolve_grp(q, family, groups[i]);
		if (ids[i] < 0)
			id = ids[i];
	}
	nl_socket_free(q);
	if (id < 0)
		return -ENOENT;

	struct nl_sock *s = nl_socket_alloc();
	if (!s)
		return -ENOMEM;
	nl_socket_disable_seq_check(s);
	nl_socket_disable_auto_ack(s);
	rc = connect_or_adopt(s, adopt);
	if (rc == 0)
		keep = -1;
	/* an adopted socket is in the groups already, unless the family
	 * came back with new ids meanwhile: joining again is harmless */
	for (size_t i = 0; rc == 0 && i < n_groups; i++)
		rc = nl_socket_add_membership(s, ids[i]);
	if (rc == 0)
		rc = nl_socket_set_nonblocking(s);
	if (rc < 0) {
		nl_socket_free(s);
		return -EIO;
	}
	raise_rcvbuf(nl_socket_get_fd(s));
	*out = s;
	*family_id = id;
	return 0;
}

int kgenl_ctrl_open(struct nl_sock **out)
{
	struct nl_sock *s = nl_socket_alloc();
	if (!s)
		return -ENOMEM;
	nl_socket_disable_seq_check(s);
	int rc = genl_connect(s);
	if (rc == 0)
		rc = genl_ctrl_resolve_grp(s, "nlctrl", "notify");
	if (rc >= 0)
		rc = nl_socket_add_membership(s, rc);
	if (rc >= 0)
		rc = nl_socket_set_nonblocking(s);
	if (rc < 0) {
		nl_socket_free(s);
		return -EIO;
	}
	*out = s;
	return 0;
}

int kgenl_ctrl_read(int fd, void (*fn)(const char *family, int id, bool appeared, void *ud),
		    void *ud)
{
	char buf[8192];
	int rc = 0;
	for (;;) {
		size_t n;
		int err;
		enum kgenl_recv r = kgenl_recv(fd, buf, sizeof(buf), &n, &err);
		if (r == KGENL_OVERRUN) {
			rc = -ENOBUFS;
			continue;
		}
		if (r == KGENL_FORGED || r == KGENL_TRUNC)
			continue;
		if (r != KGENL_DATAGRAM)
			return rc;
		size_t left = n;
		for (struct nlmsghdr *nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, left);
		     nlh = NLMSG_NEXT(nlh, left)) {
			if (nlh->nlmsg_type != GENL_ID_CTRL ||
			    nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
				continue;
			struct genlmsghdr *gh = nlmsg_data(nlh);
			if (gh->cmd != CTRL_CMD_NEWFAMILY && gh->cmd != CTRL_CMD_DELFAMILY)
				continue;
			struct nlattr *tb[CTRL_ATTR_MAX + 1];
			if (genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, NULL) < 0 ||
			    !tb[CTRL_ATTR_FAMILY_NAME] || nla_len(tb[CTRL_ATTR_FAMILY_NAME]) < 1)
				continue;
			char name[GENL_NAMSIZ + 1];
			nla_strlcpy(name, tb[CTRL_ATTR_FAMILY_NAME], sizeof(name));
			int id = -1;
			if (tb[CTRL_ATTR_FAMILY_ID] &&
			    nla_len(tb[CTRL_ATTR_FAMILY_ID]) >= (int)sizeof(uint16_t))
				id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
			fn(name, id, gh->cmd == CTRL_CMD_NEWFAMILY, ud);
		}
	}
}

enum kgenl_recv kgenl_recv(int fd, void *buf, size_t size, size_t *len, int *err)
{
	struct sockaddr_nl sa;
	struct iovec iov = {buf, size};
	struct msghdr mh = {
		.msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1};
	for (;;) {
		ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == ENOBUFS))
			return errno == EAGAIN ? KGENL_AGAIN : KGENL_OVERRUN;
		if (n <= 0) {
			*err = n < 0 ? -errno : -ECONNRESET;
			return KGENL_ERROR;
		}
		if (sa.nl_pid != 0)
			return KGENL_FORGED;
		if (mh.msg_flags & MSG_TRUNC)
			return KGENL_TRUNC;
		*len = (size_t)n;
		return KGENL_DATAGRAM;
	}
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "kernel" source: events of the kevent Generic Netlink family
 * (kevent.ko).  Messages are accepted only from the kernel (sender port id
 * 0, read from the socket address, never from the message).  Overruns
 * (ENOBUFS) and sequence-number gaps are counted and logged as lost events.
 * When the module is not loaded, the source listens to the netlink
 * controller's notifications and subscribes as soon as the family appears,
 * and again whenever it is unloaded and loaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/genetlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "daemon.h"
#include "kernel-msg.h"
#include "log.h"

#define RCVBUF_BYTES	 (8 * 1024 * 1024)
#define RECV_BUF	 (64 * 1024)
#define READS_PER_WAKEUP 256

static const char *const group_names[KEVENT_NTYPES] = {
	KEVENT_MCGRP_GENERAL, KEVENT_MCGRP_STORAGE, KEVENT_MCGRP_POWER,
	KEVENT_MCGRP_FS,      KEVENT_MCGRP_HOTPLUG,
};

struct kkernel {
	struct ksource src;
	struct kdaemon *d;
	struct nl_sock *ctrl; /* nlctrl "notify": families coming and going */
	struct kio *ctrl_io;
	struct nl_sock *ev; /* the kevent groups */
	struct kio *ev_io;
	int family_id;
	uint64_t last_seq;
	bool have_seq, paused, stopped;
	char *buf;
};

static struct kkernel *of(struct ksource *s)
{
	return (struct kkernel *)((char *)s - offsetof(struct kkernel, src));
}

static void raise_rcvbuf(int fd)
{
	int size = RCVBUF_BYTES;
	/* SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it, get what the limit allows */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

static void unsubscribe(struct kkernel *k)
{
	kio_free(k->ev_io);
	k->ev_io = NULL;
	nl_socket_free(k->ev);
	k->ev = NULL;
	k->family_id = -1;
}

static void on_events(struct kio *io, int fd, uint32_t events, void *userdata);

/* Resolves the family and its groups and subscribes a fresh socket to them.
 * Returns 0, or -ENOENT when the module is not loaded. */
static int subscribe(struct kkernel *k)
{
	unsubscribe(k);
	struct nl_sock *q = nl_socket_alloc();
	if (!q)
		return -ENOMEM;
	int rc = genl_connect(q);
	int id = rc < 0 ? rc : genl_ctrl_resolve(q, KEVENT_GENL_NAME);
	int groups[KEVENT_NTYPES];
	for (int t = 0; id >= 0 && t < KEVENT_NTYPES; t++) {
		groups[t] = genl_ctrl_resolve_grp(q, KEVENT_GENL_NAME, group_names[t]);
		if (groups[t] < 0)
			id = groups[t];
	}
	nl_socket_free(q);
	if (id < 0)
		return -ENOENT;

	k->ev = nl_socket_alloc();
	if (!k->ev)
		return -ENOMEM;
	nl_socket_disable_seq_check(k->ev);
	nl_socket_disable_auto_ack(k->ev);
	rc = genl_connect(k->ev);
	for (int t = 0; rc == 0 && t < KEVENT_NTYPES; t++)
		rc = nl_socket_add_membership(k->ev, groups[t]);
	if (rc == 0)
		rc = nl_socket_set_nonblocking(k->ev);
	if (rc < 0) {
		log_error("kernel: cannot subscribe to the kevent groups: %s", nl_geterror(rc));
		unsubscribe(k);
		return -EIO;
	}
	raise_rcvbuf(nl_socket_get_fd(k->ev));
	rc = kloop_add_io(k->d->loop, nl_socket_get_fd(k->ev), k->paused ? 0 : EPOLLIN, on_events,
			  k, &k->ev_io);
	if (rc < 0) {
		unsubscribe(k);
		return rc;
	}
	k->family_id = id;
	k->have_seq = false; /* a (re)loaded module counts from its own start */
	log_info("kernel: subscribed to the kevent family (id %d) and its %d groups", id,
		 KEVENT_NTYPES);
	return 0;
}

static void track_seq(struct kkernel *k, uint64_t seq)
{
	if (k->have_seq && seq > k->last_seq + 1) {
		uint64_t lost = seq - k->last_seq - 1;
		k->d->stats.lost[KEVENT_SOURCE_KERNEL] += lost;
		log_warning("kernel: %" PRIu64 " events lost (seqnum %" PRIu64 " after %" PRIu64
			    ")",
			    lost, seq, k->last_seq);
	}
	if (!k->have_seq || seq > k->last_seq)
		k->last_seq = seq;
	k->have_seq = true;
}

static void on_events(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kkernel *k = userdata;
	(void)io;
	(void)events;
	for (int i = 0; i < READS_PER_WAKEUP && !k->paused && k->ev; i++) {
		struct sockaddr_nl sa;
		struct iovec iov = {k->buf, RECV_BUF};
		struct msghdr mh = {.msg_name = &sa,
				    .msg_namelen = sizeof(sa),
				    .msg_iov = &iov,
				    .msg_iovlen = 1};
		ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0 && errno == ENOBUFS) {
			k->d->stats.overruns[KEVENT_SOURCE_KERNEL]++;
			log_warning("kernel: receive buffer overrun (ENOBUFS): events were lost");
			continue;
		}
		if (n <= 0) {
			log_error("kernel: netlink receive failed: %s",
				  n < 0 ? strerror(errno) : "EOF");
			return;
		}
		if (sa.nl_pid != 0) {
			kdaemon_reject(k->d, KEVENT_SOURCE_KERNEL,
				       "netlink message not from the kernel (sender port id != 0)");
			continue;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			kdaemon_reject(k->d, KEVENT_SOURCE_KERNEL, "truncated netlink datagram");
			continue;
		}
		size_t left = (size_t)n;
		for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)k->buf;
		     NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
			if (nlh->nlmsg_type == NLMSG_NOOP || nlh->nlmsg_type == NLMSG_DONE)
				continue;
			struct kevent *ev = NULL;
			const char *why = NULL;
			if (kkernel_decode(nlh, left, k->family_id, &ev, &why) < 0) {
				kdaemon_reject(k->d, KEVENT_SOURCE_KERNEL, why);
				continue;
			}
			track_seq(k, ev->seqnum);
			kdaemon_submit(k->d, ev);
		}
		if (left &&
		    !NLMSG_OK((const struct nlmsghdr *)((const char *)k->buf + n - left), left))
			kdaemon_reject(k->d, KEVENT_SOURCE_KERNEL,
				       "trailing bytes in netlink datagram");
	}
}

/* Reads a controller notification: is it the kevent family coming or going? */
static void on_ctrl(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kkernel *k = userdata;
	char buf[8192];
	(void)io;
	(void)events;
	for (;;) {
		struct sockaddr_nl sa;
		socklen_t sl = sizeof(sa);
		ssize_t n =
			recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&sa, &sl);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* lost notifications: find out the state afresh */
			if (subscribe(k) < 0)
				log_info("kernel: kevent family not present");
			continue;
		}
		if (n <= 0)
			return;
		if (sa.nl_pid != 0)
			continue;
		size_t left = (size_t)n;
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
			    !tb[CTRL_ATTR_FAMILY_NAME] ||
			    strcmp(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]), KEVENT_GENL_NAME) !=
				    0)
				continue;
			if (gh->cmd == CTRL_CMD_NEWFAMILY && !k->stopped) {
				log_info("kernel: the kevent family appeared");
				subscribe(k);
			} else if (gh->cmd == CTRL_CMD_DELFAMILY) {
				log_notice("kernel: the kevent family went away (module unloaded); "
					   "waiting for it to come back");
				unsubscribe(k);
			}
		}
	}
}

static void kernel_pause(struct ksource *s, bool pause)
{
	struct kkernel *k = of(s);
	k->paused = pause;
	/* while paused the kernel's buffer fills; an overrun is counted, not hidden */
	if (k->ev_io)
		kio_set_events(k->ev_io, pause ? 0 : EPOLLIN);
}

static void kernel_stop(struct ksource *s)
{
	struct kkernel *k = of(s);
	k->stopped = true;
	unsubscribe(k);
	kio_free(k->ctrl_io);
	k->ctrl_io = NULL;
}

static void kernel_free(struct ksource *s)
{
	struct kkernel *k = of(s);
	kernel_stop(s);
	nl_socket_free(k->ctrl);
	free(k->buf);
	free(k);
}

int ksource_kernel_new(struct kdaemon *d, struct ksource **out)
{
	struct kkernel *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->d = d;
	k->family_id = -1;
	k->src = (struct ksource){.name = "kernel",
				  .kind = KEVENT_SOURCE_KERNEL,
				  .pause = kernel_pause,
				  .stop = kernel_stop,
				  .free = kernel_free};
	k->buf = malloc(RECV_BUF);
	k->ctrl = nl_socket_alloc();
	int rc = !k->buf || !k->ctrl ? -NLE_NOMEM : genl_connect(k->ctrl);
	if (rc == 0) {
		nl_socket_disable_seq_check(k->ctrl);
		rc = genl_ctrl_resolve_grp(k->ctrl, "nlctrl", "notify");
		if (rc >= 0)
			rc = nl_socket_add_membership(k->ctrl, rc);
		if (rc >= 0)
			rc = nl_socket_set_nonblocking(k->ctrl);
	}
	if (rc < 0) {
		log_error("kernel: cannot listen to the generic netlink controller: %s",
			  nl_geterror(rc));
		kernel_free(&k->src);
		return -EIO;
	}
	rc = kloop_add_io(d->loop, nl_socket_get_fd(k->ctrl), EPOLLIN, on_ctrl, k, &k->ctrl_io);
	if (rc < 0) {
		kernel_free(&k->src);
		return rc;
	}
	if (subscribe(k) < 0)
		log_notice("kernel: the kevent module is not loaded; subscribing when it appears");
	*out = &k->src;
	return 0;
}

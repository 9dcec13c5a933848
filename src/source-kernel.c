// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "kernel" source: events of the kevent Generic Netlink family
 * (kevent.ko).  Messages are accepted only from the kernel (sender port id
 * 0, read from the socket address, never from the message).  Overruns
 * (ENOBUFS) and sequence-number gaps are counted and logged as lost events.
 * When the module is not loaded, the source follows the netlink
 * controller's notifications and subscribes as soon as the family appears,
 * and again whenever it is unloaded and loaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <netlink/netlink.h>
#include <string.h>
#include <sys/epoll.h>

#include "daemon.h"
#include "source-genl.h"
#include "genl.h"
#include "kernel-msg.h"
#include "log.h"

#define RECV_BUF	 (64 * 1024)
#define READS_PER_WAKEUP 256

static const char *const group_names[KEVENT_NTYPES] = {
	KEVENT_MCGRP_GENERAL, KEVENT_MCGRP_STORAGE, KEVENT_MCGRP_POWER,
	KEVENT_MCGRP_FS,      KEVENT_MCGRP_HOTPLUG,
};

struct kkernel {
	struct ksource src;
	struct kdaemon *d;
	struct nl_sock *ctrl; /* controller notifications: families coming and going */
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

static void unsubscribe(struct kkernel *k)
{
	kio_free(k->ev_io);
	k->ev_io = NULL;
	nl_socket_free(k->ev);
	k->ev = NULL;
	k->family_id = -1;
}

static void on_events(struct kio *io, int fd, uint32_t events, void *userdata);

/* Subscribes a fresh socket to the family's groups.  -ENOENT: no module. */
static int subscribe(struct kkernel *k)
{
	unsubscribe(k);
	int rc = kgenl_subscribe(KEVENT_GENL_NAME, group_names, KEVENT_NTYPES, &k->ev,
				 &k->family_id);
	if (rc < 0) {
		if (rc != -ENOENT)
			log_error("kernel: cannot subscribe to the kevent groups: %s",
				  strerror(-rc));
		return rc;
	}
	rc = kloop_add_io(k->d->loop, nl_socket_get_fd(k->ev), k->paused ? 0 : EPOLLIN, on_events,
			  k, &k->ev_io);
	if (rc < 0) {
		unsubscribe(k);
		return rc;
	}
	k->have_seq = false; /* a (re)loaded module counts from its own start */
	log_info("kernel: subscribed to the kevent family (id %d) and its %d groups", k->family_id,
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

static void handle_datagram(struct kkernel *k, size_t n)
{
	size_t left = n;
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)k->buf;
	for (; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
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
	if (left)
		kdaemon_reject(k->d, KEVENT_SOURCE_KERNEL, "truncated netlink message");
}

static void on_events(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kkernel *k = userdata;
	(void)io;
	(void)events;
	size_t n;
	for (int i = 0; i < READS_PER_WAKEUP && !k->paused && k->ev; i++) {
		if (!kgenl_next(k->d, KEVENT_SOURCE_KERNEL, fd, k->buf, RECV_BUF, &n))
			return;
		handle_datagram(k, n);
	}
}

static void on_family(const char *family, bool appeared, void *userdata)
{
	struct kkernel *k = userdata;
	if (strcmp(family, KEVENT_GENL_NAME) != 0 || k->stopped)
		return;
	if (appeared) {
		log_info("kernel: the kevent family appeared");
		subscribe(k);
	} else {
		log_notice("kernel: the kevent family went away (module unloaded); waiting for it");
		unsubscribe(k);
	}
}

static void on_ctrl(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kkernel *k = userdata;
	(void)io;
	(void)events;
	if (kgenl_ctrl_read(fd, on_family, k) == -ENOBUFS && !k->stopped)
		subscribe(k); /* notifications were lost: look afresh */
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

int ksource_kernel_new(const struct ksink *sink, struct ksource **out)
{
	struct kdaemon *d = sink->userdata;
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
	int rc = k->buf ? kgenl_ctrl_open(&k->ctrl) : -ENOMEM;
	if (rc == 0)
		rc = kloop_add_io(d->loop, nl_socket_get_fd(k->ctrl), EPOLLIN, on_ctrl, k,
				  &k->ctrl_io);
	if (rc < 0) {
		log_error("kernel: cannot follow the generic netlink controller: %s",
			  strerror(-rc));
		kernel_free(&k->src);
		return rc;
	}
	if (subscribe(k) == -ENOENT)
		log_notice("kernel: the kevent module is not loaded; subscribing when it appears");
	*out = &k->src;
	return 0;
}

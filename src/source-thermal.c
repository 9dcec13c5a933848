// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "thermal" source: trip-point crossings from the stock kernel's
 * "thermal" Generic Netlink family, mapped to power events (thermal.h).
 * At start-up it reads /sys/class/thermal, so a machine that is already
 * hot gets its "high" event even though no trip is crossed again.
 */
#include <errno.h>
#include <netlink/netlink.h>
#include <string.h>
#include <sys/epoll.h>

#include "daemon.h"
#include "source-genl.h"
#include "genl.h"
#include "log.h"
#include "thermal.h"

#define THERMAL_FAMILY	 "thermal"
#define THERMAL_GROUP	 "event"
#define RECV_BUF	 (16 * 1024)
#define READS_PER_WAKEUP 256
#define SCAN_MAX	 64

struct ktherm_src {
	struct ksource src;
	struct kdaemon *d;
	struct kthermal *state;
	struct nl_sock *ctrl, *ev;
	struct kio *ctrl_io, *ev_io;
	int family_id;
	bool paused, stopped;
	char buf[RECV_BUF];
};

static struct ktherm_src *of(struct ksource *s)
{
	return (struct ktherm_src *)((char *)s - offsetof(struct ktherm_src, src));
}

static void unsubscribe(struct ktherm_src *t)
{
	kio_free(t->ev_io);
	t->ev_io = NULL;
	nl_socket_free(t->ev);
	t->ev = NULL;
	t->family_id = -1;
}

static void handle_datagram(struct ktherm_src *t, size_t n)
{
	size_t left = n;
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)t->buf;
	for (; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
		struct kthermal_msg m;
		struct kevent *ev = NULL;
		const char *why = NULL;
		if (kthermal_decode(nlh, left, t->family_id, &m, &why) < 0 ||
		    kthermal_apply(t->state, &m, now_realtime_ns(), &ev, &why) < 0) {
			kdaemon_reject(t->d, KEVENT_SOURCE_THERMAL, why);
			continue;
		}
		if (ev)
			kdaemon_submit(t->d, ev);
	}
	if (left)
		kdaemon_reject(t->d, KEVENT_SOURCE_THERMAL, "truncated netlink message");
}

static void on_events(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct ktherm_src *t = userdata;
	(void)io;
	(void)events;
	size_t n;
	for (int i = 0; i < READS_PER_WAKEUP && !t->paused && t->ev; i++) {
		if (!kgenl_next(t->d, KEVENT_SOURCE_THERMAL, fd, t->buf, sizeof(t->buf), &n))
			return;
		handle_datagram(t, n);
	}
}

/* Emits high for zones already above a trip (start-up, or the family back). */
static void scan(struct ktherm_src *t)
{
	struct kevent *evs[SCAN_MAX];
	size_t n = kthermal_scan(t->state, now_realtime_ns(), evs, SCAN_MAX);
	for (size_t i = 0; i < n; i++) {
		log_notice("thermal: %s is already above a trip point at start-up", evs[i]->object);
		kdaemon_submit(t->d, evs[i]);
	}
}

static int subscribe(struct ktherm_src *t)
{
	unsubscribe(t);
	const char *groups[] = {THERMAL_GROUP};
	int rc = kgenl_subscribe(THERMAL_FAMILY, groups, 1, &t->ev, &t->family_id);
	if (rc == 0)
		rc = kloop_add_io(t->d->loop, nl_socket_get_fd(t->ev), t->paused ? 0 : EPOLLIN,
				  on_events, t, &t->ev_io);
	if (rc < 0) {
		unsubscribe(t);
		return rc;
	}
	log_info("thermal: subscribed to the thermal family's trip events");
	return 0;
}

static void on_family(const char *family, bool appeared, void *userdata)
{
	struct ktherm_src *t = userdata;
	if (strcmp(family, THERMAL_FAMILY) != 0 || t->stopped)
		return;
	if (appeared && subscribe(t) == 0)
		scan(t);
	else if (!appeared)
		unsubscribe(t);
}

static void on_ctrl(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct ktherm_src *t = userdata;
	(void)io;
	(void)events;
	if (kgenl_ctrl_read(fd, on_family, t) == -ENOBUFS && !t->stopped && subscribe(t) == 0)
		scan(t);
}

static void thermal_pause(struct ksource *s, bool pause)
{
	struct ktherm_src *t = of(s);
	t->paused = pause;
	if (t->ev_io)
		kio_set_events(t->ev_io, pause ? 0 : EPOLLIN);
}

static void thermal_stop(struct ksource *s)
{
	struct ktherm_src *t = of(s);
	t->stopped = true;
	unsubscribe(t);
	kio_free(t->ctrl_io);
	t->ctrl_io = NULL;
}

static void thermal_free(struct ksource *s)
{
	struct ktherm_src *t = of(s);
	thermal_stop(s);
	nl_socket_free(t->ctrl);
	kthermal_free(t->state);
	free(t);
}

int ksource_thermal_new(const struct ksink *sink, const char *sysfs_root, struct ksource **out)
{
	struct kdaemon *d = sink->userdata;
	struct ktherm_src *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->d = d;
	t->family_id = -1;
	t->src = (struct ksource){.name = "thermal",
				  .kind = KEVENT_SOURCE_THERMAL,
				  .pause = thermal_pause,
				  .stop = thermal_stop,
				  .free = thermal_free};
	int rc = kthermal_new(sysfs_root, &t->state);
	if (rc == 0)
		rc = kgenl_ctrl_open(&t->ctrl);
	if (rc == 0)
		rc = kloop_add_io(d->loop, nl_socket_get_fd(t->ctrl), EPOLLIN, on_ctrl, t,
				  &t->ctrl_io);
	if (rc < 0) {
		thermal_free(&t->src);
		return rc;
	}
	rc = subscribe(t);
	if (rc == -ENOENT)
		log_notice("thermal: the kernel has no thermal netlink family (yet)");
	/* the state of the zones now, whether or not trip events can follow */
	scan(t);
	*out = &t->src;
	return 0;
}

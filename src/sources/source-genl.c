// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A Generic Netlink source (source-genl.h).  Overruns (ENOBUFS), forged
 * and oversize datagrams, and messages the decoder refuses are counted
 * through the sink, never hidden.  When the family is not registered, the
 * source follows the controller's notifications and subscribes as soon as
 * it appears, and again whenever it is unregistered and registered.
 */
#include "source-genl.h"

#include <errno.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "fdstore.h"
#include "loop.h"
#include "log.h"
#include "util.h"

#define READS_PER_WAKEUP 256

struct kgenl_source {
	struct ksource src;
	const struct ksource_genl_desc *desc;
	struct ksink sink;
	void *state;
	struct nl_sock *ctrl; /* controller notifications: families coming and going */
	struct kio *ctrl_io;
	struct nl_sock *ev; /* the family's groups */
	struct kio *ev_io;
	int family_id;
	bool paused, stopped;
	char buf[] __attribute__((aligned(8))); /* desc->recv_buf bytes, for struct nlmsghdr */
};

static struct kgenl_source *of(struct ksource *s)
{
	return container_of(s, struct kgenl_source, src);
}

static void unsubscribe(struct kgenl_source *g)
{
	kio_free(g->ev_io);
	g->ev_io = NULL;
	if (g->ev)
		kfdstore_forget(g->sink.fdstore, nl_socket_get_fd(g->ev));
	nl_socket_free(g->ev);
	g->ev = NULL;
	g->family_id = -1;
}

static void handle_datagram(struct kgenl_source *g, const void *buf, size_t n)
{
	const struct ksource_genl_desc *desc = g->desc;
	size_t left = n;
	const struct nlmsghdr *nlh = buf;
	for (; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
		struct kevent *ev = NULL;
		const char *why = NULL;
		if (desc->decode(g->state, nlh, left, g->family_id, &ev, &why) < 0) {
			ksink_reject(&g->sink, desc->kind, why);
			continue;
		}
		if (!ev)
			continue;
		if (desc->track)
			desc->track(g->state, &g->sink, ev);
		if (desc->accept && !desc->accept(g->state, &g->sink, ev)) {
			kevent_free(ev);
			continue;
		}
		(void)ksink_submit(&g->sink, ev); /* counted and freed even on -ENOMEM */
	}
	if (left)
		ksink_reject(&g->sink, desc->kind, "truncated netlink message");
}

bool ksource_genl_handle(struct ksource *s, enum kgenl_recv r, const void *buf, size_t len, int err)
{
	struct kgenl_source *g = of(s);
	const struct ksource_genl_desc *desc = g->desc;
	switch (r) {
	case KGENL_DATAGRAM:
		handle_datagram(g, buf, len);
		return true;
	case KGENL_AGAIN:
		return false;
	case KGENL_OVERRUN:
		ksink_overrun(&g->sink, desc->kind);
		if (desc->overrun)
			desc->overrun(g->state, &g->sink);
		return true;
	case KGENL_FORGED:
		ksink_reject(&g->sink, desc->kind,
			     "netlink message not from the kernel (sender port id != 0)");
		return true;
	case KGENL_TRUNC:
		ksink_reject(&g->sink, desc->kind, "oversize netlink datagram");
		return true;
	case KGENL_ERROR:
		break;
	}
	log_error("%s: netlink receive failed: %s", desc->name, strerror(-err));
	return false;
}

static void on_events(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kgenl_source *g = userdata;
	(void)io;
	(void)events;
	/* at most so many datagrams a wakeup; what else a read sees is not counted */
	for (int i = 0; i < READS_PER_WAKEUP && !g->paused && g->ev;) {
		size_t n = 0;
		int err = 0;
		enum kgenl_recv r = kgenl_recv(fd, g->buf, g->desc->recv_buf, &n, &err);
		if (!ksource_genl_handle(&g->src, r, g->buf, n, err))
			break;
		if (r == KGENL_DATAGRAM)
			i++;
	}
	if (g->desc->batch)
		g->desc->batch(g->state, &g->sink);
}

/* The family's socket that the last run handed over, if it fits; -1: none. */
static int take_stored(struct kgenl_source *g, const char *name)
{
	int fd = kfdstore_take(g->sink.fdstore, name);
	const char *why = fd < 0 ? NULL : kfdstore_not_netlink(fd, NETLINK_GENERIC, 0);
	if (why) {
		kfdstore_refuse(g->sink.fdstore, name, fd, why);
		return -1;
	}
	return fd;
}

/* Subscribes a socket to the family's groups: at start-up the one the
 * last run handed over, so that what the family sent meanwhile is read,
 * else a fresh one.  -ENOENT: no family. */
static int subscribe(struct kgenl_source *g)
{
	const struct ksource_genl_desc *desc = g->desc;
	char name[64];
	snprintf(name, sizeof(name), "genl-%s", desc->name);
	unsubscribe(g);
	int adopt = take_stored(g, name);
	int rc = kgenl_subscribe(desc->family, desc->groups, desc->n_groups, adopt, &g->ev,
				 &g->family_id);
	if (rc < 0 && adopt >= 0) /* closed by kgenl_subscribe() */
		kfdstore_refuse(g->sink.fdstore, name, -1,
				rc == -ENOENT ? "the family is not registered" : strerror(-rc));
	if (rc < 0) {
		if (rc != -ENOENT && desc->say_cannot_subscribe)
			log_error("%s: %s: %s", desc->name, desc->say_cannot_subscribe,
				  strerror(-rc));
		return rc;
	}
	if (adopt >= 0)
		log_info("%s: the family's socket of the last run taken back", desc->name);
	if (kfdstore_keep(g->sink.fdstore, name, nl_socket_get_fd(g->ev), false) < 0)
		log_warning("%s: out of memory: its socket is not kept across a restart",
			    desc->name);
	rc = kloop_add_io(g->sink.loop, nl_socket_get_fd(g->ev), g->paused ? 0 : EPOLLIN, on_events,
			  g, &g->ev_io);
	if (rc < 0) {
		unsubscribe(g);
		return rc;
	}
	if (desc->say_subscribed)
		log_info("%s: %s", desc->name, desc->say_subscribed);
	else
		log_info("%s: subscribed to the %s family (id %d) and its %zu groups", desc->name,
			 desc->family, g->family_id, desc->n_groups);
	return 0;
}

static void resync(struct kgenl_source *g)
{
	if (g->desc->resync)
		g->desc->resync(g->state, &g->sink);
}

static void on_family(const char *family, int id, bool appeared, void *userdata)
{
	struct kgenl_source *g = userdata;
	const struct ksource_genl_desc *desc = g->desc;
	if (strcmp(family, desc->family) != 0 || g->stopped)
		return;
	/*
	 * The family registered while the source started: the source found it
	 * and subscribed before reading this notice.  A fresh socket would only
	 * lose what the one it has holds.
	 */
	if (appeared && g->ev && id >= 0 && id == g->family_id)
		return;
	if (appeared) {
		if (desc->say_appeared)
			log_info("%s: %s", desc->name, desc->say_appeared);
		if (subscribe(g) == 0)
			resync(g);
	} else {
		if (desc->say_gone)
			log_notice("%s: %s", desc->name, desc->say_gone);
		unsubscribe(g);
	}
}

static void on_ctrl(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kgenl_source *g = userdata;
	(void)io;
	(void)events;
	/* notifications were lost: look afresh */
	if (kgenl_ctrl_read(fd, on_family, g) == -ENOBUFS && !g->stopped && subscribe(g) == 0)
		resync(g);
}

static void genl_pause(struct ksource *s, bool pause)
{
	struct kgenl_source *g = of(s);
	g->paused = pause;
	if (g->desc->pause)
		g->desc->pause(g->state, pause);
	/* while paused the kernel's buffer fills; an overrun is counted, not hidden */
	if (g->ev_io)
		(void)kio_set_events(g->ev_io, pause ? 0 : EPOLLIN);
}

static void genl_stop(struct ksource *s)
{
	struct kgenl_source *g = of(s);
	if (!g->stopped && g->desc->stop)
		g->desc->stop(g->state, &g->sink);
	g->stopped = true;
	unsubscribe(g);
	kio_free(g->ctrl_io);
	g->ctrl_io = NULL;
}

static int genl_unhandled(struct ksource *s, const struct kevent *ev)
{
	struct kgenl_source *g = of(s);
	if (g->stopped)
		return -ESHUTDOWN; /* its position is saved already */
	return g->desc->unhandled(g->state, ev);
}

static void genl_handled(struct ksource *s, const struct kevent *ev)
{
	struct kgenl_source *g = of(s);
	g->desc->handled(g->state, ev);
}

static void genl_describe(struct ksource *s, struct strbuf *out)
{
	struct kgenl_source *g = of(s);
	if (g->family_id < 0) {
		if (g->desc->say_waiting)
			strbuf_puts(out, g->desc->say_waiting);
		else
			strbuf_printf(out, "waiting for the %s netlink family", g->desc->family);
		return;
	}
	if (g->desc->describe) {
		g->desc->describe(g->state, out);
		return;
	}
	strbuf_printf(out, "the %s netlink family, %zu group%s", g->desc->family, g->desc->n_groups,
		      g->desc->n_groups == 1 ? "" : "s");
}

static void genl_free(struct ksource *s)
{
	struct kgenl_source *g = of(s);
	genl_stop(s);
	nl_socket_free(g->ctrl);
	if (g->desc->fini)
		g->desc->fini(g->state);
	free(g);
}

/* The source with its state, no socket yet. */
static int make(const struct ksource_genl_desc *desc, const struct ksink *sink, const void *arg,
		struct kgenl_source **out)
{
	struct kgenl_source *g = calloc(1, sizeof(*g) + desc->recv_buf);
	if (!g)
		return -ENOMEM;
	g->desc = desc;
	g->sink = *sink;
	g->family_id = -1;
	g->src = (struct ksource){.name = desc->name,
				  .kind = desc->kind,
				  .pause = genl_pause,
				  .stop = genl_stop,
				  .unhandled = desc->unhandled ? genl_unhandled : NULL,
				  .handled = desc->handled ? genl_handled : NULL,
				  .describe = genl_describe,
				  .free = genl_free};
	int rc = desc->init ? desc->init(arg, &g->state) : 0;
	if (rc < 0) {
		free(g);
		return rc;
	}
	*out = g;
	return 0;
}

int ksource_genl_new(const struct ksource_genl_desc *desc, const struct ksink *sink,
		     const void *arg, struct ksource **out)
{
	struct kgenl_source *g;
	int rc = make(desc, sink, arg, &g);
	if (rc < 0)
		return rc;
	rc = kgenl_ctrl_open(&g->ctrl);
	if (rc == 0)
		rc = kloop_add_io(sink->loop, nl_socket_get_fd(g->ctrl), EPOLLIN, on_ctrl, g,
				  &g->ctrl_io);
	if (rc < 0) {
		if (desc->say_cannot_follow)
			log_error("%s: %s: %s", desc->name, desc->say_cannot_follow, strerror(-rc));
		genl_free(&g->src);
		return rc;
	}
	if (subscribe(g) == -ENOENT && desc->say_absent)
		log_notice("%s: %s", desc->name, desc->say_absent);
	/* the state of things now, whether or not the family's events can follow */
	resync(g);
	*out = &g->src;
	return 0;
}

int ksource_genl_new_detached(const struct ksource_genl_desc *desc, const struct ksink *sink,
			      const void *arg, int family_id, struct ksource **out)
{
	struct kgenl_source *g;
	int rc = make(desc, sink, arg, &g);
	if (rc < 0)
		return rc;
	g->family_id = family_id;
	*out = &g->src;
	return 0;
}

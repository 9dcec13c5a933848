// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "kernel" source: events of the kevent Generic Netlink family
 * (kevent.ko), a Generic Netlink source (source-genl.h).  Besides what
 * every such source does, it counts the events' sequence numbers that
 * never arrive as lost events (seqwin.h: a number late by less than the
 * window is no loss), and a (re)loaded module counts from its own start.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <stdlib.h>

#include "kernel-msg.h"
#include "log.h"
#include "seqwin.h"
#include "source-genl.h"

static const char *const group_names[KEVENT_NTYPES] = {
	KEVENT_MCGRP_GENERAL, KEVENT_MCGRP_STORAGE, KEVENT_MCGRP_POWER,
	KEVENT_MCGRP_FS,      KEVENT_MCGRP_HOTPLUG,
};

static int kernel_init(const void *arg, void **state)
{
	(void)arg;
	*state = calloc(1, sizeof(struct kseqwin));
	return *state ? 0 : -ENOMEM;
}

static void kernel_fini(void *state)
{
	free(state);
}

static int kernel_decode(void *state, const struct nlmsghdr *nlh, size_t left, int family_id,
			 struct kevent **ev, const char **why)
{
	(void)state;
	if (nlh->nlmsg_type == NLMSG_NOOP || nlh->nlmsg_type == NLMSG_DONE)
		return 0;
	return kkernel_decode(nlh, left, family_id, ev, why);
}

static struct klog_throttle lost_log = {
	.name = "kernel", .what = "lines about lost events", .counted = true};

/* lost numbers, every one below next, never arrived */
static void report_lost(const struct ksink *sink, uint64_t lost, uint64_t next)
{
	if (!lost)
		return;
	ksink_lost(sink, KEVENT_SOURCE_KERNEL, lost);
	klog_throttled(&lost_log, LOG_WARNING,
		       "kernel: %" PRIu64 " events lost (sequence numbers below %" PRIu64
		       " that never arrived)",
		       lost, next);
}

static void kernel_track(void *state, const struct ksink *sink, const struct kevent *ev)
{
	struct kseqwin *w = state;
	uint64_t lost;
	(void)kseqwin_see(w, ev->seqnum, &lost);
	report_lost(sink, lost, w->next);
}

/* Reading ends, or starts afresh: what is still missing will not come now. */
static void kernel_settle(void *state, const struct ksink *sink)
{
	struct kseqwin *w = state;
	uint64_t lost = kseqwin_settle(w);
	report_lost(sink, lost, w->next);
}

static void kernel_resync(void *state, const struct ksink *sink)
{
	kernel_settle(state, sink);
	/* a (re)loaded module counts from its own start */
	*(struct kseqwin *)state = (struct kseqwin){0};
}

const struct ksource_genl_desc ksource_kernel_desc = {
	.name = "kernel",
	.kind = KEVENT_SOURCE_KERNEL,
	.family = KEVENT_GENL_NAME,
	.groups = group_names,
	.n_groups = KEVENT_NTYPES,
	.recv_buf = 64 * 1024,
	.decode = kernel_decode,
	.init = kernel_init,
	.fini = kernel_fini,
	.track = kernel_track,
	.resync = kernel_resync,
	.stop = kernel_settle,
	.say_absent = "the kevent module is not loaded; subscribing when it appears",
	.say_appeared = "the kevent family appeared",
	.say_gone = "the kevent family went away (module unloaded); waiting for it",
	.say_cannot_subscribe = "cannot subscribe to the kevent groups",
	.say_cannot_follow = "cannot follow the generic netlink controller",
};

int ksource_kernel_new(const struct ksink *sink, struct ksource **out)
{
	return ksource_genl_new(&ksource_kernel_desc, sink, NULL, out);
}

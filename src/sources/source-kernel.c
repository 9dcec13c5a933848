// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "kernel" source: events of the kevent Generic Netlink family
 * (kevent.ko), a Generic Netlink source (source-genl.h).  kevent.ko keeps
 * its recent events in a ring and answers KEVENT_CMD_GET with the events
 * after a number (send_kevent(9)), so this source misses nothing it can
 * fetch: on a gap in the sequence numbers, after an overrun (ENOBUFS),
 * and at start-up from the position saved in the position file (the
 * instance of the module and the last number handled), it asks for what
 * it missed on a socket of its own, read from the loop like any other,
 * and hands those events on flagged as recovered, in sequence order,
 * each number once (seqsync.h: kseqsync).  What the ring no longer has
 * is counted lost with the number the module reports.  Events it handed
 * on and that are not handled yet (queued, or their handlers running) are
 * in flight (inflight.h): the position lists them, so the next start
 * fetches them again, whether this keventd stops (a stop drops what is
 * queued) or dies (SIGKILL, a crash: a run that was under way then runs
 * again).  A
 * module that cannot answer (an older kevent.ko) is followed as before:
 * numbers that never arrive are counted lost when they fall out of the
 * window.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inflight.h"
#include "kernel-msg.h"
#include "kernel-pos.h"
#include "log.h"
#include "loop.h"
#include "seqsync.h"
#include "seqwin.h"
#include "source-genl.h"
#include "statedir.h"
#include "util.h"
#include "source-type.h"

#define KERNEL_POS_FILE	      "kernel.pos"	  /* in the state directory */
#define KERNEL_POS_MAX	      (256 * 1024 * 1024) /* bytes: a redo list of millions */
#define DUMP_BUF	      (64 * 1024)
#define DUMP_READS_PER_WAKEUP 64
/* a handled event leaves the position at most this late, when no batch
 * of events read has saved it before */
#define POS_SAVE_DELAY_NS (100 * 1000 * 1000ull)

static const char *const group_names[KEVENT_NTYPES] = {
	KEVENT_MCGRP_GENERAL, KEVENT_MCGRP_STORAGE, KEVENT_MCGRP_POWER,
	KEVENT_MCGRP_FS,      KEVENT_MCGRP_HOTPLUG,
};

struct kernel_state {
	struct kseqwin win; /* without fetches: an older module, or tests */
	struct kseqsync sync;
	bool fetch; /* fetch what was missed (false: the window only) */
	bool paused;
	uint64_t instance;	  /* of the message being decoded */
	const struct ksink *sink; /* &sink_copy, for a source that fetches */
	struct ksink sink_copy;
	char *pos_path; /* for messages; NULL: no position kept */
	int pos_dirfd;	/* the state directory (KEVENTD_KERNEL_POS: its directory) */
	char *pos_name; /* the position file's name in it */
	uint64_t saved_instance, saved_last, saved_redo_changes, saved_flight_changes;
	/* handed on, not handled yet (handled()); numbers of flight_instance */
	struct kinflight flight;
	uint64_t flight_instance;
	struct ktimer *save_timer; /* a save after events were handled */
	struct nl_sock *dump;	   /* the fetch under way */
	struct kio *dump_io;
	int dump_family;
	uint64_t dump_after, dump_events;
	char *buf;
};

/* ---- the position file (kernel-pos.h), written then renamed ---- */

static void pos_load(struct kernel_state *st)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct kkernel_pos pos = {0};
	if (!st->pos_path)
		return;
	int rc = kstatedir_read(st->pos_dirfd, st->pos_name, KERNEL_POS_MAX, &text, &len);
	if (rc < 0) {
		if (rc != -ENOENT)
			log_warning("kernel: cannot read %s: %s", st->pos_path,
				    kstatedir_strerror(rc));
		return;
	}
	rc = kkernel_pos_parse(text, len, &pos);
	if (rc == -ENOMEM) {
		log_warning("kernel: cannot read %s: %s", st->pos_path, strerror(-rc));
		return;
	}
	if (rc < 0) {
		log_warning("kernel: %s is not a position; starting from the current event",
			    st->pos_path);
		return;
	}
	kseqsync_init(&st->sync, pos.instance, pos.last);
	size_t kept = 0;
	for (size_t i = 0; i < pos.n_redo; i++)
		kept += kseqsync_unhandled(&st->sync, pos.redo[i]) == 0;
	if (kept < pos.n_redo)
		log_warning("kernel: out of memory: %zu events of %s not fetched again",
			    pos.n_redo - kept, st->pos_path);
	else if (kept)
		log_info("kernel: %zu events the last run did not handle are fetched again", kept);
	kkernel_pos_release(&pos);
	st->saved_instance = st->sync.instance;
	st->saved_last = kseqsync_last(&st->sync);
	st->saved_redo_changes = st->sync.redo_changes;
}

/* The numbers to redo: those a fetch is still to bring again, and those
 * in flight, ascending, each once; NULL when none (or -ENOMEM). */
static uint64_t *redo_list(struct kernel_state *st, size_t *n, int *rc)
{
	size_t n_sync = 0, n_flight = 0, i = 0, j = 0;
	const uint64_t *sync = kseqsync_redo(&st->sync, &n_sync);
	if (st->flight_instance == st->sync.instance)
		n_flight = kinflight_count(&st->flight);
	*n = 0;
	*rc = 0;
	if (!n_sync && !n_flight)
		return NULL;
	uint64_t *all = malloc((n_sync + n_flight) * sizeof(*all));
	if (!all) {
		*rc = -ENOMEM;
		return NULL;
	}
	uint64_t *flight = all + n_sync; /* read before it is written over */
	kinflight_list(&st->flight, flight);
	while (i < n_sync || j < n_flight) {
		uint64_t a = i < n_sync ? sync[i] : UINT64_MAX;
		uint64_t b = j < n_flight ? flight[j] : UINT64_MAX;
		all[(*n)++] = a < b ? a : b;
		i += a <= b;
		j += b <= a;
	}
	return all;
}

static void pos_save(struct kernel_state *st)
{
	uint64_t last = kseqsync_last(&st->sync);
	if (!st->fetch || !st->pos_path || !st->sync.instance || st->sync.fetching ||
	    (st->sync.instance == st->saved_instance && last == st->saved_last &&
	     st->sync.redo_changes == st->saved_redo_changes &&
	     st->flight.changes == st->saved_flight_changes))
		return;
	struct kkernel_pos pos = {.instance = st->sync.instance, .last = last};
	int rc;
	_cleanup_free_ uint64_t *redo = redo_list(st, &pos.n_redo, &rc);
	pos.redo = redo;
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	if (rc == 0)
		kkernel_pos_format(&pos, &text);
	if (rc == 0 && text.oom)
		rc = -ENOMEM;
	if (rc == 0)
		rc = kstatedir_replace(st->pos_dirfd, st->pos_name, text.buf, text.len, 0644);
	if (rc == 0) {
		st->saved_instance = st->sync.instance;
		st->saved_last = last;
		st->saved_redo_changes = st->sync.redo_changes;
		st->saved_flight_changes = st->flight.changes;
		return;
	}
	static struct klog_throttle pos_log = {.name = "kernel",
					       .what = "lines about the position"};
	klog_throttled(&pos_log, LOG_WARNING, "kernel: cannot write %s: %s", st->pos_path,
		       kstatedir_strerror(rc));
}

/* ---- fetching what was missed ---- */

static struct klog_throttle lost_log = {
	.name = "kernel", .what = "lines about lost events", .counted = true};

/* The events a stop listed to redo are gone with the instance that had
 * them: lost, and known to be. */
static void report_forsaken(struct kernel_state *st)
{
	uint64_t n = kseqsync_forsaken(&st->sync);
	if (!n)
		return;
	ksink_lost(st->sink, KEVENT_SOURCE_KERNEL, n);
	klog_throttled(&lost_log, LOG_WARNING,
		       "kernel: %" PRIu64 " events the last run did not handle are lost: kevent.ko "
		       "was loaded again since",
		       n);
}

/* seq, of instance, is handed on: in flight until handled().  Numbers of
 * another instance mean nothing any more: the module was loaded again. */
static void track_flight(struct kernel_state *st, uint64_t instance, uint64_t seq)
{
	static struct klog_throttle flight_log = {.name = "kernel",
						  .what = "lines about events not kept"};
	if (instance != st->flight_instance) {
		kinflight_clear(&st->flight);
		st->flight_instance = instance;
	}
	if (kinflight_add(&st->flight, seq) < 0)
		klog_throttled(&flight_log, LOG_WARNING,
			       "kernel: out of memory: seq %" PRIu64 " is not in the position "
			       "until it is handled; a crash before then loses it",
			       seq);
}

static void dump_close(struct kernel_state *st)
{
	kio_free(st->dump_io);
	st->dump_io = NULL;
	nl_socket_free(st->dump);
	st->dump = NULL;
}

/* The module cannot answer: follow it with the window alone from here. */
static void give_up_fetching(struct kernel_state *st, const char *why)
{
	dump_close(st);
	kseqsync_abort(&st->sync);
	if (st->fetch)
		log_notice("kernel: cannot fetch missed events from kevent.ko (%s); events that "
			   "never arrive are counted lost",
			   why);
	st->fetch = false;
	st->win = (struct kseqwin){0};
	if (st->sync.next)
		(void)kseqwin_see(&st->win, st->sync.next - 1, &(uint64_t){0});
}

static void on_dump(struct kio *io, int fd, uint32_t events, void *userdata);

static void start_fetch(struct kernel_state *st)
{
	if (!st->fetch || st->sync.fetching)
		return;
	uint64_t after = kseqsync_fetch(&st->sync);
	int rc = kgenl_dump_open(KEVENT_GENL_NAME, KEVENT_CMD_GET, KEVENT_A_SEQNUM, after,
				 &st->dump, &st->dump_family);
	if (rc == 0)
		rc = kloop_add_io(st->sink->loop, nl_socket_get_fd(st->dump),
				  st->paused ? 0 : EPOLLIN, on_dump, st, &st->dump_io);
	if (rc < 0) {
		dump_close(st);
		kseqsync_abort(&st->sync);
		if (rc != -ENOENT) /* no family: fetched again when it appears */
			log_warning("kernel: cannot ask kevent.ko for missed events: %s",
				    strerror(-rc));
		return;
	}
	st->dump_after = after;
	st->dump_events = 0;
}

static void end_fetch(struct kernel_state *st, const struct kkernel_meta *m)
{
	uint64_t lost;
	uint64_t after = st->dump_after;
	dump_close(st);
	bool again = kseqsync_end(&st->sync, m->instance, m->current, m->gone, &lost);
	report_forsaken(st);
	if (st->dump_events)
		log_info("kernel: recovered %" PRIu64 " missed events from kevent.ko's ring "
			 "(after sequence number %" PRIu64 ", up to %" PRIu64 ")",
			 st->dump_events, after, m->current);
	if (lost) {
		ksink_lost(st->sink, KEVENT_SOURCE_KERNEL, lost);
		klog_throttled(&lost_log, LOG_WARNING,
			       "kernel: %" PRIu64 " events lost: no longer in kevent.ko's ring "
			       "(after sequence number %" PRIu64 ", up to %" PRIu64 ")",
			       lost, after, m->current);
	}
	pos_save(st);
	if (again)
		start_fetch(st);
}

/* One datagram of the answer; false: the fetch is over. */
static bool dump_datagram(struct kernel_state *st, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	size_t left = len;
	for (; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
		if (nlh->nlmsg_type == NLMSG_NOOP)
			continue;
		if (nlh->nlmsg_type == NLMSG_DONE) {
			/* the end without the final message */
			dump_close(st);
			kseqsync_abort(&st->sync);
			return false;
		}
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nlh);
			if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				continue;
			if (e->error == -EOPNOTSUPP || e->error == -EINVAL)
				give_up_fetching(st, "an older kevent.ko");
			else if (e->error == -EPERM)
				give_up_fetching(st, "not allowed: CAP_NET_ADMIN is needed");
			else if (e->error) {
				log_warning("kernel: kevent.ko refused the fetch: %s",
					    strerror(-e->error));
				dump_close(st);
				kseqsync_abort(&st->sync);
			}
			return !e->error && st->dump;
		}
		struct kkernel_meta m;
		struct kevent *ev = NULL;
		const char *why = NULL;
		if (kkernel_decode_meta(nlh, left, st->dump_family, &ev, &m, &why) < 0) {
			ksink_reject(st->sink, KEVENT_SOURCE_KERNEL, why);
			continue;
		}
		if (m.end) {
			end_fetch(st, &m);
			return false;
		}
		if (kseqsync_fetched(&st->sync, m.instance, ev->seqnum) != KSEQSYNC_HANDLE) {
			report_forsaken(st);
			kevent_free(ev);
			continue;
		}
		ev->recovered = true;
		st->dump_events++;
		track_flight(st, m.instance, ev->seqnum);
		(void)ksink_submit(st->sink, ev);
	}
	return true;
}

static void on_dump(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kernel_state *st = userdata;
	(void)io;
	(void)events;
	for (int i = 0; i < DUMP_READS_PER_WAKEUP && !st->paused && st->dump; i++) {
		size_t n = 0;
		int err = 0;
		switch (kgenl_recv(fd, st->buf, DUMP_BUF, &n, &err)) {
		case KGENL_DATAGRAM:
			if (!dump_datagram(st, st->buf, n))
				goto out;
			break;
		case KGENL_AGAIN:
			goto out;
		case KGENL_FORGED:
			ksink_reject(st->sink, KEVENT_SOURCE_KERNEL,
				     "netlink message not from the kernel (sender port id != 0)");
			break;
		case KGENL_OVERRUN:
		case KGENL_TRUNC:
		case KGENL_ERROR:
			/* the answer is broken: ask again */
			log_warning("kernel: the fetch of missed events failed; asking again");
			dump_close(st);
			kseqsync_abort(&st->sync);
			start_fetch(st);
			return;
		}
	}
out:
	pos_save(st);
}

/* ---- the source's hooks ---- */

/* Where the position is kept: kernel.pos in the state directory, or the
 * file KEVENTD_KERNEL_POS names (for tests: its directory is made when
 * missing and not checked, the file is, as any state file); neither:
 * nowhere.  0 or -errno. */
static int pos_where(struct kernel_state *st, const char *path)
{
	const struct kstatedir *sd = st->sink->state;
	if (path && *path) {
		_cleanup_free_ char *dir = strdup(path);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (!dir)
			return -ENOMEM;
		if (slash)
			*slash = '\0';
		const char *name = slash ? slash + 1 : path;
		/* made when missing, as the state directory is */
		if (slash && slash != dir && mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
		st->pos_dirfd = open(!slash	    ? "."
				     : slash == dir ? "/"
						    : dir,
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (st->pos_dirfd < 0)
			return -errno;
		st->pos_name = strdup(name);
		st->pos_path = strdup(path);
	} else if (sd) {
		st->pos_dirfd = fcntl(sd->fd, F_DUPFD_CLOEXEC, 3);
		if (st->pos_dirfd < 0)
			return -errno;
		st->pos_name = strdup(KERNEL_POS_FILE);
		if (asprintf(&st->pos_path, "%s/" KERNEL_POS_FILE, sd->path) < 0)
			st->pos_path = NULL;
	} else {
		return 0;
	}
	return st->pos_name && st->pos_path ? 0 : -ENOMEM;
}

/* What kernel_init() allocates, freed (also half made). */
static void state_free(struct kernel_state *st)
{
	free(st->pos_path);
	free(st->pos_name);
	if (st->pos_dirfd >= 0)
		close(st->pos_dirfd);
	free(st->buf);
	free(st);
}

static int kernel_init(const void *arg, void **state)
{
	struct kernel_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->pos_dirfd = -1;
	/* arg: the sink, for a source that fetches; NULL in tests */
	if (arg) {
		const char *path = getenv("KEVENTD_KERNEL_POS");
		st->sink_copy = *(const struct ksink *)arg;
		st->sink = &st->sink_copy;
		st->fetch = true;
		int rc = pos_where(st, path);
		st->buf = malloc(DUMP_BUF);
		if (rc < 0 || !st->buf) {
			state_free(st);
			return rc < 0 ? rc : -ENOMEM;
		}
		pos_load(st);
	}
	*state = st;
	return 0;
}

static void kernel_fini(void *state)
{
	struct kernel_state *st = state;
	dump_close(st);
	ktimer_cancel(st->save_timer);
	/* the handlers that ran on after the stop are done: the last word */
	pos_save(st);
	kinflight_release(&st->flight);
	kseqsync_release(&st->sync);
	state_free(st);
}

static int kernel_decode(void *state, const struct nlmsghdr *nlh, size_t left, int family_id,
			 struct kevent **ev, const char **why)
{
	struct kernel_state *st = state;
	struct kkernel_meta m;
	if (nlh->nlmsg_type == NLMSG_NOOP || nlh->nlmsg_type == NLMSG_DONE)
		return 0;
	int rc = kkernel_decode_meta(nlh, left, family_id, ev, &m, why);
	if (rc == 0 && m.end) {
		*why = "unknown kevent command";
		return -EINVAL;
	}
	st->instance = m.instance;
	return rc;
}

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

static bool kernel_accept(void *state, const struct ksink *sink, const struct kevent *ev)
{
	struct kernel_state *st = state;
	if (!st->fetch) {
		uint64_t lost;
		(void)kseqwin_see(&st->win, ev->seqnum, &lost);
		report_lost(sink, lost, st->win.next);
		return true;
	}
	switch (kseqsync_live(&st->sync, st->instance, ev->seqnum)) {
	case KSEQSYNC_HANDLE:
		track_flight(st, st->instance, ev->seqnum);
		return true;
	case KSEQSYNC_DROP:
		return false;
	case KSEQSYNC_FETCH:
		report_forsaken(st);
		start_fetch(st);
		return false;
	}
	return false;
}

static void kernel_overrun(void *state, const struct ksink *sink)
{
	struct kernel_state *st = state;
	(void)sink;
	/* the tail of a burst may be gone with no gap to show it: ask */
	if (st->fetch && kseqsync_overrun(&st->sync))
		start_fetch(st);
}

static void kernel_batch(void *state, const struct ksink *sink)
{
	(void)sink;
	pos_save(state);
}

static void kernel_pause(void *state, bool pause)
{
	struct kernel_state *st = state;
	st->paused = pause;
	if (st->dump_io)
		(void)kio_set_events(st->dump_io, pause ? 0 : EPOLLIN);
}

/* Reading ends, or starts afresh: what is still missing will not come now. */
static void kernel_settle(void *state, const struct ksink *sink)
{
	struct kernel_state *st = state;
	if (st->fetch) {
		/* the position says what is missing; the next start fetches it */
		dump_close(st);
		kseqsync_abort(&st->sync);
		pos_save(st);
		return;
	}
	uint64_t lost = kseqwin_settle(&st->win);
	report_lost(sink, lost, st->win.next);
}

/* Dropped at a stop: the position lists it (it is in flight, or added to
 * the list to redo), the next start fetches it.  Not an event of the
 * instance followed now: its number means nothing. */
static int kernel_unhandled(void *state, const struct kevent *ev)
{
	struct kernel_state *st = state;
	if (!st->fetch)
		return -EOPNOTSUPP;
	if (ev->instance != st->sync.instance)
		return -ESTALE;
	if (st->sync.fetching) {
		/* nothing more is read: the position is saved without it */
		dump_close(st);
		kseqsync_abort(&st->sync);
	}
	if (st->flight_instance == ev->instance && kinflight_has(&st->flight, ev->seqnum))
		return 0;
	return kseqsync_unhandled(&st->sync, ev->seqnum);
}

static void on_save_timer(struct ktimer *t, void *userdata)
{
	struct kernel_state *st = userdata;
	(void)t;
	st->save_timer = NULL;
	pos_save(st);
}

/* Handled: no longer in flight, so no longer in the position, once it is
 * saved: after the next batch read, or soon (a timer) if none comes. */
static void kernel_handled(void *state, const struct kevent *ev)
{
	struct kernel_state *st = state;
	if (st->flight_instance != ev->instance || !kinflight_remove(&st->flight, ev->seqnum))
		return;
	if (!st->save_timer && st->sink && st->sink->loop &&
	    kloop_add_timer(st->sink->loop, now_monotonic_ns() + POS_SAVE_DELAY_NS, on_save_timer,
			    st, &st->save_timer) < 0)
		st->save_timer = NULL; /* the next batch or the stop saves it */
}

static void kernel_resync(void *state, const struct ksink *sink)
{
	struct kernel_state *st = state;
	if (st->sink) {
		/* (re)subscribed: a (re)loaded module may be able to answer */
		if (!st->fetch)
			st->sync.next = st->win.started ? st->win.next : 0;
		st->fetch = true;
		dump_close(st);
		kseqsync_abort(&st->sync);
		start_fetch(st);
		return;
	}
	kernel_settle(state, sink);
	/* a (re)loaded module counts from its own start */
	st->win = (struct kseqwin){0};
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
	.accept = kernel_accept,
	.overrun = kernel_overrun,
	.batch = kernel_batch,
	.pause = kernel_pause,
	.resync = kernel_resync,
	.stop = kernel_settle,
	.unhandled = kernel_unhandled,
	.handled = kernel_handled,
	.say_absent = "the kevent module is not loaded; subscribing when it appears",
	.say_waiting = "waiting for kevent.ko to be loaded (modprobe kevent)",
	.say_appeared = "the kevent family appeared",
	.say_gone = "the kevent family went away (module unloaded); waiting for it",
	.say_cannot_subscribe = "cannot subscribe to the kevent groups",
	.say_cannot_follow = "cannot follow the generic netlink controller",
};

int ksource_kernel_new(const struct ksink *sink, struct ksource **out)
{
	/* the state keeps a copy of the sink: it fetches on its own */
	return ksource_genl_new(&ksource_kernel_desc, sink, sink, out);
}

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_kernel_new(a->sink, out);
}

const struct ksource_type ksource_type_kernel = {
	.kind = KEVENT_SOURCE_KERNEL,
	.make = make,
};

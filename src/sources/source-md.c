// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "md" source: Linux software RAID, from the kernel's own wake-ups.
 * /proc/mdstat wakes a poller with POLLPRI on every md event (a member
 * failed, added or removed, a sync started or ended, an array started or
 * stopped), and each array's md/ attributes array_state, degraded,
 * sync_action, sync_completed and the members' dev-NAME/state wake theirs
 * (sysfs_notify).  Each wake-up is one look: mdstat and every array's
 * attributes read, compared with the last look (md-state.c), the changes
 * submitted.  A running sync is the one thing the kernel does not wake
 * anyone for often enough: sync_completed moves at every sixteenth of
 * the array, so while a sync runs a timer looks again when its next 10 %
 * step is due at the measured rate (keventd(8)); no sync, no timer.
 * Without an md driver (no /proc/mdstat) the source listens for the
 * module's load on a uevent socket, and begins then.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "md.h"
#include "source-md.h"
#include "util.h"
#include "source-type.h"

#define MDSTAT	  "/proc/mdstat"
#define SYS_BLOCK "/sys/block"

static const char *const array_attrs[] = {"array_state", "degraded", "sync_action",
					  "sync_completed"};

struct watch {
	struct array *a;
	int fd;
	struct kio *io;
	char member[KMD_NAME_MAX]; /* "" for the array's own attribute */
};

struct array {
	struct md_source *md;
	char name[KMD_NAME_MAX];
	char devpath[PATH_MAX]; /* "/devices/virtual/block/md0" */
	int dirfd;		/* its md/ directory, -1 until it has one */
	struct watch attrs[ARRAY_SIZE(array_attrs)];
	struct watch *mw; /* the members' state */
	size_t n_mw;
	struct kmd_track t;
	struct ktimer *timer;
	bool seen;
};

struct md_source {
	struct ksource base;
	struct ksink sink;
	int stat_fd, uevent_fd;
	struct kio *stat_io, *uevent_io;
	struct array **a;
	size_t n;
	uint64_t seq;
	bool started; /* the first look is made: arrays after it are new */
	bool paused, stopped;
};

static void scan(struct md_source *md);
static int uevent_open(struct md_source *md);

static void watch_close(struct watch *w)
{
	kio_free(w->io);
	w->io = NULL;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/* An attribute woke us: read it on its own descriptor (which is what
 * clears its wake-up), then look at everything. */
static void on_attr(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct watch *w = userdata;
	(void)io, (void)events;
	char buf[256];
	if (pread(fd, buf, sizeof(buf), 0) < 0) {
		/* gone with its member or its array: it would wake us for ever */
		watch_close(w);
	}
	scan(w->a->md);
}

static int watch_open(struct array *a, struct watch *w, const char *path, const char *member)
{
	w->a = a;
	w->io = NULL;
	snprintf(w->member, sizeof(w->member), "%s", member);
	w->fd = openat(a->dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (w->fd < 0)
		return -errno;
	char buf[256];
	/* a first read: from here on, only a change wakes */
	ssize_t r = pread(w->fd, buf, sizeof(buf), 0);
	(void)r;
	int rc = kloop_add_io(a->md->sink.loop, w->fd, a->md->paused ? 0 : EPOLLPRI, on_attr, w,
			      &w->io);
	if (rc < 0)
		watch_close(w);
	return rc;
}

/* The members' state watches follow the members of the last look: all
 * opened again when the list changed (rare: members come and go), since
 * each watch's kio holds its address. */
static void watch_members(struct array *a)
{
	const struct kmd_array *l = &a->t.last;
	struct watch *v = calloc(l->n_m ? l->n_m : 1, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < a->n_mw; i++)
		watch_close(&a->mw[i]);
	free(a->mw);
	a->mw = v;
	a->n_mw = 0;
	for (size_t j = 0; j < l->n_m; j++) {
		char path[KMD_NAME_MAX + 16];
		snprintf(path, sizeof(path), "dev-%s/state", l->m[j].name);
		if (watch_open(a, &a->mw[a->n_mw], path, l->m[j].name) == 0)
			a->n_mw++;
	}
}

static bool members_watched(const struct array *a)
{
	const struct kmd_array *l = &a->t.last;
	if (a->n_mw != l->n_m)
		return false;
	for (size_t i = 0; i < a->n_mw; i++)
		if (a->mw[i].fd < 0 || strcmp(a->mw[i].member, l->m[i].name) != 0)
			return false;
	return true;
}

static void array_free(struct array *a)
{
	if (!a)
		return;
	ktimer_cancel(a->timer);
	for (size_t i = 0; i < ARRAY_SIZE(a->attrs); i++)
		watch_close(&a->attrs[i]);
	for (size_t i = 0; i < a->n_mw; i++)
		watch_close(&a->mw[i]);
	free(a->mw);
	if (a->dirfd >= 0)
		close(a->dirfd);
	free(a);
}

/* The array's md/ directory, its device path and its attribute watches:
 * 0, or -errno (an array still being set up has no md/ yet). */
static int array_open(struct array *a)
{
	char path[PATH_MAX], real[PATH_MAX];
	snprintf(path, sizeof(path), SYS_BLOCK "/%s", a->name);
	if (!realpath(path, real))
		return -errno;
	if (strncmp(real, "/sys/", 5) != 0)
		return -EINVAL;
	snprintf(a->devpath, sizeof(a->devpath), "%s", real + 4);
	snprintf(path, sizeof(path), SYS_BLOCK "/%s/md", a->name);
	a->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->dirfd < 0)
		return -errno;
	for (size_t i = 0; i < ARRAY_SIZE(array_attrs); i++)
		if (watch_open(a, &a->attrs[i], array_attrs[i], "") < 0)
			log_debug("md: %s: cannot watch md/%s", a->name, array_attrs[i]);
	return 0;
}

static void on_timer(struct ktimer *t, void *userdata)
{
	struct array *a = userdata;
	(void)t;
	a->timer = NULL;
	if (!a->md->paused)
		scan(a->md);
}

static void submit(struct md_source *md, const struct array *a, const struct kmd_change *c)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kmd_event(c, &a->t.last, a->devpath, now_realtime_ns(), &ev, &why);
	if (rc < 0) {
		ksink_reject(&md->sink, KEVENT_SOURCE_MD, rc == -ENOMEM ? "out of memory" : why);
		return;
	}
	ev->seqnum = ++md->seq;
	if (c->initial)
		log_notice("md: %s is already %s at start-up", a->name,
			   strcmp(c->signal, "degraded") == 0 ? "degraded"
							      : kmd_action_name(c->action));
	(void)ksink_submit(&md->sink, ev);
}

/* One look at array a, mdstat's view of it in cur. */
static void look(struct md_source *md, struct array *a, const struct kmd_array *from_stat,
		 uint64_t now)
{
	struct kmd_array cur = *from_stat;
	if (a->dirfd < 0 && array_open(a) < 0)
		return; /* not set up yet: the next md event says when */
	if (kmd_sysfs_read(a->dirfd, &cur) < 0)
		return;
	struct kmd_changes ch;
	bool fresh = md->started;
	kmd_update(&a->t, &cur, fresh, now, &ch);
	for (size_t i = 0; i < ch.n; i++)
		submit(md, a, &ch.v[i]);
	if (!members_watched(a))
		watch_members(a);
	ktimer_cancel(a->timer);
	a->timer = NULL;
	uint64_t next = kmd_next_look(&a->t, now);
	if (next && kloop_add_timer(md->sink.loop, now + next, on_timer, a, &a->timer) < 0)
		log_warning("md: %s: cannot time the next look at its sync", a->name);
}

static struct array *find_array(struct md_source *md, const char *name)
{
	for (size_t i = 0; i < md->n; i++)
		if (strcmp(md->a[i]->name, name) == 0)
			return md->a[i];
	return NULL;
}

static struct array *array_add(struct md_source *md, const char *name)
{
	struct array *a = calloc(1, sizeof(*a));
	struct array **v = realloc(md->a, (md->n + 1) * sizeof(*v));
	if (v)
		md->a = v;
	if (!a || !v) {
		free(a);
		return NULL;
	}
	a->md = md;
	a->dirfd = -1;
	for (size_t i = 0; i < ARRAY_SIZE(a->attrs); i++)
		a->attrs[i].fd = -1;
	snprintf(a->name, sizeof(a->name), "%s", name);
	md->a[md->n++] = a;
	return a;
}

/* /proc/mdstat cannot be read any more: every array let go, and the
 * md driver's load awaited. */
static void stat_lost(struct md_source *md)
{
	kio_free(md->stat_io);
	md->stat_io = NULL;
	close(md->stat_fd);
	md->stat_fd = -1;
	for (size_t i = 0; i < md->n; i++)
		array_free(md->a[i]);
	md->n = 0;
	int rc = md->uevent_fd < 0 ? uevent_open(md) : 0;
	if (rc < 0)
		log_warning("md: cannot watch for the md driver: %s", strerror(-rc));
}

/* Reads mdstat and looks at every array in it; those gone are let go. */
static void scan(struct md_source *md)
{
	if (md->stopped || md->stat_fd < 0)
		return;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct kmd_stat st;
	int rc = reread_fd(md->stat_fd, KMD_MDSTAT_MAX, &text, &len);
	if (rc < 0 && rc != -ENOMEM) {
		/* the md driver is going (rmmod): it would wake us for ever */
		log_warning("md: cannot read %s: %s; watching for the md driver again", MDSTAT,
			    strerror(-rc));
		stat_lost(md);
		return;
	}
	if (rc == 0)
		rc = kmd_stat_parse(text, len, &st);
	if (rc < 0) {
		log_warning("md: cannot read %s: %s", MDSTAT, strerror(-rc));
		return;
	}
	for (size_t i = 0; i < md->n; i++)
		md->a[i]->seen = false;
	uint64_t now = now_monotonic_ns();
	for (size_t i = 0; i < st.n; i++) {
		struct array *a = find_array(md, st.v[i].name);
		if (!a && !(a = array_add(md, st.v[i].name))) {
			log_warning("md: out of memory for %s", st.v[i].name);
			continue;
		}
		a->seen = true;
		look(md, a, &st.v[i], now);
	}
	size_t k = 0;
	for (size_t i = 0; i < md->n; i++) {
		if (md->a[i]->seen)
			md->a[k++] = md->a[i];
		else
			array_free(md->a[i]);
	}
	md->n = k;
	md->started = true;
	kmd_stat_release(&st);
}

static void on_stat(struct kio *io, int fd, uint32_t events, void *userdata)
{
	(void)io, (void)fd, (void)events;
	scan(userdata);
}

static int stat_open(struct md_source *md)
{
	md->stat_fd = open(MDSTAT, O_RDONLY | O_CLOEXEC);
	if (md->stat_fd < 0)
		return -errno;
	int rc = kloop_add_io(md->sink.loop, md->stat_fd, md->paused ? 0 : EPOLLPRI, on_stat, md,
			      &md->stat_io);
	if (rc < 0) {
		close(md->stat_fd);
		md->stat_fd = -1;
	}
	return rc;
}

/* The kernel's uevents, while there is no md driver: its module's load
 * ("add@/module/md_mod") is when /proc/mdstat appears. */
static void on_uevent(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct md_source *md = userdata;
	(void)io, (void)events;
	char buf[4096];
	bool md_loaded = false;
	for (int i = 0; i < 64; i++) {
		struct sockaddr_nl sa;
		socklen_t sl = sizeof(sa);
		ssize_t n = recvfrom(fd, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&sa, &sl);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		buf[n] = '\0';
		/* the module, or its first array (should the module's own
		 * uevent have come before /proc/mdstat) */
		if (sa.nl_pid == 0 && (strncmp(buf, "add@/module/md_mod", 18) == 0 ||
				       strncmp(buf, "add@/devices/virtual/block/md", 29) == 0))
			md_loaded = true;
	}
	if (!md_loaded || md->stopped)
		return;
	if (stat_open(md) < 0)
		return;
	log_info("md: the md driver is loaded: watching %s", MDSTAT);
	kio_free(md->uevent_io);
	md->uevent_io = NULL;
	close(md->uevent_fd);
	md->uevent_fd = -1;
	md->started = true; /* every array from now on is new */
	scan(md);
}

static int uevent_open(struct md_source *md)
{
	md->uevent_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			       NETLINK_KOBJECT_UEVENT);
	if (md->uevent_fd < 0)
		return -errno;
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = 1};
	if (bind(md->uevent_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(md->uevent_fd);
		md->uevent_fd = -1;
		return -e;
	}
	int rc = kloop_add_io(md->sink.loop, md->uevent_fd, md->paused ? 0 : EPOLLIN, on_uevent, md,
			      &md->uevent_io);
	if (rc < 0) {
		close(md->uevent_fd);
		md->uevent_fd = -1;
	}
	return rc;
}

static void md_pause(struct ksource *s, bool pause)
{
	struct md_source *md = (struct md_source *)s;
	md->paused = pause;
	uint32_t pri = pause ? 0 : EPOLLPRI;
	if (md->stat_io)
		(void)kio_set_events(md->stat_io, pri);
	if (md->uevent_io)
		(void)kio_set_events(md->uevent_io, pause ? 0 : EPOLLIN);
	for (size_t i = 0; i < md->n; i++) {
		struct array *a = md->a[i];
		for (size_t j = 0; j < ARRAY_SIZE(a->attrs); j++)
			if (a->attrs[j].io)
				(void)kio_set_events(a->attrs[j].io, pri);
		for (size_t j = 0; j < a->n_mw; j++)
			if (a->mw[j].io)
				(void)kio_set_events(a->mw[j].io, pri);
	}
	if (!pause)
		scan(md);
}

static void md_stop(struct ksource *s)
{
	struct md_source *md = (struct md_source *)s;
	md->stopped = true;
	kio_free(md->stat_io);
	kio_free(md->uevent_io);
	md->stat_io = md->uevent_io = NULL;
	for (size_t i = 0; i < md->n; i++) {
		struct array *a = md->a[i];
		ktimer_cancel(a->timer);
		a->timer = NULL;
		for (size_t j = 0; j < ARRAY_SIZE(a->attrs); j++) {
			kio_free(a->attrs[j].io);
			a->attrs[j].io = NULL;
		}
		for (size_t j = 0; j < a->n_mw; j++) {
			kio_free(a->mw[j].io);
			a->mw[j].io = NULL;
		}
	}
}

static void md_free(struct ksource *s)
{
	struct md_source *md = (struct md_source *)s;
	if (!md)
		return;
	md_stop(s);
	for (size_t i = 0; i < md->n; i++)
		array_free(md->a[i]);
	free(md->a);
	if (md->stat_fd >= 0)
		close(md->stat_fd);
	if (md->uevent_fd >= 0)
		close(md->uevent_fd);
	free(md);
}

/* "2 arrays: md0 raid1 clean, md1 raid5 degraded (1 missing)";
 * "no array (/proc/mdstat)" */
static void md_describe(struct ksource *s, struct strbuf *out)
{
	struct md_source *md = container_of(s, struct md_source, base);
	if (!md->n) {
		strbuf_puts(out, md->stat_fd >= 0 ? "no array yet (/proc/mdstat)"
						  : "waiting for the md driver (uevents)");
		return;
	}
	strbuf_printf(out, "%zu arra%s:", md->n, md->n == 1 ? "y" : "ys");
	for (size_t i = 0; i < md->n && i < 8; i++) {
		const struct kmd_array *a = &md->a[i]->t.last;
		strbuf_printf(out, "%s %s", i ? "," : "", md->a[i]->name);
		if (!md->a[i]->t.known || !a->active) {
			strbuf_puts(out, " inactive");
			continue;
		}
		strbuf_printf(out, " %s", a->level);
		if (a->degraded > 0)
			strbuf_printf(out, " degraded (%d missing)", a->degraded);
		else if (a->array_state[0])
			strbuf_printf(out, " %s", a->array_state);
		if (a->syncing)
			strbuf_puts(out, " syncing");
	}
	if (md->n > 8)
		strbuf_puts(out, ", ...");
}

int ksource_md_new(const struct ksink *sink, struct ksource **out)
{
	struct md_source *md = calloc(1, sizeof(*md));
	if (!md)
		return -ENOMEM;
	md->base = (struct ksource){
		.name = "md",
		.kind = KEVENT_SOURCE_MD,
		.pause = md_pause,
		.stop = md_stop,
		.describe = md_describe,
		.free = md_free,
	};
	md->sink = *sink;
	md->uevent_fd = -1;
	int rc = stat_open(md);
	if (rc == -ENOENT) {
		rc = uevent_open(md);
		if (rc == 0)
			log_info("md: no md driver loaded (no %s): watching for it", MDSTAT);
	}
	if (rc < 0) {
		md_free(&md->base);
		return rc;
	}
	scan(md);
	if (md->stat_fd >= 0)
		log_info("md: watching %zu array(s)", md->n);
	*out = &md->base;
	return 0;
}

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_md_new(a->sink, out);
}

const struct ksource_type ksource_type_md = {
	.kind = KEVENT_SOURCE_MD,
	.make = make,
	.reports_at_start = ksource_reports_always,
};

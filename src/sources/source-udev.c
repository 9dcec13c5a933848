// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "udev" source: uevents through libudev's monitor, from udevd when it
 * runs (or --udev-monitor udev), else straight from the kernel.  Before
 * libudev reads a datagram, its sender is checked here so that forgeries
 * are counted, not just dropped: kernel uevents must come from port id 0,
 * udevd's from a process with uid 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libudev.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "source-udev.h"

#include "fdstore.h"
#include "log.h"
#include "loop.h"
#include "statedir.h"
#include "udev-table.h"
#include "uevent-map.h"
#include "source-type.h"

/* what udevd asks for its own monitor: a boot's burst fits */
#define RCVBUF_BYTES	 (128 * 1024 * 1024)
#define READS_PER_WAKEUP 256
#define MAX_PROPS	 512
#define TABLE_FILE	 "udev.devices" /* in the state directory */
#define GROUP_KERNEL	 1u
#define GROUP_UDEV	 2u

struct kudev {
	struct ksource src;
	struct ksink sink;
	struct udev *udev;
	struct udev_monitor *mon;
	struct kio *io;
	bool from_kernel, paused;
	bool have_seq;
	uint64_t last_seq;
	/* the devices known, kept in table_path (NULL: no state directory) */
	struct kudevtab table;
	char *table_path;
	struct ktimer *save_timer, *resync_timer;
	/* the triggers waiting for room in the source's share, oldest first,
	 * and the timer that goes on with them after a resume */
	struct kudev_trigger *triggers;
	struct ktimer *trigger_timer;
};

/* A keventctl trigger: its enumeration, and the next device to report. */
struct kudev_trigger {
	struct kudev *u; /* NULL once the source is gone */
	struct kudev_trigger *next;
	struct udev_enumerate *en;
	struct udev_list_entry *at;
	char action[16];
	size_t n;
	bool waiting; /* in u->triggers */
	ktrigger_done_fn done;
	void *userdata;
};

static void resync_soon(struct kudev *u);

static struct kudev *of(struct ksource *s)
{
	return container_of(s, struct kudev, src);
}

/* Returns 1 if the next datagram is acceptable, 0 if it was consumed as a
 * reject, -EAGAIN when there is none. */
static int check_sender(struct kudev *u, int fd)
{
	struct sockaddr_nl sa = {0};
	char c;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = {&c, 1};
	struct msghdr mh = {.msg_name = &sa,
			    .msg_namelen = sizeof(sa),
			    .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = &ctl,
			    .msg_controllen = sizeof(ctl)};
	for (;;) {
		ssize_t n = recvmsg(fd, &mh, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == ENOBUFS) {
			ksink_overrun(&u->sink, KEVENT_SOURCE_UDEV);
			resync_soon(u); /* what came and went in what was lost */
			continue;
		}
		return -EAGAIN;
	}
	const struct ucred *cred = NULL;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS)
			cred = (const struct ucred *)CMSG_DATA(cm);
	bool ok = u->from_kernel ? sa.nl_pid == 0 && (sa.nl_groups & GROUP_KERNEL)
				 : (sa.nl_groups & GROUP_UDEV) && cred && cred->uid == 0;
	if (ok)
		return 1;
	char sink;
	ssize_t _unused_ r = recv(fd, &sink, 1, MSG_DONTWAIT); /* drop it */
	ksink_reject(&u->sink, KEVENT_SOURCE_UDEV,
		     u->from_kernel ? "uevent not from the kernel (sender port id != 0)"
				    : "uevent not from udevd (sender not root)");
	return 0;
}

/* Reports of lost uevents come as often as a flood of uevents overruns
 * the socket: logged at a bounded rate (log.h), every loss counted. */
static struct klog_throttle lost_log = {
	.name = "udev", .what = "reports of lost uevents", .counted = true};

static void track_seq(struct kudev *u, uint64_t seq)
{
	if (!u->from_kernel || !seq)
		return; /* udevd may legitimately skip events it filtered */
	if (u->have_seq && seq > u->last_seq + 1) {
		ksink_lost(&u->sink, KEVENT_SOURCE_UDEV, seq - u->last_seq - 1);
		klog_throttled(&lost_log, LOG_WARNING,
			       "udev: %" PRIu64 " uevents lost (SEQNUM %" PRIu64 " after %" PRIu64
			       ")",
			       seq - u->last_seq - 1, seq, u->last_seq);
	}
	u->last_seq = seq;
	u->have_seq = true;
}

/* ---- the device table ---- */

static void save_table(struct ktimer *t, void *userdata)
{
	struct kudev *u = userdata;
	(void)t;
	u->save_timer = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	kudevtab_render(&u->table, &sb);
	int rc = sb.oom ? -ENOMEM
			: kstatedir_replace(u->sink.state->fd, TABLE_FILE, sb.buf, sb.len, 0600);
	if (rc < 0)
		log_warning("udev: cannot write %s: %s", u->table_path, kstatedir_strerror(rc));
}

/* A device came, went or moved (a renamed network interface): the table
 * is written within a second, once for a burst. */
static void note_device(struct kudev *u, const char *action, const char *devpath,
			const char *old_devpath, const char *subsystem)
{
	if (!u->table_path || !action || !devpath)
		return;
	bool gone = strcmp(action, "remove") == 0, moved = strcmp(action, "move") == 0;
	if (!gone && !moved && strcmp(action, "add") != 0)
		return;
	int changed = moved && old_devpath ? kudevtab_set(&u->table, old_devpath, NULL) : 0;
	if (kudevtab_set(&u->table, devpath, gone ? NULL : subsystem ? subsystem : "-") > 0)
		changed = 1;
	if (changed > 0 && !u->save_timer)
		(void)kloop_add_timer(u->sink.loop, now_monotonic_ns() + 1000000000ull, save_table,
				      u, &u->save_timer);
}

/* Every device present now, into t.  0 or -errno. */
static int scan_devices(struct kudev *u, struct kudevtab *t)
{
	struct udev_enumerate *en = udev_enumerate_new(u->udev);
	int rc = en ? udev_enumerate_scan_devices(en) : -ENOMEM;
	struct udev_list_entry *l;
	udev_list_entry_foreach(l, rc == 0 ? udev_enumerate_get_list_entry(en) : NULL)
	{
		struct udev_device *dev =
			udev_device_new_from_syspath(u->udev, udev_list_entry_get_name(l));
		if (!dev)
			continue;
		const char *sub = udev_device_get_subsystem(dev);
		rc = kudevtab_set(t, udev_device_get_devpath(dev), sub ? sub : "-");
		udev_device_unref(dev);
		if (rc < 0)
			break;
		rc = 0;
	}
	udev_enumerate_unref(en);
	return rc;
}

static int submit_device(struct kudev *u, struct udev_device *dev, const char *action);

struct resync {
	struct kudev *u;
	size_t added, removed;
};

/* A difference between the table and the devices present: reported as
 * its uevent, flagged synthetic. */
static void resync_one(void *userdata, const char *action, const char *devpath,
		       const char *subsystem)
{
	struct resync *r = userdata;
	struct kudev *u = r->u;
	if (strcmp(action, "add") == 0) {
		_cleanup_free_ char *syspath = NULL;
		struct udev_device *dev = asprintf(&syspath, "/sys%s", devpath) < 0
						  ? NULL
						  : udev_device_new_from_syspath(u->udev, syspath);
		if (dev && submit_device(u, dev, "add") > 0)
			r->added++;
		udev_device_unref(dev);
		return;
	}
	char *props[3] = {NULL, NULL, NULL};
	struct kevent *ev = NULL;
	const char *why = "out of memory";
	unsigned truncated = 0;
	int rc = asprintf(&props[0], "ACTION=remove") < 0 ||
				 asprintf(&props[1], "DEVPATH=%s", devpath) < 0 ||
				 asprintf(&props[2], "SUBSYSTEM=%s", subsystem) < 0
			 ? -ENOMEM
			 : kuevent_map(props, 3, now_realtime_ns(), &ev, &truncated, &why);
	for (size_t i = 0; i < 3; i++)
		free(props[i]);
	if (rc < 0) {
		ksink_reject(&u->sink, KEVENT_SOURCE_UDEV, why);
		return;
	}
	ev->synthetic = true;
	(void)ksink_submit(&u->sink, ev);
	r->removed++;
}

/* The devices present against the table: the differences reported, the
 * table made the devices present.  The first start (no table yet)
 * reports nothing: boot's coldplug announced them. */
static void resync(struct kudev *u, bool first)
{
	struct kudevtab now = {0};
	if (scan_devices(u, &now) < 0) {
		kudevtab_release(&now);
		log_warning("udev: cannot enumerate the devices; no resynchronisation");
		return;
	}
	struct resync r = {.u = u};
	if (!first)
		kudevtab_diff(&u->table, &now, resync_one, &r);
	kudevtab_release(&u->table);
	u->table = now;
	if (r.added || r.removed)
		log_notice("udev: devices changed while not watched: %zu added, %zu removed "
			   "(reported, synthetic)",
			   r.added, r.removed);
	if (u->save_timer)
		ktimer_cancel(TAKE_PTR(u->save_timer));
	save_table(NULL, u);
}

static void on_resync(struct ktimer *t, void *userdata)
{
	struct kudev *u = userdata;
	(void)t;
	u->resync_timer = NULL;
	resync(u, false);
}

static void resync_soon(struct kudev *u)
{
	if (u->table_path && !u->resync_timer)
		(void)kloop_add_timer(u->sink.loop, now_monotonic_ns(), on_resync, u,
				      &u->resync_timer);
}

/* Submits the uevent of dev; action: a device found, not a uevent
 * received (keventctl trigger), with this ACTION.  1 when submitted, 0
 * when rejected (counted), -ENOMEM. */
static int submit_device(struct kudev *u, struct udev_device *dev, const char *action)
{
	char *props[MAX_PROPS];
	size_t n = 0;
	bool oom = false;
	if (action && asprintf(&props[n], "ACTION=%s", action) < 0)
		oom = true;
	else if (action)
		n++;
	struct udev_list_entry *e;
	udev_list_entry_foreach(e, udev_device_get_properties_list_entry(dev))
	{
		if (n == MAX_PROPS || oom)
			break;
		const char *name = udev_list_entry_get_name(e);
		const char *v = udev_list_entry_get_value(e);
		if (action && (strcmp(name, "ACTION") == 0 || strcmp(name, "SEQNUM") == 0))
			continue; /* neither is the kernel's */
		if (asprintf(&props[n], "%s=%s", name, v ? v : "") < 0) {
			oom = true;
			break;
		}
		n++;
	}
	struct kevent *ev = NULL;
	const char *why = "out of memory";
	unsigned truncated = 0;
	int rc = oom ? -ENOMEM : kuevent_map(props, n, now_realtime_ns(), &ev, &truncated, &why);
	for (size_t i = 0; i < n; i++)
		free(props[i]);
	if (rc == -ENOMEM && action)
		return rc; /* the trigger stops and says so */
	if (rc < 0) {
		ksink_reject(&u->sink, KEVENT_SOURCE_UDEV, why);
		return 0;
	}
	if (truncated)
		ksink_truncated(&u->sink, KEVENT_SOURCE_UDEV);
	if (action)
		ev->synthetic = true;
	else
		track_seq(u, ev->seqnum);
	if (!action)
		note_device(u, udev_device_get_action(dev), udev_device_get_devpath(dev),
			    udev_device_get_property_value(dev, "DEVPATH_OLD"),
			    udev_device_get_subsystem(dev));
	(void)ksink_submit(&u->sink, ev);
	return 1;
}

static void on_uevent(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kudev *u = userdata;
	(void)io;
	(void)events;
	for (int i = 0; i < READS_PER_WAKEUP && !u->paused; i++) {
		int ok = check_sender(u, fd);
		if (ok < 0)
			return;
		if (!ok)
			continue;
		struct udev_device *dev = udev_monitor_receive_device(u->mon);
		if (!dev)
			continue; /* libudev dropped it (malformed): nothing to count twice */
		(void)submit_device(u, dev, NULL); /* refused or not, it is counted */
		udev_device_unref(dev);
	}
}

static void unlink_trigger(struct kudev_trigger *t)
{
	if (!t->waiting || !t->u)
		return;
	for (struct kudev_trigger **p = &t->u->triggers; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	t->waiting = false;
	t->next = NULL;
}

/* Reports t's devices while the source's share has room: 1 when all are,
 * 0 when the rest waits (in u->triggers), -errno. */
static int trigger_run(struct kudev_trigger *t)
{
	struct kudev *u = t->u;
	if (!u)
		return -ESHUTDOWN;
	for (; t->at; t->at = udev_list_entry_get_next(t->at)) {
		if (!ksink_room(&u->sink, KEVENT_SOURCE_UDEV)) {
			if (!t->waiting) {
				struct kudev_trigger **p = &u->triggers;
				while (*p)
					p = &(*p)->next;
				*p = t;
				t->waiting = true;
			}
			return 0;
		}
		struct udev_device *dev =
			udev_device_new_from_syspath(u->udev, udev_list_entry_get_name(t->at));
		if (!dev)
			continue; /* gone since the scan */
		int rc = submit_device(u, dev, t->action);
		udev_device_unref(dev);
		if (rc < 0)
			return rc;
		t->n += (size_t)rc;
	}
	unlink_trigger(t);
	return 1;
}

/* After a resume: the waiting triggers go on, oldest first, until one
 * finds the share full again. */
static void on_trigger_timer(struct ktimer *timer, void *userdata)
{
	struct kudev *u = userdata;
	(void)timer;
	u->trigger_timer = NULL;
	while (u->triggers && !u->paused) {
		struct kudev_trigger *t = u->triggers;
		int rc = trigger_run(t);
		if (rc == 0)
			break;
		unlink_trigger(t);
		t->done(t, rc < 0 ? rc : 0, t->userdata); /* may free t */
	}
}

int ksource_udev_trigger(struct ksource *s, const char *action, const char *const *subsystems,
			 size_t n_subsystems, ktrigger_done_fn done, void *userdata,
			 struct kudev_trigger **out)
{
	*out = NULL;
	if (s->kind != KEVENT_SOURCE_UDEV)
		return -EINVAL;
	struct kudev_trigger *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct kudev_trigger){.u = of(s), .done = done, .userdata = userdata};
	snprintf(t->action, sizeof(t->action), "%s", action);
	t->en = udev_enumerate_new(t->u->udev);
	int rc = t->en ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n_subsystems; i++)
		rc = udev_enumerate_add_match_subsystem(t->en, subsystems[i]);
	if (rc == 0)
		rc = udev_enumerate_scan_devices(t->en);
	if (rc == 0) {
		t->at = udev_enumerate_get_list_entry(t->en);
		rc = trigger_run(t);
	}
	if (rc < 0) {
		ksource_udev_trigger_free(t);
		return rc;
	}
	*out = t;
	return rc;
}

size_t ksource_udev_trigger_count(const struct kudev_trigger *t)
{
	return t->n;
}

void ksource_udev_trigger_free(struct kudev_trigger *t)
{
	if (!t)
		return;
	unlink_trigger(t);
	udev_enumerate_unref(t->en);
	free(t);
}

static void udev_pause(struct ksource *s, bool pause)
{
	struct kudev *u = of(s);
	u->paused = pause;
	if (u->io)
		kio_set_events(u->io, pause ? 0 : EPOLLIN);
	/* not from inside the resume: it may come in the middle of a submit */
	if (!pause && u->triggers && !u->trigger_timer)
		(void)kloop_add_timer(u->sink.loop, now_monotonic_ns(), on_trigger_timer, u,
				      &u->trigger_timer);
}

static void udev_stop(struct ksource *s)
{
	struct kudev *u = of(s);
	kio_free(u->io);
	u->io = NULL;
}

static void udev_free(struct ksource *s)
{
	struct kudev *u = of(s);
	udev_stop(s);
	if (u->mon)
		kfdstore_forget(u->sink.fdstore, udev_monitor_get_fd(u->mon));
	ktimer_cancel(u->resync_timer);
	ktimer_cancel(u->trigger_timer);
	/* their owners free them; nothing more is reported */
	for (struct kudev_trigger *t = u->triggers, *next; t; t = next) {
		next = t->next;
		t->next = NULL;
		t->waiting = false;
		t->u = NULL;
	}
	if (u->save_timer) {
		ktimer_cancel(TAKE_PTR(u->save_timer));
		save_table(NULL, u); /* what came and went since the last write */
	}
	kudevtab_release(&u->table);
	free(u->table_path);
	udev_monitor_unref(u->mon);
	udev_unref(u->udev);
	free(u);
}

/* RCVBUF_BYTES, or for tests a small buffer, to make overruns on purpose
 * (keventd(8), ENVIRONMENT) */
static int rcvbuf_bytes(void)
{
	const char *force = getenv("KEVENTD_UDEV_RCVBUF");
	return force && atoi(force) > 0 ? atoi(force) : RCVBUF_BYTES;
}

/*
 * The monitor's socket that the last run handed over, with the uevents
 * sent meanwhile, in place of the new monitor's.  libudev cannot adopt a
 * socket, so the monitor is made as always and the stored socket put
 * under its descriptor's number (dup3()), which closes the new one.
 * That is sound because the stored socket was made the same way: a
 * NETLINK_KOBJECT_UEVENT socket bound to the same one group (checked:
 * not adopted across a change of --udev-monitor), no filter (this source
 * sets none), SO_PASSCRED and the receive buffer (both set again here).
 * libudev keeps nothing else of its socket that receiving uses.  Reading
 * udev's wire format here instead would duplicate libudev for one
 * descriptor.
 */
static void adopt_stored(struct kudev *u)
{
	struct kfdstore *st = u->sink.fdstore;
	int fd = kfdstore_take(st, "udev");
	if (fd < 0)
		return;
	int mon_fd = udev_monitor_get_fd(u->mon), one = 1;
	const char *why = kfdstore_not_netlink(fd, NETLINK_KOBJECT_UEVENT,
					       u->from_kernel ? GROUP_KERNEL : GROUP_UDEV);
	if (!why && setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		why = "cannot pass credentials on it";
	if (!why && (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 || dup3(fd, mon_fd, O_CLOEXEC) < 0))
		why = strerror(errno);
	if (why) {
		kfdstore_refuse(st, "udev", fd, why);
		return;
	}
	close(fd);
	if (udev_monitor_set_receive_buffer_size(u->mon, rcvbuf_bytes()) < 0)
		log_notice("udev: cannot raise the receive buffer; bursts may overrun");
	log_info("udev: the monitor's socket of the last run taken back");
}

static void udev_describe(struct ksource *s, struct strbuf *out)
{
	struct kudev *u = container_of(s, struct kudev, src);
	strbuf_printf(out, "%s, %zu devices known",
		      u->from_kernel ? "the kernel's uevents (no udevd)" : "udevd's uevents",
		      u->table.n);
}

int ksource_udev_new(const struct ksink *sink, enum kudev_monitor mode, struct ksource **out)
{
	struct kudev *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->sink = *sink;
	u->src = (struct ksource){.name = "udev",
				  .kind = KEVENT_SOURCE_UDEV,
				  .pause = udev_pause,
				  .stop = udev_stop,
				  .describe = udev_describe,
				  .free = udev_free};
	if (mode == KUDEV_AUTO)
		mode = access("/run/udev/control", F_OK) == 0 ? KUDEV_UDEV : KUDEV_KERNEL;
	u->from_kernel = mode == KUDEV_KERNEL;
	u->udev = udev_new();
	if (u->udev)
		u->mon = udev_monitor_new_from_netlink(u->udev, u->from_kernel ? "kernel" : "udev");
	int rc = !u->mon ? -errno : udev_monitor_enable_receiving(u->mon);
	if (rc == 0 && udev_monitor_set_receive_buffer_size(u->mon, rcvbuf_bytes()) < 0)
		log_notice("udev: cannot raise the receive buffer; bursts may overrun");
	if (rc == 0)
		adopt_stored(u);
	if (rc == 0)
		rc = kloop_add_io(sink->loop, udev_monitor_get_fd(u->mon), EPOLLIN, on_uevent, u,
				  &u->io);
	if (rc == 0 && kfdstore_keep(sink->fdstore, "udev", udev_monitor_get_fd(u->mon), false) < 0)
		log_warning("udev: out of memory: its socket is not kept across a restart");
	if (rc < 0) {
		udev_free(&u->src);
		return rc ? rc : -EIO;
	}
	log_info("udev: listening to uevents from %s", u->from_kernel ? "the kernel" : "udevd");
	if (sink->state && asprintf(&u->table_path, "%s/" TABLE_FILE, sink->state->path) < 0)
		u->table_path = NULL;
	if (u->table_path) {
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		rc = kstatedir_read(sink->state->fd, TABLE_FILE, 64u << 20, &text, &len);
		if (rc < 0 && rc != -ENOENT)
			log_warning("udev: cannot read %s: %s", u->table_path,
				    kstatedir_strerror(rc));
		bool first = rc < 0 || kudevtab_parse(&u->table, text, len) < 0;
		resync(u, first);
	}
	*out = &u->src;
	return 0;
}

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_udev_new(a->sink, a->udev_monitor, out);
}

const struct ksource_type ksource_type_udev = {
	.kind = KEVENT_SOURCE_UDEV,
	.make = make,
};

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "input" source (source-input.h).  Devices are the input subsystem's
 * event* nodes: enumerated from sysfs at start-up and followed through a
 * libudev monitor, udevd's when it runs (its ID_INPUT_KEY and
 * ID_INPUT_SWITCH then say which devices to look at), else the kernel's
 * own uevents (where nothing has marked the devices, so their capabilities
 * decide).  Either way a device is kept open only if it can send one of
 * the codes keventd reports; a keyboard without them is closed unread.
 *
 * Each device is read through libevdev, one event at a time, and each
 * event goes straight to kinput_event(), which drops every unlisted code
 * before anything is made of it.  A SYN_DROPPED (the kernel's buffer for
 * this reader overran) is counted as an overrun, and the device's state is
 * resynchronised with LIBEVDEV_READ_FLAG_SYNC; a device that goes away
 * while it is read (ENODEV) is closed and counted under rejected.
 */
#include <errno.h>
#include <fcntl.h>
#include <libevdev/libevdev.h>
#include <libudev.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "source-input.h"

#include "input-map.h"
#include "fdstore.h"
#include "log.h"
#include "loop.h"
#include "source-type.h"

#define READS_PER_WAKEUP 256
#define PENDING_MAX	 256 /* events of a restart read back per device */

struct kinput;

struct kinput_dev {
	struct kinput *in;
	struct kinput_dev *next;
	char *syspath; /* the event* device's: how a remove uevent finds it */
	char *devnode; /* /dev/input/eventN */
	int fd;
	struct libevdev *evdev;
	struct kio *io;
	bool syncing; /* after a SYN_DROPPED, until libevdev has resynced */
};

struct kinput {
	struct ksource src;
	struct ksink sink;
	struct udev *udev;
	struct udev_monitor *mon;
	struct kio *mon_io;
	struct kinput_dev *devs;
	bool from_kernel, paused;
	uint64_t seqnum; /* the last one given */
};

static struct kinput *of(struct ksource *s)
{
	return container_of(s, struct kinput, src);
}

static void dev_free(struct kinput_dev *dev)
{
	if (!dev)
		return;
	kio_free(dev->io);
	libevdev_free(dev->evdev);
	if (dev->fd >= 0) {
		kfdstore_forget(dev->in->sink.fdstore, dev->fd);
		close(dev->fd);
	}
	free(dev->syspath);
	free(dev->devnode);
	free(dev);
}

/* Stops following dev (it is in the list). */
static void dev_drop(struct kinput_dev *dev)
{
	struct kinput *in = dev->in;
	for (struct kinput_dev **p = &in->devs; *p; p = &(*p)->next)
		if (*p == dev) {
			*p = dev->next;
			break;
		}
	dev_free(dev);
}

static uint64_t event_ns(const struct input_event *ie)
{
	uint64_t ns = (uint64_t)ie->input_event_sec * 1000000000ull +
		      (uint64_t)ie->input_event_usec * 1000ull;
	return ns ? ns : now_realtime_ns();
}

/* Hands one event of dev on; nothing at all for an unlisted code. */
static void submit(struct kinput_dev *dev, unsigned type, unsigned code, int value, bool initial,
		   uint64_t ns)
{
	struct kinput *in = dev->in;
	struct kevent *ev = NULL;
	const char *why = "out of memory";
	int rc = kinput_event(type, code, value, initial, dev->devnode,
			      libevdev_get_name(dev->evdev), in->seqnum + 1, ns, &ev, &why);
	if (rc < 0) {
		ksink_reject(&in->sink, KEVENT_SOURCE_INPUT, why);
		return;
	}
	if (!ev)
		return;
	in->seqnum++;
	(void)ksink_submit(&in->sink, ev);
}

static void on_readable(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kinput_dev *dev = userdata;
	struct kinput *in = dev->in;
	(void)io;
	(void)fd;
	if (in->paused && (events & (EPOLLHUP | EPOLLERR))) {
		/* epoll reports a hang-up even while paused: it would come
		 * back at once, so the device goes now, unread */
		log_info("input: %s (%s) went away while paused: no longer followed", dev->devnode,
			 libevdev_get_name(dev->evdev));
		ksink_reject(&in->sink, KEVENT_SOURCE_INPUT, "input device gone mid-read (ENODEV)");
		dev_drop(dev);
		return;
	}
	for (int i = 0; i < READS_PER_WAKEUP && !in->paused; i++) {
		struct input_event ie;
		int flag = dev->syncing ? LIBEVDEV_READ_FLAG_SYNC : LIBEVDEV_READ_FLAG_NORMAL;
		int rc = libevdev_next_event(dev->evdev, flag, &ie);
		if (rc == -EAGAIN && dev->syncing) {
			dev->syncing = false; /* resynced: back to normal reading */
			continue;
		}
		if (rc == -EAGAIN || rc == -EINTR)
			return;
		if (rc < 0) {
			log_info("input: %s (%s) went away while read (%s): no longer followed",
				 dev->devnode, libevdev_get_name(dev->evdev), strerror(-rc));
			ksink_reject(&in->sink, KEVENT_SOURCE_INPUT,
				     rc == -ENODEV ? "input device gone mid-read (ENODEV)"
						   : "input device read failed");
			dev_drop(dev);
			return;
		}
		if (rc == LIBEVDEV_READ_STATUS_SYNC && !dev->syncing) {
			/* SYN_DROPPED: the kernel dropped this reader's events */
			dev->syncing = true;
			ksink_overrun(&in->sink, KEVENT_SOURCE_INPUT);
			continue;
		}
		/* In a resync, the changes of state the dropped events held. */
		submit(dev, ie.type, ie.code, ie.value, false, event_ns(&ie));
	}
}

static struct kinput_dev *find(struct kinput *in, const char *syspath)
{
	for (struct kinput_dev *d = in->devs; d; d = d->next)
		if (strcmp(d->syspath, syspath) == 0)
			return d;
	return NULL;
}

static bool prop_set(struct udev_device *u, const char *name)
{
	const char *v = udev_device_get_property_value(u, name);
	return v && strcmp(v, "1") == 0;
}

/* Whether evdev can send a code keventd reports; the switches among them
 * are counted in *n_switches. */
static bool reports_any(struct libevdev *evdev, size_t *n_switches)
{
	size_t n = 0;
	*n_switches = 0;
	for (size_t i = 0; i < kinput_n_codes; i++)
		if (libevdev_has_event_code(evdev, kinput_codes[i].type, kinput_codes[i].code)) {
			n++;
			*n_switches += kinput_codes[i].type == EV_SW;
		}
	return n > 0;
}

/* The device's descriptor that the last run handed over, with the events
 * it sent meanwhile, if it is still this device (the same device number:
 * an eventN may be another device after an unplug); else -1. */
static int take_stored(struct kinput *in, const char *name, const char *devnode)
{
	int fd = kfdstore_take(in->sink.fdstore, name);
	if (fd < 0)
		return -1;
	struct stat had, now;
	const char *why = NULL;
	if (fstat(fd, &had) < 0 || !S_ISCHR(had.st_mode))
		why = "not a character device";
	else if (stat(devnode, &now) < 0 || !S_ISCHR(now.st_mode) || now.st_rdev != had.st_rdev)
		why = "not the device now there";
	else if ((fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY)
		why = "not opened read-only";
	else if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		why = "cannot make it non-blocking";
	if (why) {
		kfdstore_refuse(in->sink.fdstore, name, fd, why);
		return -1;
	}
	return fd;
}

/* What waits in an adopted descriptor: the events of the restart.  Read
 * before libevdev looks at the device, because the kernel drops the
 * queued key and switch events of a reader that asks for the keys' or
 * switches' state (EVIOCGKEY, EVIOCGSW), and libevdev asks. */
struct pending {
	struct input_event ev[PENDING_MAX];
	size_t n;
};

static void read_pending(int fd, struct pending *p)
{
	p->n = 0;
	while (p->n < PENDING_MAX) {
		ssize_t r = read(fd, &p->ev[p->n], (PENDING_MAX - p->n) * sizeof(p->ev[0]));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		p->n += (size_t)r / sizeof(p->ev[0]);
	}
}

/* The events of the restart, in order, before anything else of dev. */
static void replay_pending(struct kinput_dev *dev, const struct pending *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct input_event *ie = &p->ev[i];
		if (ie->type == EV_SYN && ie->code == SYN_DROPPED)
			ksink_overrun(&dev->in->sink, KEVENT_SOURCE_INPUT);
		else if (ie->type == EV_KEY || ie->type == EV_SW)
			submit(dev, ie->type, ie->code, ie->value, false, event_ns(ie));
	}
}

/* Follows the device u if it is an event node that can send a reported
 * code; reports its switches' states (Initial: yes). */
static void consider(struct kinput *in, struct udev_device *u)
{
	const char *sysname = udev_device_get_sysname(u);
	const char *devnode = udev_device_get_devnode(u);
	const char *syspath = udev_device_get_syspath(u);
	if (!sysname || strncmp(sysname, "event", 5) != 0 || !devnode || !syspath ||
	    find(in, syspath))
		return;
	/* udevd's verdict when it has given one; else the capabilities' */
	if (udev_device_get_property_value(u, "ID_INPUT") && !prop_set(u, "ID_INPUT_KEY") &&
	    !prop_set(u, "ID_INPUT_SWITCH"))
		return;
	struct kinput_dev *dev = calloc(1, sizeof(*dev));
	if (!dev) {
		log_error("input: out of memory following %s", devnode);
		return;
	}
	dev->in = in;
	dev->syspath = strdup(syspath);
	dev->devnode = strdup(devnode);
	/* Read-only, and never grabbed (EVIOCGRAB): logind and the desktop
	 * still see every key. */
	char name[64];
	snprintf(name, sizeof(name), "input-%s", sysname);
	dev->fd = take_stored(in, name, devnode);
	bool adopted = dev->fd >= 0;
	if (!adopted)
		dev->fd = open(devnode, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int rc = !dev->syspath || !dev->devnode ? -ENOMEM : dev->fd < 0 ? -errno : 0;
	static struct pending pending; /* the loop's thread only */
	pending.n = 0;
	if (rc == 0 && adopted)
		read_pending(dev->fd, &pending);
	if (rc == 0)
		rc = libevdev_new_from_fd(dev->fd, &dev->evdev);
	if (rc < 0) {
		log_notice("input: cannot read %s: %s", devnode, strerror(-rc));
		dev_free(dev);
		return;
	}
	size_t n_switches;
	if (!reports_any(dev->evdev, &n_switches)) {
		log_debug("input: %s (%s) has none of the keys and switches reported: not read",
			  devnode, libevdev_get_name(dev->evdev));
		dev_free(dev);
		return;
	}
	rc = kloop_add_io(in->sink.loop, dev->fd, in->paused ? 0 : EPOLLIN, on_readable, dev,
			  &dev->io);
	if (rc < 0) {
		log_error("input: cannot watch %s: %s", devnode, strerror(-rc));
		dev_free(dev);
		return;
	}
	dev->next = in->devs;
	in->devs = dev;
	/* poll: a device unplugged meanwhile is dropped from the store */
	if (kfdstore_keep(in->sink.fdstore, name, dev->fd, true) < 0)
		log_warning("input: out of memory: %s is not kept across a restart", devnode);
	log_info("input: following %s (%s)%s", devnode, libevdev_get_name(dev->evdev),
		 adopted ? ", its descriptor of the last run taken back" : "");
	replay_pending(dev, &pending);
	uint64_t ns = now_realtime_ns();
	for (size_t i = 0; i < kinput_n_codes && n_switches; i++) {
		const struct kinput_code *c = &kinput_codes[i];
		if (c->type == EV_SW && libevdev_has_event_code(dev->evdev, EV_SW, c->code))
			submit(dev, EV_SW, c->code,
			       libevdev_get_event_value(dev->evdev, EV_SW, c->code), true, ns);
	}
}

static void on_uevent(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kinput *in = userdata;
	(void)io;
	(void)fd;
	(void)events;
	for (int i = 0; i < READS_PER_WAKEUP && !in->paused; i++) {
		/* libudev checks the sender: the kernel (port id 0) or udevd (root) */
		struct udev_device *u = udev_monitor_receive_device(in->mon);
		if (!u) {
			if (errno == ENOBUFS)
				ksink_overrun(&in->sink, KEVENT_SOURCE_INPUT);
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			continue;
		}
		const char *action = udev_device_get_action(u);
		const char *syspath = udev_device_get_syspath(u);
		struct kinput_dev *dev = syspath ? find(in, syspath) : NULL;
		if (action && strcmp(action, "add") == 0) {
			consider(in, u);
		} else if (action && strcmp(action, "remove") == 0 && dev) {
			log_info("input: %s (%s) removed: no longer followed", dev->devnode,
				 libevdev_get_name(dev->evdev));
			dev_drop(dev);
		}
		udev_device_unref(u);
	}
}

static void enumerate(struct kinput *in)
{
	struct udev_enumerate *e = udev_enumerate_new(in->udev);
	if (!e || udev_enumerate_add_match_subsystem(e, "input") < 0 ||
	    udev_enumerate_add_match_sysname(e, "event*") < 0 ||
	    udev_enumerate_scan_devices(e) < 0) {
		log_error("input: cannot enumerate the input devices");
		udev_enumerate_unref(e);
		return;
	}
	struct udev_list_entry *l;
	udev_list_entry_foreach(l, udev_enumerate_get_list_entry(e))
	{
		struct udev_device *u =
			udev_device_new_from_syspath(in->udev, udev_list_entry_get_name(l));
		if (u)
			consider(in, u);
		udev_device_unref(u);
	}
	udev_enumerate_unref(e);
}

static void input_pause(struct ksource *s, bool pause)
{
	struct kinput *in = of(s);
	in->paused = pause;
	if (in->mon_io)
		kio_set_events(in->mon_io, pause ? 0 : EPOLLIN);
	for (struct kinput_dev *d = in->devs; d; d = d->next)
		kio_set_events(d->io, pause ? 0 : EPOLLIN);
}

static void input_stop(struct ksource *s)
{
	struct kinput *in = of(s);
	kio_free(in->mon_io);
	in->mon_io = NULL;
	while (in->devs)
		dev_drop(in->devs);
}

static void input_free(struct ksource *s)
{
	struct kinput *in = of(s);
	input_stop(s);
	udev_monitor_unref(in->mon);
	udev_unref(in->udev);
	free(in);
}

/* "2 devices: Power Button (event0), Lid Switch (event1)" */
static void input_describe(struct ksource *s, struct strbuf *out)
{
	struct kinput *in = container_of(s, struct kinput, src);
	size_t n = 0;
	for (const struct kinput_dev *d = in->devs; d; d = d->next)
		n++;
	if (!n) {
		strbuf_puts(out, "no device with power keys or switches yet");
		return;
	}
	strbuf_printf(out, "%zu device%s:", n, n == 1 ? "" : "s");
	size_t i = 0;
	for (const struct kinput_dev *d = in->devs; d && i < 4; d = d->next, i++) {
		const char *name = d->evdev ? libevdev_get_name(d->evdev) : NULL;
		const char *node = strrchr(d->devnode, '/');
		strbuf_puts(out, i ? ", " : " ");
		strbuf_put_escaped(out, name ? name : "?");
		strbuf_printf(out, " (%s)", node ? node + 1 : d->devnode);
	}
	if (n > i)
		strbuf_puts(out, ", ...");
}

int ksource_input_new(const struct ksink *sink, enum kudev_monitor mode, struct ksource **out)
{
	struct kinput *in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->sink = *sink;
	in->src = (struct ksource){.name = "input",
				   .kind = KEVENT_SOURCE_INPUT,
				   .pause = input_pause,
				   .stop = input_stop,
				   .describe = input_describe,
				   .free = input_free};
	if (mode == KUDEV_AUTO)
		mode = access("/run/udev/control", F_OK) == 0 ? KUDEV_UDEV : KUDEV_KERNEL;
	in->from_kernel = mode == KUDEV_KERNEL;
	in->udev = udev_new();
	/* The monitor first, so that no device added during the enumeration
	 * is missed (one seen twice is followed once). */
	if (in->udev)
		in->mon = udev_monitor_new_from_netlink(in->udev,
							in->from_kernel ? "kernel" : "udev");
	int rc = !in->mon ? (errno ? -errno : -ENOMEM)
			  : udev_monitor_filter_add_match_subsystem_devtype(in->mon, "input", NULL);
	if (rc == 0)
		rc = udev_monitor_enable_receiving(in->mon);
	if (rc == 0)
		rc = kloop_add_io(sink->loop, udev_monitor_get_fd(in->mon), EPOLLIN, on_uevent, in,
				  &in->mon_io);
	if (rc < 0) {
		input_free(&in->src);
		return rc;
	}
	enumerate(in);
	size_t n = 0;
	for (struct kinput_dev *d = in->devs; d; d = d->next)
		n++;
	log_info("input: %zu device(s) followed; devices come and go with uevents from %s", n,
		 in->from_kernel ? "the kernel" : "udevd");
	*out = &in->src;
	return 0;
}

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_input_new(a->sink, a->udev_monitor, out);
}

const struct ksource_type ksource_type_input = {
	.kind = KEVENT_SOURCE_INPUT,
	.make = make,
	.reports_at_start = ksource_reports_always,
};

// SPDX-License-Identifier: GPL-2.0-or-later
/* An sd-bus connection in keventd's loop (busloop.h). */
#include "busloop.h"

#if KEVENT_DBUS
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>

struct kbusloop {
	struct kloop *loop;
	sd_bus *bus;
	struct kio *io;
	struct ktimer *timer;
	kbusloop_lost_fn lost;
	void *userdata;
	bool dispatching; /* in sd_bus_process(), which must not be called again */
};

static void on_timer(struct ktimer *t, void *userdata)
{
	struct kbusloop *bl = userdata;
	(void)t;
	bl->timer = NULL; /* freed by the loop once it fired */
	kbusloop_process(bl);
}

static void on_io(struct kio *io, int fd, uint32_t events, void *userdata)
{
	(void)io;
	(void)fd;
	(void)events;
	kbusloop_process(userdata);
}

int kbusloop_new(struct kloop *loop, sd_bus *bus, kbusloop_lost_fn lost, void *userdata,
		 struct kbusloop **out)
{
	struct kbusloop *bl = calloc(1, sizeof(*bl));
	if (!bl)
		return -ENOMEM;
	*bl = (struct kbusloop){.loop = loop, .bus = bus, .lost = lost, .userdata = userdata};
	int r = kloop_add_io(loop, sd_bus_get_fd(bus), EPOLLIN | EPOLLOUT, on_io, bl, &bl->io);
	if (r < 0) {
		free(bl);
		return r;
	}
	*out = bl;
	return 0;
}

void kbusloop_process(struct kbusloop *bl)
{
	if (!bl || bl->dispatching)
		return;
	int r;
	bl->dispatching = true;
	while ((r = sd_bus_process(bl->bus, NULL)) > 0)
		;
	bl->dispatching = false;
	int ev = r < 0 ? r : sd_bus_get_events(bl->bus);
	if (ev < 0) {
		bl->lost(bl->userdata, ev); /* may free bl */
		return;
	}
	kio_set_events(bl->io, (ev & POLLIN ? EPOLLIN : 0) | (ev & POLLOUT ? EPOLLOUT : 0));
	uint64_t usec = UINT64_MAX;
	ktimer_cancel(bl->timer);
	bl->timer = NULL;
	if (sd_bus_get_timeout(bl->bus, &usec) >= 0 && usec != UINT64_MAX)
		(void)kloop_add_timer(bl->loop, usec * 1000, on_timer, bl, &bl->timer);
}

void kbusloop_free(struct kbusloop *bl)
{
	if (!bl)
		return;
	kio_free(bl->io);
	ktimer_cancel(bl->timer);
	free(bl);
}
#endif

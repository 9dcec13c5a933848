/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An sd-bus connection in keventd's loop: its descriptor watched for what
 * it waits for (sd_bus_get_events()), its next timeout as a timer, and
 * everything dispatched and written without blocking.  The one glue of
 * every sd-bus user (the D-Bus forwarder, transient runs).  Built when
 * KEVENT_DBUS (sd-bus) is on.
 */
#ifndef KEVENT_BUSLOOP_H
#define KEVENT_BUSLOOP_H

#include "config.h"

#if KEVENT_DBUS
#include <systemd/sd-bus.h>

#include "loop.h"

struct kbusloop;

/* lost(userdata, r): the connection failed (r, a negative errno) while
 * it was processed; the owner closes it, and may free bl from there. */
typedef void (*kbusloop_lost_fn)(void *userdata, int r);

/* Watches bus (borrowed: the owner closes it after kbusloop_free()) in
 * loop, and processes it once.  0, or -errno. */
int kbusloop_new(struct kloop *loop, sd_bus *bus, kbusloop_lost_fn lost, void *userdata,
		 struct kbusloop **out);
/* Dispatches what came in and writes what is queued, then watches what
 * the connection waits for next: after queueing a call, so that it goes.
 * Called from inside a dispatch (a callback of the bus), it does nothing:
 * the dispatch under way writes what was queued. */
void kbusloop_process(struct kbusloop *bl);
/* NULL is fine. */
void kbusloop_free(struct kbusloop *bl);
#endif

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The D-Bus forwarder: each event as the signal org.kernel.Event.Event
 * (type s, object s, signal s, payload s, seqnum t) on the system bus, from
 * an object path derived from the event's object, sent by the owner of the
 * well-known name org.kernel.Event1, which the bus policy lets only root
 * own, so that a listener can tell keventd's signals from anyone else's.
 * See docs/org.kernel.Event.xml.  Built when KEVENT_DBUS (sd-bus) is on.
 */
#ifndef KEVENT_DBUS_H
#define KEVENT_DBUS_H

#include <stdbool.h>

#include "event.h"
#include "loop.h"
#include "util.h"

#define KDBUS_NAME	"org.kernel.Event1" /* keventd's well-known name */
#define KDBUS_INTERFACE "org.kernel.Event"
#define KDBUS_MEMBER	"Event"

struct kdbus;

/* Whether this build has the forwarder. */
bool kdbus_available(void);
/* Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS when set), asks for
 * KDBUS_NAME (without waiting: a name taken or refused is logged, signals
 * are sent all the same, and a name queued for is taken when its owner
 * lets go) and watches the connection in loop.  A bus that is not there
 * yet, or goes away, is tried again after 1 s, doubling up to 30 s; the
 * signals meanwhile are dropped and counted in the log line that says it
 * is back.  0, or a negative errno (-ENOMEM; -EOPNOTSUPP without D-Bus
 * support). */
int kdbus_new(struct kloop *loop, struct kdbus **out);
/* Queues ev's signal; never blocks.  Losses are counted and logged. */
void kdbus_emit(struct kdbus *b, const struct kevent *ev);
/* Flushes what is queued (bounded) and disconnects.  NULL is fine. */
void kdbus_free(struct kdbus *b);

/*
 * The object path of an event's object: each '/'-separated element with
 * every byte outside [A-Za-z0-9] as "_" and two lowercase hex digits (so
 * "_" itself is "_5f") and an empty element as "_"; "/" stays "/".
 * "/org/kernel/block/sda-1" gives "/org/kernel/block/sda_2d1".
 */
void kdbus_object_path(const char *object, struct strbuf *out);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: the kernel events layer, in-kernel API.
 *
 * Kernel code reports an event with send_kevent() (process context, may
 * sleep) or send_kevent_atomic() (any context, including hard interrupts).
 * The event is multicast over Generic Netlink to the group of its type;
 * see include/uapi/linux/kevent.h and Documentation in send_kevent(9).
 */
#ifndef _LINUX_KEVENT_H
#define _LINUX_KEVENT_H

#include <linux/compiler.h>
#include <uapi/linux/kevent.h>

#if IS_ENABLED(CONFIG_KEVENT)

/**
 * send_kevent - send a kernel event to user space
 * @type: the event type, one of enum kevent_type
 * @object: where the event comes from, e.g. "/org/kernel/block/sda"
 * @signal: what happened, e.g. "add"; [A-Za-z0-9_.:-], 1 to 64 bytes
 * @fmt: printf-style format of the payload, or NULL for an empty payload
 *
 * Numbers the event, keeps it in the ring of recent events (module
 * parameter ring_kb) whether or not anyone listens, and multicasts it to
 * the group of @type, or queues it behind the events that wait for the
 * worker of send_kevent_atomic(), to keep their order.
 *
 * May sleep.
 *
 * Return: 0 on success and when no one listens, -EINVAL for
 * bad arguments, -ENOMEM when memory runs out.  Before the family is
 * registered (kevent built in, called from an earlier initcall) and after
 * it is unregistered, sends nothing and returns 0.
 */
__printf(4, 5)
int send_kevent(enum kevent_type type, const char *object,
		const char *signal, const char *fmt, ...);

/**
 * send_kevent_atomic - send a kernel event from atomic context
 * @type: the event type, one of enum kevent_type
 * @object: where the event comes from
 * @signal: what happened
 * @fmt: printf-style format of the payload, or NULL for an empty payload
 *
 * Like send_kevent(), but never sleeps: the event's record is allocated
 * with GFP_ATOMIC.  It never multicasts either: it numbers the event,
 * keeps it in the ring and queues it for a worker that multicasts the
 * queued events in sequence order from process context.  May be called
 * with spinlocks held, with interrupts disabled and from hard or soft
 * interrupt context (not from NMI context).
 *
 * Return: 0 on success and when no one listens, -EINVAL for bad
 * arguments, -ENOMEM when memory runs out.
 */
__printf(4, 5)
int send_kevent_atomic(enum kevent_type type, const char *object,
		       const char *signal, const char *fmt, ...);

#else /* !CONFIG_KEVENT */

static inline __printf(4, 5)
int send_kevent(enum kevent_type type, const char *object,
		const char *signal, const char *fmt, ...)
{
	return 0;
}

static inline __printf(4, 5)
int send_kevent_atomic(enum kevent_type type, const char *object,
		       const char *signal, const char *fmt, ...)
{
	return 0;
}

#endif /* CONFIG_KEVENT */

#endif /* _LINUX_KEVENT_H */

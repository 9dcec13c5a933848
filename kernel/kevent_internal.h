/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: definitions shared by the parts of the module.
 */
#ifndef _KEVENT_INTERNAL_H
#define _KEVENT_INTERNAL_H

#include <linux/kevent.h>
#include <linux/types.h>

/* Counters, as shown by /sys/kernel/debug/kevent/stats. */
struct kevent_counters {
	u64 sent;		/* multicast to at least one listener */
	u64 no_listener;	/* dropped: no one listens to the group */
	u64 overrun;		/* dropped: every listener's buffer was full */
	u64 errors;		/* -EINVAL or -ENOMEM returned */
	u64 atomic_in_irq;	/* send_kevent_atomic() calls in hard irq */
	u64 deferred;		/* left to the worker to multicast */
	u64 evicted;		/* pushed out of the ring by newer events */
	u64 pending_full;	/* not multicast: the worker's queue was full */
	u64 seqnum;		/* last sequence number given */
	u64 instance;		/* this load's KEVENT_A_INSTANCE */
	u64 ring_events;	/* events in the ring */
	u64 ring_bytes;		/* bytes they take */
	u64 ring_limit;		/* ring_kb, in bytes */
};

const char *kevent_type_name(unsigned int type);
const char *kevent_check_args(unsigned int type, const char *object,
			      const char *signal);
void kevent_read_counters(struct kevent_counters *c);

/* The notifier-chain bridges of kevent_bridges.c (module parameter bridges=). */
int kevent_bridges_start(void);
void kevent_bridges_stop(void);

#if IS_ENABLED(CONFIG_DEBUG_FS)
void kevent_debugfs_init(void);
void kevent_debugfs_exit(void);
#else
static inline void kevent_debugfs_init(void) { }
static inline void kevent_debugfs_exit(void) { }
#endif

#endif /* _KEVENT_INTERNAL_H */

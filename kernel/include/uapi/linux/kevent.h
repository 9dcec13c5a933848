/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kevent: the kernel events layer, user-space API.
 *
 * Events are multicast over the Generic Netlink family KEVENT_GENL_NAME,
 * one multicast group per event type.  This header is the only one that
 * the kernel module and user-space listeners share.
 *
 * The module keeps the most recent events in a ring.  KEVENT_CMD_GET
 * with KEVENT_A_SEQNUM = after (root only) is answered with a dump: the
 * events in the ring numbered after "after", in order, each a
 * KEVENT_CMD_EVENT message, then one KEVENT_CMD_GET message carrying
 * KEVENT_A_SEQNUM (the last number the dump covers: the current one) and
 * KEVENT_A_LOST (how many numbers after "after" are no longer in the
 * ring).  Every message carries KEVENT_A_INSTANCE.
 */
#ifndef _UAPI_LINUX_KEVENT_H
#define _UAPI_LINUX_KEVENT_H

#define KEVENT_GENL_NAME	"kevent"
#define KEVENT_GENL_VERSION	1

/* Multicast group names, one per enum kevent_type, in that order. */
#define KEVENT_MCGRP_GENERAL	"general"
#define KEVENT_MCGRP_STORAGE	"storage"
#define KEVENT_MCGRP_POWER	"power"
#define KEVENT_MCGRP_FS		"fs"
#define KEVENT_MCGRP_HOTPLUG	"hotplug"

/* Limits of an event, in bytes, not counting the terminating NUL. */
#define KEVENT_OBJECT_MAX	1024
#define KEVENT_SIGNAL_MAX	64
#define KEVENT_PAYLOAD_MAX	4000

enum kevent_type {
	KEVENT_GENERAL,
	KEVENT_STORAGE,
	KEVENT_POWER,
	KEVENT_FS,
	KEVENT_HOTPLUG,
	__KEVENT_TYPE_MAX,
};

#define KEVENT_TYPE_MAX (__KEVENT_TYPE_MAX - 1)

enum kevent_cmd {
	KEVENT_CMD_UNSPEC,
	KEVENT_CMD_EVENT,	/* kernel -> user: one event */
	KEVENT_CMD_GET,		/* user -> kernel: the events after a number */
	__KEVENT_CMD_MAX,
};

#define KEVENT_CMD_MAX (__KEVENT_CMD_MAX - 1)

enum kevent_attr {
	KEVENT_A_UNSPEC,
	KEVENT_A_TYPE,		/* u32: enum kevent_type */
	KEVENT_A_OBJECT,	/* NUL-terminated string */
	KEVENT_A_SIGNAL,	/* NUL-terminated string */
	KEVENT_A_PAYLOAD,	/* NUL-terminated string, may be empty */
	KEVENT_A_SEQNUM,	/* u64: sequence number, from 1 per load */
	KEVENT_A_TIMESTAMP,	/* u64: nanoseconds since the epoch */
	KEVENT_A_PAD,
	KEVENT_A_INSTANCE,	/* u64: random, fixed for one module load */
	KEVENT_A_LOST,		/* u64: events no longer in the ring */
	__KEVENT_A_MAX,
};

#define KEVENT_A_MAX (__KEVENT_A_MAX - 1)

#endif /* _UAPI_LINUX_KEVENT_H */

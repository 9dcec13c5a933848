/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decoding one message of the kevent Generic Netlink family into an
 * event.  Pure: no socket, so a fuzzer and unit tests can drive it.
 */
#ifndef KEVENT_KERNEL_MSG_H
#define KEVENT_KERNEL_MSG_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/*
 * Decodes the netlink message at buf (len bytes available, which may hold
 * more than this message).  family_id is the kevent family's current id.
 * Returns 0 with *out, or -EINVAL / -EBADMSG with *why.  Rejects: a
 * truncated header, the wrong family or command, missing, duplicated,
 * oversize or unterminated attributes, and events outside the limits of keventd(8).
 */
int kkernel_decode(const void *buf, size_t len, int family_id, struct kevent **out,
		   const char **why);

/* What else a message of the family says, besides an event. */
struct kkernel_meta {
	uint64_t instance; /* KEVENT_A_INSTANCE; 0 from a module without one */
	/* the final message of a KEVENT_CMD_GET dump (then no event): */
	bool end;
	uint64_t current; /* the current sequence number */
	uint64_t gone;	  /* numbers after the one asked for, no longer in the ring */
};

/* kkernel_decode(), and the instance (also in the event's instance); a
 * dump's final message is taken too (0, *out NULL, meta->end). */
int kkernel_decode_meta(const void *buf, size_t len, int family_id, struct kevent **out,
			struct kkernel_meta *meta, const char **why);

#endif

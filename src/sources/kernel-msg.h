/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decoding one message of the kevent Generic Netlink family into an
 * event.  Pure: no socket, so a fuzzer and unit tests can drive it.
 */
#ifndef KEVENT_KERNEL_MSG_H
#define KEVENT_KERNEL_MSG_H

#include <linux/netlink.h>
#include <stddef.h>

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

#endif

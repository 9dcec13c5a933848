/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Generic Netlink plumbing for the Generic Netlink sources (source-genl.h):
 * subscribing to a family's multicast groups, following the controller's
 * notifications of families coming and going, and receiving datagrams with
 * the sender checked from the socket address.
 */
#ifndef KEVENT_GENL_H
#define KEVENT_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nl_sock;

/* A non-blocking socket subscribed to the named groups of family, with a
 * large receive buffer: adopt, a Generic Netlink socket kept across a
 * restart (taken in every case: on failure it is closed), or a new one
 * (adopt -1).  Returns 0 and *family_id, -ENOENT when the family (or a
 * group) is not registered, or another -errno. */
int kgenl_subscribe(const char *family, const char *const *groups, size_t n_groups, int adopt,
		    struct nl_sock **out, int *family_id);

/* A non-blocking socket of its own on which a dump request of family
 * (command cmd, one u64 attribute attr = value) was sent; the answer is
 * read from it with kgenl_recv().  0 and *family_id, -ENOENT when the
 * family is not registered, or another -errno. */
int kgenl_dump_open(const char *family, uint8_t cmd, uint16_t attr, uint64_t value,
		    struct nl_sock **out, int *family_id);

/* A non-blocking socket on the controller's "notify" group. */
int kgenl_ctrl_open(struct nl_sock **out);

/* Reads pending controller notifications from fd; calls fn for each family
 * registered (appeared) or unregistered, with its id (-1 if the message has
 * none).  Returns -ENOBUFS if notifications were lost (the caller should
 * then look afresh), else 0. */
int kgenl_ctrl_read(int fd, void (*fn)(const char *family, int id, bool appeared, void *ud),
		    void *ud);

/* What one receive saw. */
enum kgenl_recv {
	KGENL_DATAGRAM, /* a datagram from the kernel, *len bytes */
	KGENL_AGAIN,	/* nothing more to read */
	KGENL_OVERRUN,	/* ENOBUFS: the receive buffer overflowed, messages were lost */
	KGENL_FORGED,	/* not from the kernel (sender port id != 0): dropped */
	KGENL_TRUNC,	/* larger than the buffer: dropped */
	KGENL_ERROR,	/* any other failure: *err is the negative errno */
};

/* Receives one datagram from fd into buf, the sender read from the socket
 * address (port id 0 is the kernel), never from the message. */
enum kgenl_recv kgenl_recv(int fd, void *buf, size_t size, size_t *len, int *err);

#endif

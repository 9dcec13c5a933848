/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading one generic netlink message with every length checked here:
 * the headers, then the top-level attributes.  Pure (no socket, no libnl),
 * shared by the kevent, ACPI, thermal and quota decoders and their fuzzers.
 */
#ifndef KEVENT_GENL_MSG_H
#define KEVENT_GENL_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An attribute's payload, pointing into the message. */
struct kgenl_attr {
	const char *data;
	size_t len;
	bool seen;
};

/* Checks the message at buf (len bytes available, which may hold more than
 * this message) is a whole generic netlink message of family_id; gives its
 * command and attribute area.  0, or -EBADMSG / -EINVAL with *why. */
int kgenl_header(const void *buf, size_t len, int family_id, uint8_t *cmd, const char **attrs,
		 size_t *attrs_len, const char **why);

/* Collects the attributes of types 1..max into at[0..max], refusing
 * out-of-bounds lengths and a type given twice (but pad, when not 0, may
 * repeat).  Types above max are skipped.  0, or -EBADMSG / -EINVAL. */
int kgenl_attrs(const char *attrs, size_t len, struct kgenl_attr *at, unsigned max, unsigned pad,
		const char **why);

/* What a decoder reads of its family: the commands it decodes, its
 * attribute table's top type and pad type, and what another command is:
 * refused with -EINVAL and why other, or (other NULL) left unread. */
struct kgenl_shape {
	uint8_t cmds[4];
	size_t ncmds;
	unsigned max, pad;
	const char *other;
};

/* kgenl_header, then, when the command is one of shape's, kgenl_attrs into
 * at[0..shape->max].  1: a command of shape's, *cmd and at[] set; 0: another
 * command, shape->other NULL (*cmd set, at[] unread); -EBADMSG / -EINVAL
 * with *why. */
int kgenl_decode(const void *buf, size_t len, int family_id, const struct kgenl_shape *shape,
		 uint8_t *cmd, struct kgenl_attr *at, const char **why);

#endif

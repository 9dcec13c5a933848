/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "kmsg" source: the kernel's log records from /dev/kmsg, those of
 * keventd.yaml's priority or more urgent and the records keventd knows
 * (kmsg.h), numbered by the kernel and resumed after kmsg.pos in the
 * state directory (keventd(8)).
 */
#ifndef KEVENT_SOURCE_KMSG_H
#define KEVENT_SOURCE_KMSG_H

#include "kmsg.h"
#include "source.h"

#define KKMSG_DEVICE "/dev/kmsg"
#define KKMSG_SYSFS  "/sys"

/* cfg: keventd.yaml's "kmsg:" (copied); NULL: the defaults. */
int ksource_kmsg_new(const struct ksink *sink, const struct kkmsg_config *cfg,
		     struct ksource **out);
/* The same on fd, an open KKMSG_DEVICE (or what a test puts in its
 * place), taken. */
int ksource_kmsg_open(const struct ksink *sink, const struct kkmsg_config *cfg, int fd,
		      struct ksource **out);

/* The priority of s, a kmsg source: records at it or more urgent become
 * events; and a new one, from a reload (0..7), for the records read from
 * now on. */
unsigned ksource_kmsg_priority(const struct ksource *s);
void ksource_kmsg_set_priority(struct ksource *s, unsigned level);

#endif

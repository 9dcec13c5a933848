/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `keventctl monitor` prints of an event: one line of text or one
 * JSON object, with the names of the rules it matched, short enough to go
 * out as one control message (docs/control-protocol.md).  Pure.
 */
#ifndef KEVENT_MONITOR_H
#define KEVENT_MONITOR_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"
#include "proto.h"
#include "rules.h"
#include "util.h"

/* A monitor line goes out as one "data\0LINE\0" message. */
#define KMONITOR_LINE_MAX      (KCTL_MSG_MAX - sizeof("data") - 1)
#define KMONITOR_BRIEF_PAYLOAD 512

/* Appends ev's line to sb: at most KMONITOR_LINE_MAX bytes (a longer
 * payload is cut to its start, and said to be), sb->oom on no memory. */
void kmonitor_line(struct strbuf *sb, const struct kevent *ev, const struct krule *const *rules,
		   size_t n, bool json);

/* What a `keventctl record` client is sent of ev, every field whole as one
 * message: SOURCE, SEQNUM, TIMESTAMP, TYPE, OBJECT, SIGNAL and PAYLOAD
 * separated by 0x1f (the payload last: it may hold one), at most
 * KEVENT_OBJECT_MAX + KEVENT_SIGNAL_MAX + KEVENT_PAYLOAD_MAX + 64 bytes. */
void kmonitor_record(struct strbuf *sb, const struct kevent *ev);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spool of the MQTT publisher: QoS 1 messages the broker has not yet
 * acknowledged, on disk under spool.dir (keventd.yaml(5)), so that neither
 * a broker outage nor a restart of keventd loses them.
 *
 * Messages are numbered from 1 and appended, without an fsync each, to
 * segment files "seg-<first number, 16 hex digits>" of at most a few MiB;
 * a record is a header (magic, lengths, checksum, number), the topic and
 * the message.  "acked" holds the number below which the broker has
 * acknowledged everything, rewritten in place; a segment all below it is
 * deleted.  A read cursor gives the next message not yet sent, in order.
 * Past max_bytes, the oldest segment goes: its messages not yet sent are
 * counted as dropped, those sent and unacknowledged are left to
 * libmosquitto.  At open, a torn record at the end (a crash mid-write) is
 * cut off.  Never logs: the caller does.
 */
#ifndef KEVENT_MQTT_SPOOL_H
#define KEVENT_MQTT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct kmqtt_spool;

/*
 * Opens (and makes, mode 0700) the spool in dir, locked against another
 * keventd (-EBUSY), and loads what it holds.  *cut says how many bytes of
 * torn records were cut off.  0 or -errno.
 */
int kmqtt_spool_open(const char *dir, uint64_t max_bytes, struct kmqtt_spool **out, uint64_t *cut);
void kmqtt_spool_free(struct kmqtt_spool *s);

/* Appends a message; *dropped is the number of messages not yet sent that
 * had to go to make room (0 usually; a message larger than the whole
 * spool is itself dropped: 1).  0 or -errno (the message is then lost). */
int kmqtt_spool_append(struct kmqtt_spool *s, const char *topic, const char *msg, size_t len,
		       uint64_t *dropped);
/* The next message not yet sent: 0 with its topic, message and number,
 * and the cursor moved past it; -ENOENT when all were sent; -errno. */
int kmqtt_spool_next(struct kmqtt_spool *s, struct strbuf *topic, struct strbuf *msg,
		     uint64_t *seq);
/* The number of the next message kmqtt_spool_next() would give. */
uint64_t kmqtt_spool_cursor(const struct kmqtt_spool *s);
/* Everything numbered below seq is acknowledged: forgets it. */
void kmqtt_spool_ack_below(struct kmqtt_spool *s, uint64_t seq);
/* Messages held and not acknowledged, sent or not. */
uint64_t kmqtt_spool_pending(const struct kmqtt_spool *s);
/* Bytes of the segment files. */
uint64_t kmqtt_spool_bytes(const struct kmqtt_spool *s);

#endif

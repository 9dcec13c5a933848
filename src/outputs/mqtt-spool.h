/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spool of the MQTT publisher: QoS 1 messages the broker has not yet
 * acknowledged, on disk under spool.dir (keventd.yaml(5)), so that neither
 * a broker outage nor a restart of keventd loses them.
 *
 * Messages are numbered from 1 and appended, without an fsync each, to
 * segment files "seg-<first number, 16 hex digits>" of at most a few MiB
 * (the records of mqtt-spool-rec.h).  "acked" holds the number below which
 * the broker has acknowledged everything, rewritten in place; a segment
 * all below it is deleted.  A read cursor gives the next message not yet
 * sent, in order.  Past max_bytes, the oldest segment goes: its messages
 * not yet sent are counted as dropped, those sent and unacknowledged are
 * left to libmosquitto.
 *
 * At open, a torn record at the end of a segment (a crash mid-write) is
 * cut off.  Damaged bytes anywhere else cost the records they held, no
 * more: the reader takes up again at the next valid record, later records
 * and segments are kept, the messages lost are counted by their numbers,
 * the damaged bytes are kept aside in "<segment>@<offset>.corrupt" files
 * (at most KMQTT_SPOOL_ASIDE_FILES of KMQTT_SPOOL_ASIDE_MAX bytes each) and
 * the segment is rewritten without them.  The directory must be its
 * owner's alone: root's or keventd's user's, not writable by group or
 * others.  Never logs: the caller does.
 */
#ifndef KEVENT_MQTT_SPOOL_H
#define KEVENT_MQTT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define KMQTT_SPOOL_ASIDE_FILES 16
#define KMQTT_SPOOL_ASIDE_MAX	(64 * 1024)

struct kmqtt_spool;

/* What the spool found wrong, since it was last asked. */
struct kmqtt_spool_damage {
	uint64_t cut;	   /* bytes of torn records cut off the end of a segment */
	uint64_t damaged;  /* bytes of damaged records skipped */
	uint64_t regions;  /* stretches of damaged bytes */
	uint64_t corrupt;  /* messages lost with them, by their numbers (a stretch at
			    * the very end, with no number after it: counted 1) */
	uint64_t aside;	   /* of the damaged bytes, those kept in *.corrupt files */
	uint64_t not_kept; /* stretches not kept aside: the files' bound was reached */
};

/*
 * Opens (and makes, mode 0700) the spool in dir, locked against another
 * keventd (-EBUSY), and loads what it holds; *damage says what was wrong
 * with it.  0, or -errno with *why saying what failed: -EACCES for a
 * directory that is not its owner's alone, -EBUSY, -EISDIR for an entry
 * named like a segment that is not a regular file, -EIO and the like.
 */
int kmqtt_spool_open(const char *dir, uint64_t max_bytes, struct kmqtt_spool **out,
		     struct kmqtt_spool_damage *damage, const char **why);
void kmqtt_spool_free(struct kmqtt_spool *s);

/* Appends a message; *dropped is the number of messages not yet sent that
 * had to go to make room (0 usually; a message larger than the whole
 * spool is itself dropped: 1).  0 or -errno (the message is then lost). */
int kmqtt_spool_append(struct kmqtt_spool *s, const char *topic, const char *msg, size_t len,
		       uint64_t *dropped);
/* The next message not yet sent: 0 with its topic, message and number,
 * and the cursor moved past it; -ENOENT when all were sent; -errno (the
 * spool cannot be read).  Damage found on the way is skipped, as at open,
 * and said by kmqtt_spool_damage(). */
int kmqtt_spool_next(struct kmqtt_spool *s, struct strbuf *topic, struct strbuf *msg,
		     uint64_t *seq);
/* Adds what was found damaged since the last call to *out (at open: what
 * kmqtt_spool_open() did not already say), and forgets it. */
void kmqtt_spool_damage(struct kmqtt_spool *s, struct kmqtt_spool_damage *out);
/* The number of the next message kmqtt_spool_next() would give. */
uint64_t kmqtt_spool_cursor(const struct kmqtt_spool *s);
/* Everything numbered below seq is acknowledged: forgets it. */
void kmqtt_spool_ack_below(struct kmqtt_spool *s, uint64_t seq);
/* Messages held and not acknowledged, sent or not. */
uint64_t kmqtt_spool_pending(const struct kmqtt_spool *s);
/* Bytes of the segment files. */
uint64_t kmqtt_spool_bytes(const struct kmqtt_spool *s);

#endif

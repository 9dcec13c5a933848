/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The records of the MQTT spool's segment files (mqtt-spool.h), and their
 * reader: a pure function over a segment's bytes, which a fuzzer drives.
 *
 * A record is a header (magic, the topic's and the message's lengths, a
 * checksum of number, topic and message, the number), the topic and the
 * message, in host byte order, one after another.  The reader splits a
 * segment into pieces: whole valid records, a torn record at the end (what
 * a write cut short leaves), and damaged bytes between them.  After
 * damage it resynchronises at the next valid record: a header whose
 * magic, lengths and number fit and whose checksum holds.  What keventd
 * writes into a record cannot pass for another one: a topic and a JSON
 * message never hold a NUL byte, and a header's lengths do (a topic's
 * length is below 65536).
 */
#ifndef KEVENT_MQTT_SPOOL_REC_H
#define KEVENT_MQTT_SPOOL_REC_H

#include <stddef.h>
#include <stdint.h>

#define KMQTT_REC_MAGIC	    0x6b6d7131u /* "kmq1" */
#define KMQTT_REC_TOPIC_MAX 65535u
#define KMQTT_REC_MSG_MAX   (16u * 1024 * 1024)

struct kmqtt_rec_hdr {
	uint32_t magic;
	uint32_t topic_len;
	uint32_t msg_len;
	uint32_t sum; /* FNV-1a of seq, topic and message */
	uint64_t seq;
};

/* The header of record seq with topic and msg. */
void kmqtt_rec_header(struct kmqtt_rec_hdr *h, uint64_t seq, const char *topic, size_t topic_len,
		      const char *msg, size_t msg_len);

enum kmqtt_rec_kind {
	KMQTT_REC_END,	   /* no bytes left */
	KMQTT_REC_RECORD,  /* a whole valid record */
	KMQTT_REC_TORN,	   /* the start of a record, cut off by the end of the bytes */
	KMQTT_REC_DAMAGED, /* bytes that are neither, up to the next record or the end */
};

/* A piece of a segment. */
struct kmqtt_rec {
	enum kmqtt_rec_kind kind;
	size_t off, len; /* where its bytes are */
	/* a record's number, topic and message (pointers into the bytes) */
	uint64_t seq;
	const char *topic, *msg;
	size_t topic_len, msg_len;
};

/*
 * The piece of buf[0, len) that starts at off.  A record counts only if
 * its number is min_seq or more (numbers grow through a segment).  Pieces
 * follow each other without a gap: the next starts at out->off + out->len.
 * Pure: no allocation, no I/O.
 */
void kmqtt_rec_next(const void *buf, size_t len, size_t off, uint64_t min_seq,
		    struct kmqtt_rec *out);

/* The length of a valid record's header says, when buf[0, len) starts with
 * one numbered min_seq or more: its whole size; else 0. */
size_t kmqtt_rec_valid(const void *buf, size_t len, uint64_t min_seq);

#endif

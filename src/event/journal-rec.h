/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The records of keventd's journal of accepted events (keventd(8), THE
 * JOURNAL): a header and the event's fields, written one record per
 * write().  The header's state byte is the only byte ever written again
 * (live or copied, then done), so the checksum leaves it out.  Pure: a record is
 * made into a buffer and read from one, so a reader of damaged bytes can
 * be driven by a fuzzer.
 *
 *   magic   u32   KJREC_MAGIC (KJREC_MAGIC_V1: a record of an older
 *                 keventd, read as well)
 *   len     u32   the body's bytes
 *   sum     u32   of len and the body: FNV-1a over 8-byte words (the
 *                 last bytes one at a time), folded to 32 bits; FNV-1a
 *                 over bytes under KJREC_MAGIC_V1
 *   state   u8    KJREC_LIVE, KJREC_COPY (live: a copy that the journal's
 *                 compaction made of a live record, which a kill may
 *                 have left beside its original) or KJREC_DONE
 *   done    3 bytes: bit i (of 24, the first byte's lowest first) says the
 *           rule of the body's i-th rule identity has had its run (or, a
 *           debounced rule, its wait ended in a later journaled event's);
 *           in a body of version 1, which names no rules, that the i-th
 *           rule of the event's run list (the matched rules that run
 *           something, debounced ones left out, in order) has had its run;
 *           written again in place, outside the checksum, as the state
 *           byte is
 *   body    len bytes: version u8 (2; 1 from an older keventd), type u8,
 *           source u8, flags u8, seqnum u64, timestamp u64, instance u64,
 *           n_env u32, then u32-length-prefixed strings: object, signal,
 *           payload, host (when flags say so), the uevent variables; then,
 *           version 2 only, n_ids u8 (at most 24) and n_ids u32: the
 *           identities (kjrec_rule_id()) of the matched rules that run
 *           something, debounced ones included, in order, the first 24
 *
 * Numbers are in the machine's order: a journal lives on its /run.
 */
#ifndef KEVENT_JOURNAL_REC_H
#define KEVENT_JOURNAL_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "util.h"

#define KJREC_MAGIC    0x4b56454bu /* "KEVK" */
#define KJREC_MAGIC_V1 0x4a56454bu /* "KEVJ": a byte-wise checksum */
#define KJREC_LIVE     'L'
#define KJREC_DONE     'D'
#define KJREC_COPY     'C'
/* A body longer than this is damage: an event is well under it. */
#define KJREC_BODY_MAX (256 * 1024)

struct kjrec_hdr {
	uint32_t magic;
	uint32_t len;
	uint32_t sum;
	uint8_t state;
	uint8_t done[3];
};

/* Where the state byte is, from the record's start. */
#define KJREC_STATE_OFF offsetof(struct kjrec_hdr, state)
/* Where the done bits are, and how many there are. */
#define KJREC_DONE_OFF	offsetof(struct kjrec_hdr, done)
#define KJREC_DONE_BITS 24

/* Appends ev's whole record, live, to sb (sb->oom on no memory): of
 * version 2, naming ev->journal_ids, when ev has them, else of version 1. */
void kjrec_encode(struct strbuf *sb, const struct kevent *ev);

/* A rule's identity in a record: a 32-bit hash of its file's name and its
 * own, which a reload that moves the rule keeps. */
uint32_t kjrec_rule_id(const char *file, const char *name);

enum kjrec_kind {
	KJREC_END,    /* nothing left */
	KJREC_RECORD, /* a whole record, its checksum right */
	/* bytes that hold no record (a damaged header or body), up to the next
	 * whole record, the torn one at the end, or the end */
	KJREC_DAMAGED,
	/* the start of a record that runs past the end, with no whole record
	 * after it: a write cut off */
	KJREC_TORN,
};

struct kjrec {
	enum kjrec_kind kind;
	size_t off, len; /* the piece's bytes in the buffer */
	bool live;	 /* a record: its state is live (anything but done) */
	bool copy;	 /* a record: a compaction's copy (KJREC_COPY) */
	uint32_t sum;	 /* a record: its checksum */
	uint32_t done;	 /* a record: its done bits */
	const uint8_t *body;
	size_t body_len;
};

/* The piece of buf[0, len) that starts at off.  Pieces cover the buffer
 * one after another: the next starts at out->off + out->len. */
void kjrec_next(const void *buf, size_t len, size_t off, struct kjrec *out);

/* The event of a record's body (kevent_free()), with its rules'
 * identities in journal_ids for a body of version 2.  0, -EINVAL with *why
 * (a static text) for a body that is not an event, or -ENOMEM. */
int kjrec_decode(const void *body, size_t len, struct kevent **out, const char **why);

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader of the MQTT spool's segments: kmqtt_rec_next() over the bytes
 * of a segment, as keventd reads one at start-up (and as the cursor reads
 * the rest of one that it finds damaged).  Its pieces must cover the bytes
 * exactly, one after another; each record must be valid and numbered above
 * the one before; damaged bytes must hold no valid record and be followed
 * by a record or the end; a torn record only at the end.  The records
 * written again, one after another, must read back the same, with nothing
 * damaged.
 */
#include <string.h>

#include "fuzz.h"
#include "mqtt-spool-rec.h"

#define MAX_INPUT (64 * 1024 + 16)
#define HDR	  sizeof(struct kmqtt_rec_hdr)

struct seen {
	uint64_t seq;
	size_t off, len;
};

/* Walks buf; the records into recs (at most max), their count. */
static size_t walk(const uint8_t *buf, size_t len, struct seen *recs, size_t max, int *damaged)
{
	uint64_t min = 1;
	size_t n = 0, off = 0;
	enum kmqtt_rec_kind prev = KMQTT_REC_END;
	*damaged = 0;
	for (;;) {
		struct kmqtt_rec r;
		kmqtt_rec_next(buf, len, off, min, &r);
		FUZZ_CHECK(r.off == off);
		if (r.kind == KMQTT_REC_END) {
			FUZZ_CHECK(off == len);
			FUZZ_CHECK(r.len == 0);
			break;
		}
		FUZZ_CHECK(r.len > 0 && r.len <= len - off);
		FUZZ_CHECK(prev != KMQTT_REC_TORN); /* only at the end */
		FUZZ_CHECK(prev != KMQTT_REC_DAMAGED || r.kind == KMQTT_REC_RECORD);
		if (r.kind == KMQTT_REC_RECORD) {
			FUZZ_CHECK(r.seq >= min);
			FUZZ_CHECK(kmqtt_rec_valid(buf + off, len - off, min) == r.len);
			FUZZ_CHECK(r.len == HDR + r.topic_len + r.msg_len);
			FUZZ_CHECK(r.topic == (const char *)buf + off + HDR);
			FUZZ_CHECK(r.msg == r.topic + r.topic_len);
			FUZZ_CHECK(n < max);
			recs[n++] = (struct seen){r.seq, off, r.len};
			min = r.seq + 1;
		} else {
			*damaged = 1;
			/* no valid record starts inside it */
			for (size_t p = off + 1; p < off + r.len; p++)
				FUZZ_CHECK(!kmqtt_rec_valid(buf + p, len - p, min));
			if (r.kind == KMQTT_REC_TORN)
				FUZZ_CHECK(off + r.len == len);
		}
		prev = r.kind;
		off += r.len;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	size_t max = size / HDR + 1;
	struct seen *recs = malloc(max * sizeof(*recs));
	if (!recs)
		return 0;
	int damaged = 0;
	size_t n = walk(data, size, recs, max, &damaged);

	/* the records alone, written again, read back the same */
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += recs[i].len;
	uint8_t *again = malloc(total ? total : 1);
	struct seen *back = malloc(max * sizeof(*back));
	if (again && back) {
		size_t off = 0;
		for (size_t i = 0; i < n; i++) {
			struct kmqtt_rec_hdr h, fresh;
			memcpy(&h, data + recs[i].off, HDR);
			const char *t = (const char *)data + recs[i].off + HDR;
			kmqtt_rec_header(&fresh, h.seq, t, h.topic_len, t + h.topic_len, h.msg_len);
			FUZZ_CHECK(memcmp(&fresh, &h, HDR) == 0);
			memcpy(again + off, data + recs[i].off, recs[i].len);
			off += recs[i].len;
		}
		int damaged_again = 0;
		size_t m = walk(again, total, back, max, &damaged_again);
		FUZZ_CHECK(!damaged_again);
		FUZZ_CHECK(m == n);
		for (size_t i = 0; i < n; i++) {
			FUZZ_CHECK(back[i].seq == recs[i].seq && back[i].len == recs[i].len);
			FUZZ_CHECK(memcmp(again + back[i].off, data + recs[i].off, recs[i].len) ==
				   0);
		}
	}
	free(again);
	free(back);
	free(recs);
	return 0;
}

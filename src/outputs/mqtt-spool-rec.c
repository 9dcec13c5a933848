// SPDX-License-Identifier: GPL-2.0-or-later
#include "mqtt-spool-rec.h"

#include <string.h>

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static uint32_t checksum(uint64_t seq, const char *topic, size_t tlen, const char *msg, size_t mlen)
{
	uint32_t h = fnv(2166136261u, &seq, sizeof(seq));
	h = fnv(h, topic, tlen);
	return fnv(h, msg, mlen);
}

void kmqtt_rec_header(struct kmqtt_rec_hdr *h, uint64_t seq, const char *topic, size_t topic_len,
		      const char *msg, size_t msg_len)
{
	*h = (struct kmqtt_rec_hdr){KMQTT_REC_MAGIC, (uint32_t)topic_len, (uint32_t)msg_len,
				    checksum(seq, topic, topic_len, msg, msg_len), seq};
}

/* Whether a whole header h may start a record numbered min_seq or more. */
static int plausible(const struct kmqtt_rec_hdr *h, uint64_t min_seq)
{
	return h->magic == KMQTT_REC_MAGIC && h->topic_len <= KMQTT_REC_TOPIC_MAX &&
	       h->msg_len <= KMQTT_REC_MSG_MAX && h->seq >= min_seq;
}

size_t kmqtt_rec_valid(const void *buf, size_t len, uint64_t min_seq)
{
	struct kmqtt_rec_hdr h;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h)); /* buf need not be aligned */
	if (!plausible(&h, min_seq))
		return 0;
	size_t size = sizeof(h) + (size_t)h.topic_len + h.msg_len;
	if (size > len)
		return 0;
	const char *p = (const char *)buf + sizeof(h);
	if (checksum(h.seq, p, h.topic_len, p + h.topic_len, h.msg_len) != h.sum)
		return 0;
	return size;
}

/* Whether buf[0, len), all that is left, is the start of a record a write
 * stopped in: the part of a plausible header there is, or a plausible
 * header whose record runs past the end. */
static int torn(const unsigned char *buf, size_t len, uint64_t min_seq)
{
	struct kmqtt_rec_hdr h;
	if (len >= sizeof(h)) {
		memcpy(&h, buf, sizeof(h));
		return plausible(&h, min_seq) && sizeof(h) + (size_t)h.topic_len + h.msg_len > len;
	}
	/* the fields that are there whole, and the magic's first bytes */
	memset(&h, 0, sizeof(h));
	memcpy(&h, buf, len);
	uint32_t magic = KMQTT_REC_MAGIC;
	if (memcmp(buf, &magic, len < 4 ? len : 4) != 0)
		return 0;
	if (len >= 8 && h.topic_len > KMQTT_REC_TOPIC_MAX)
		return 0;
	if (len >= 12 && h.msg_len > KMQTT_REC_MSG_MAX)
		return 0;
	return 1;
}

void kmqtt_rec_next(const void *buf, size_t len, size_t off, uint64_t min_seq,
		    struct kmqtt_rec *out)
{
	const unsigned char *b = buf;
	*out = (struct kmqtt_rec){.kind = KMQTT_REC_END, .off = off};
	if (off >= len) {
		out->off = len;
		return;
	}
	size_t size = kmqtt_rec_valid(b + off, len - off, min_seq);
	if (size) {
		struct kmqtt_rec_hdr h;
		memcpy(&h, b + off, sizeof(h));
		out->kind = KMQTT_REC_RECORD;
		out->len = size;
		out->seq = h.seq;
		out->topic = (const char *)b + off + sizeof(h);
		out->topic_len = h.topic_len;
		out->msg = out->topic + h.topic_len;
		out->msg_len = h.msg_len;
		return;
	}
	/* damaged: up to the next valid record, found by its magic and
	 * then checked whole */
	const size_t hdr = sizeof(struct kmqtt_rec_hdr);
	uint32_t magic = KMQTT_REC_MAGIC;
	size_t q = off + 1, end = len;
	while (q + hdr <= len) {
		const unsigned char *m =
			memchr(b + q, ((const unsigned char *)&magic)[0], len - hdr - q + 1);
		if (!m)
			break;
		q = (size_t)(m - b);
		if (memcmp(m, &magic, sizeof(magic)) == 0 && kmqtt_rec_valid(m, len - q, min_seq)) {
			end = q;
			break;
		}
		q++;
	}
	/* nothing valid after it, and the start of a record: a write cut short */
	if (end == len && torn(b + off, len - off, min_seq))
		out->kind = KMQTT_REC_TORN;
	else
		out->kind = KMQTT_REC_DAMAGED;
	out->len = end - off;
}

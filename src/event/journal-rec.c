// SPDX-License-Identifier: GPL-2.0-or-later
#include "journal-rec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BODY_V1		 1 /* names no rules */
#define BODY_VERSION	 2
#define FLAG_RECOVERED	 1u
#define FLAG_SYNTHETIC	 2u
#define FLAG_HOST	 4u
#define FLAG_REDELIVERED 8u
#define FLAG_INJECTED	 16u
#define FLAG_TEST	 32u
#define BODY_FIXED	 (4 + 8 + 8 + 8 + 4)

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* The same over 8-byte words: one multiplication for eight bytes, which
 * a byte at a time made the largest part of an append's cost. */
static uint32_t fnv64(uint32_t len, const void *p)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ull ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, sizeof(w));
		h = (h ^ w) * 1099511628211ull;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

static uint32_t checksum(uint32_t magic, uint32_t len, const void *body)
{
	if (magic == KJREC_MAGIC_V1)
		return fnv(fnv(2166136261u, &len, sizeof(len)), body, len);
	return fnv64(len, body);
}

static void put_str(struct strbuf *sb, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);
	strbuf_add(sb, (const char *)&n, sizeof(n));
	strbuf_add(sb, s, n);
}

void kjrec_encode(struct strbuf *sb, const struct kevent *ev)
{
	size_t start = sb->len;
	struct kjrec_hdr h = {.magic = KJREC_MAGIC, .state = KJREC_LIVE};
	strbuf_add(sb, (const char *)&h, sizeof(h));
	uint8_t head[4] = {
		ev->journal_ids ? BODY_VERSION : BODY_V1, (uint8_t)ev->type, (uint8_t)ev->source,
		(uint8_t)((ev->recovered ? FLAG_RECOVERED : 0) |
			  (ev->synthetic ? FLAG_SYNTHETIC : 0) | (ev->host ? FLAG_HOST : 0) |
			  (ev->redelivered ? FLAG_REDELIVERED : 0) |
			  (ev->injected ? FLAG_INJECTED : 0) | (ev->test ? FLAG_TEST : 0))};
	uint32_t n_env = (uint32_t)ev->n_uevent_env;
	strbuf_add(sb, (const char *)head, sizeof(head));
	strbuf_add(sb, (const char *)&ev->seqnum, 8);
	strbuf_add(sb, (const char *)&ev->timestamp, 8);
	strbuf_add(sb, (const char *)&ev->instance, 8);
	strbuf_add(sb, (const char *)&n_env, 4);
	put_str(sb, ev->object);
	put_str(sb, ev->signal);
	put_str(sb, ev->payload);
	if (ev->host)
		put_str(sb, ev->host);
	for (size_t i = 0; i < ev->n_uevent_env; i++)
		put_str(sb, ev->uevent_env[i]);
	if (ev->journal_ids) {
		uint8_t n =
			ev->n_journal_ids < KJREC_DONE_BITS ? ev->n_journal_ids : KJREC_DONE_BITS;
		strbuf_add(sb, (const char *)&n, 1);
		strbuf_add(sb, (const char *)ev->journal_ids, n * sizeof(uint32_t));
	}
	if (sb->oom)
		return;
	h.len = (uint32_t)(sb->len - start - sizeof(h));
	h.sum = checksum(h.magic, h.len, sb->buf + start + sizeof(h));
	memcpy(sb->buf + start, &h, sizeof(h));
}

uint32_t kjrec_rule_id(const char *file, const char *name)
{
	uint32_t h = fnv(2166136261u, file, strlen(file) + 1); /* its NUL parts them */
	return fnv(h, name, strlen(name));
}

/* Whether a whole record starts at buf[off], and its size. */
static size_t valid_at(const uint8_t *buf, size_t len, size_t off)
{
	struct kjrec_hdr h;
	if (len - off < sizeof(h))
		return 0;
	memcpy(&h, buf + off, sizeof(h)); /* buf need not be aligned */
	if ((h.magic != KJREC_MAGIC && h.magic != KJREC_MAGIC_V1) || h.len > KJREC_BODY_MAX ||
	    h.len > len - off - sizeof(h))
		return 0;
	if (checksum(h.magic, h.len, buf + off + sizeof(h)) != h.sum)
		return 0;
	return sizeof(h) + h.len;
}

/* Whether buf[off, len), all that is left, is the start of a record that
 * a write stopped in: a plausible header, or the part of one there is. */
static bool torn_at(const uint8_t *buf, size_t len, size_t off)
{
	size_t left = len - off;
	uint32_t magic = KJREC_MAGIC, v1 = KJREC_MAGIC_V1;
	if (memcmp(buf + off, &magic, left < 4 ? left : 4) != 0 &&
	    memcmp(buf + off, &v1, left < 4 ? left : 4) != 0)
		return false;
	if (left < 8)
		return true;
	uint32_t n;
	memcpy(&n, buf + off + 4, sizeof(n));
	return n <= KJREC_BODY_MAX &&
	       (left < sizeof(struct kjrec_hdr) || sizeof(struct kjrec_hdr) + (size_t)n > left);
}

void kjrec_next(const void *buf_, size_t len, size_t off, struct kjrec *out)
{
	const uint8_t *buf = buf_;
	*out = (struct kjrec){.kind = KJREC_END, .off = off};
	if (off >= len)
		return;
	size_t size = valid_at(buf, len, off);
	if (size) {
		out->kind = KJREC_RECORD;
		out->len = size;
		out->live = buf[off + KJREC_STATE_OFF] != KJREC_DONE;
		out->copy = buf[off + KJREC_STATE_OFF] == KJREC_COPY;
		memcpy(&out->sum, buf + off + offsetof(struct kjrec_hdr, sum), sizeof(out->sum));
		const uint8_t *d = (const uint8_t *)buf + off + KJREC_DONE_OFF;
		out->done = d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16;
		out->body = buf + off + sizeof(struct kjrec_hdr);
		out->body_len = size - sizeof(struct kjrec_hdr);
		return;
	}
	/*
	 * Not a record: its header (a magic, a length) or its body is damaged,
	 * or a write stopped in it.  What follows is read from the next whole
	 * record: damage costs the damaged record alone.  A record cannot hide
	 * in another's strings, to be found so: a header's length is under
	 * KJREC_BODY_MAX, so has a zero byte, and no string holds a NUL.
	 */
	size_t next = off + 1;
	while (next < len && !valid_at(buf, len, next))
		next++;
	if (next == len && torn_at(buf, len, off)) {
		/* nothing whole after it: the write that was cut off, the last */
		out->kind = KJREC_TORN;
		out->len = len - off;
		return;
	}
	if (next == len) {
		/* up to the torn record at the end, if there is one */
		next = off + 1;
		while (next < len && !torn_at(buf, len, next))
			next++;
	}
	out->kind = KJREC_DAMAGED;
	out->len = next - off;
}

struct reader {
	const uint8_t *p;
	size_t left;
};

static bool take(struct reader *r, void *out, size_t n)
{
	if (r->left < n)
		return false;
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

/* A string of the body, copied with its NUL; NULL at the end of the
 * body, on a NUL inside it, or without memory (*oom). */
static char *take_str(struct reader *r, bool *oom)
{
	uint32_t n;
	if (!take(r, &n, sizeof(n)) || r->left < n || memchr(r->p, '\0', n))
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (!s) {
		*oom = true;
		return NULL;
	}
	memcpy(s, r->p, n);
	s[n] = '\0';
	r->p += n;
	r->left -= n;
	return s;
}

int kjrec_decode(const void *body, size_t len, struct kevent **out, const char **why)
{
	struct reader r = {body, len};
	uint8_t head[4];
	uint64_t seqnum, timestamp, instance;
	uint32_t n_env;
	bool oom = false;
	if (!take(&r, head, 4) || !take(&r, &seqnum, 8) || !take(&r, &timestamp, 8) ||
	    !take(&r, &instance, 8) || !take(&r, &n_env, 4)) {
		*why = "record too short";
		return -EINVAL;
	}
	if (head[0] != BODY_VERSION && head[0] != BODY_V1) {
		*why = "unknown record version";
		return -EINVAL;
	}
	if (head[2] >= KEVENT_SOURCE_MAX) {
		*why = "unknown source";
		return -EINVAL;
	}
	/* each variable takes 4 bytes at least */
	if (n_env > r.left / 4) {
		*why = "record too short";
		return -EINVAL;
	}
	_cleanup_free_ char *object = take_str(&r, &oom);
	_cleanup_free_ char *signal = object ? take_str(&r, &oom) : NULL;
	_cleanup_free_ char *payload = signal ? take_str(&r, &oom) : NULL;
	_cleanup_free_ char *host = payload && (head[3] & FLAG_HOST) ? take_str(&r, &oom) : NULL;
	_cleanup_strv_ char **env = calloc((size_t)n_env + 1, sizeof(*env));
	bool ok = payload && (host || !(head[3] & FLAG_HOST)) && env;
	for (uint32_t i = 0; ok && i < n_env; i++)
		ok = (env[i] = take_str(&r, &oom)) != NULL;
	uint8_t n_ids = 0;
	_cleanup_free_ uint32_t *ids = NULL;
	if (ok && head[0] == BODY_VERSION) {
		ok = take(&r, &n_ids, 1) && n_ids <= KJREC_DONE_BITS &&
		     r.left >= n_ids * sizeof(uint32_t);
		/* one more than asked: never a malloc(0) */
		if (ok && !(ids = malloc((n_ids + 1u) * sizeof(*ids))))
			oom = true;
		else if (ok)
			ok = take(&r, ids, n_ids * sizeof(*ids));
	}
	if (oom || !env)
		return -ENOMEM;
	if (!ok || r.left) {
		*why = r.left && ok ? "bytes after the record's fields"
				    : "a field is cut or holds a NUL";
		return -EINVAL;
	}
	struct kevent *ev = NULL;
	int rc = kevent_new(head[1], object, signal, payload, (enum kevent_source)head[2], seqnum,
			    timestamp, env, n_env, &ev, why);
	if (rc < 0)
		return rc;
	ev->recovered = head[3] & FLAG_RECOVERED;
	ev->synthetic = head[3] & FLAG_SYNTHETIC;
	ev->redelivered = head[3] & FLAG_REDELIVERED;
	ev->injected = head[3] & FLAG_INJECTED;
	ev->test = head[3] & FLAG_TEST;
	ev->instance = instance;
	ev->journal_ids = TAKE_PTR(ids);
	ev->n_journal_ids = n_ids;
	if (host && (rc = kevent_set_host(ev, host, why)) < 0) {
		kevent_free(ev);
		return rc;
	}
	*out = ev;
	return 0;
}

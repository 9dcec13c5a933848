// SPDX-License-Identifier: GPL-2.0-or-later
/* The table of mqtt-dedupe.h across a restart (mqtt-dedupe-file.h). */
#include "mqtt-dedupe-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "statedir.h"

/*
 * The file: a header, then each stream as its source (1 byte), the length
 * of its host name (1 byte), the name, its instance, its top and its
 * window (8 bytes each), in the machine's byte order (the file never
 * leaves it).  The header's sum is FNV-1a of everything after it.
 *
 * Version 2 has the bytes of version 1; its hosts are those of the topics
 * (mqtt-msg.h, kmqtt_topic_host()).  Version 1's were the messages' own
 * word, so that a host could have filled another's streams with numbers
 * that host had not sent yet: such a file is not read.
 */
#define FILE_MAGIC	0x44514d4bu /* "KMQD" */
#define FILE_VERSION	2u
#define FILE_VERSION_V1 1u

struct file_hdr {
	uint32_t magic, version, count, sum;
};

static uint32_t fnv(const void *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *c = p; n--; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

struct encoding {
	struct strbuf *out;
	uint32_t count;
};

static void put_stream(const struct kmqtt_key *k, const struct kmqtt_window *w, void *ud)
{
	struct encoding *e = ud;
	uint8_t head[2] = {(uint8_t)k->source, (uint8_t)strlen(k->host)};
	strbuf_add(e->out, (const char *)head, sizeof(head));
	strbuf_add(e->out, k->host, head[1]);
	strbuf_add(e->out, (const char *)&k->instance, 8);
	strbuf_add(e->out, (const char *)&w->top, 8);
	strbuf_add(e->out, (const char *)w->seen, sizeof(w->seen));
	e->count++;
}

void kmqtt_dedupe_encode(const struct kmqtt_dedupe *d, struct strbuf *out)
{
	size_t start = out->len;
	struct file_hdr h = {.magic = FILE_MAGIC, .version = FILE_VERSION};
	strbuf_add(out, (const char *)&h, sizeof(h));
	struct encoding e = {.out = out};
	kmqtt_dedupe_each(d, put_stream, &e);
	if (out->oom)
		return;
	h.count = e.count;
	h.sum = fnv(out->buf + start + sizeof(h), out->len - start - sizeof(h));
	memcpy(out->buf + start, &h, sizeof(h));
}

int kmqtt_dedupe_decode(struct kmqtt_dedupe *d, const void *buf, size_t len, const char **why)
{
	const unsigned char *p = buf;
	struct file_hdr h;
	*why = NULL;
	if (len < sizeof(h)) {
		*why = "shorter than its header";
		return -EINVAL;
	}
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	len -= sizeof(h);
	if (h.magic == FILE_MAGIC && h.version == FILE_VERSION_V1) {
		*why = "written by an older keventd, which took a message's host on its word: "
		       "not read";
		return -EINVAL;
	}
	if (h.magic != FILE_MAGIC || h.version != FILE_VERSION) {
		*why = "not a table of messages taken, or of another version";
		return -EINVAL;
	}
	if (h.count > KMQTT_DEDUPE_STREAMS || fnv(p, len) != h.sum) {
		*why = "damaged";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < h.count; i++) {
		char host[KEVENT_HOST_MAX + 1];
		struct kmqtt_key k = {.host = host};
		struct kmqtt_window w;
		if (len < 2 || len - 2 < (size_t)p[1] + 16 + sizeof(w.seen)) {
			*why = "cut short";
			return -EINVAL;
		}
		k.source = (enum kevent_source)p[0];
		memcpy(host, p + 2, p[1]);
		host[p[1]] = '\0';
		size_t n = 2 + (size_t)p[1];
		memcpy(&k.instance, p + n, 8);
		memcpy(&w.top, p + n + 8, 8);
		memcpy(w.seen, p + n + 16, sizeof(w.seen));
		n += 16 + sizeof(w.seen);
		if (p[0] >= KEVENT_SOURCE_MAX || !kevent_host_valid(host) || !k.instance) {
			*why = "a stream that cannot be";
			return -EINVAL;
		}
		int rc = kmqtt_dedupe_restore(d, &k, &w);
		if (rc < 0)
			return rc;
		p += n;
		len -= n;
	}
	if (len) {
		*why = "bytes after the last stream";
		return -EINVAL;
	}
	kmqtt_dedupe_clean(d);
	return (int)h.count;
}

int kmqtt_dedupe_load(struct kmqtt_dedupe *d, int dirfd, const char **why)
{
	*why = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc = kstatedir_read(dirfd, KMQTT_DEDUPE_FILE,
				4096 + (size_t)KMQTT_DEDUPE_STREAMS * (2 + KEVENT_HOST_MAX + 48),
				&buf, &len);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	return kmqtt_dedupe_decode(d, buf, len, why);
}

int kmqtt_dedupe_save(struct kmqtt_dedupe *d, int dirfd)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	kmqtt_dedupe_encode(d, &sb);
	if (sb.oom)
		return -ENOMEM;
	int rc = kstatedir_replace(dirfd, KMQTT_DEDUPE_FILE, sb.buf, sb.len, 0600);
	if (rc == 0)
		kmqtt_dedupe_clean(d);
	return rc;
}

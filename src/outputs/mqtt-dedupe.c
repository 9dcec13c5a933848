// SPDX-License-Identifier: GPL-2.0-or-later
/* The messages of the source mqtt already taken (mqtt-dedupe.h). */
#include "mqtt-dedupe.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct stream {
	struct stream *newer, *older; /* the order of use */
	char *host;
	enum kevent_source source;
	uint64_t instance;
	struct kmqtt_window w;
};

struct kmqtt_dedupe {
	struct hashmap *map; /* of stream_name() */
	struct stream *newest, *oldest;
	bool dirty;
};

/* The map's key of a stream: a host name holds no tab. */
static void stream_name(const struct kmqtt_key *k, char *buf, size_t size)
{
	snprintf(buf, size, "%s\t%d\t%016" PRIx64, k->host, (int)k->source, k->instance);
}

#define NAME_MAX_LEN (KEVENT_HOST_MAX + 32)

int kmqtt_dedupe_new(struct kmqtt_dedupe **out)
{
	struct kmqtt_dedupe *d = calloc(1, sizeof(*d));
	if (!d || hashmap_new(&d->map) < 0) {
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void kmqtt_dedupe_free(struct kmqtt_dedupe *d)
{
	if (!d)
		return;
	for (struct stream *s = d->newest, *next; s; s = next) {
		next = s->older;
		free(s->host);
		free(s);
	}
	hashmap_free(d->map, NULL);
	free(d);
}

static void unlink_stream(struct kmqtt_dedupe *d, struct stream *s)
{
	if (s->newer)
		s->newer->older = s->older;
	else
		d->newest = s->older;
	if (s->older)
		s->older->newer = s->newer;
	else
		d->oldest = s->newer;
	s->newer = s->older = NULL;
}

static void push_newest(struct kmqtt_dedupe *d, struct stream *s)
{
	s->older = d->newest;
	s->newer = NULL;
	if (d->newest)
		d->newest->newer = s;
	d->newest = s;
	if (!d->oldest)
		d->oldest = s;
}

static void forget_oldest(struct kmqtt_dedupe *d)
{
	struct stream *s = d->oldest;
	char name[NAME_MAX_LEN];
	stream_name(
		&(struct kmqtt_key){.host = s->host, .source = s->source, .instance = s->instance},
		name, sizeof(name));
	unlink_stream(d, s);
	(void)hashmap_remove(d->map, name);
	free(s->host);
	free(s);
}

/* k's stream, the most recently used now; made (empty) if new.  *made
 * says so.  NULL: no memory. */
static struct stream *stream_of(struct kmqtt_dedupe *d, const struct kmqtt_key *k, bool *made)
{
	char name[NAME_MAX_LEN];
	stream_name(k, name, sizeof(name));
	struct stream *s = hashmap_get(d->map, name);
	*made = !s;
	if (s) {
		unlink_stream(d, s);
		push_newest(d, s);
		return s;
	}
	if (hashmap_size(d->map) >= KMQTT_DEDUPE_STREAMS)
		forget_oldest(d);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->host = strdup(k->host)) || hashmap_put(d->map, name, s, NULL) < 0) {
		if (s)
			free(s->host);
		free(s);
		return NULL;
	}
	s->source = k->source;
	s->instance = k->instance;
	push_newest(d, s);
	return s;
}

/* Moves the window up by n numbers. */
static void shift_up(struct kmqtt_window *w, uint64_t n)
{
	const size_t words = KMQTT_DEDUPE_SPAN / 64;
	if (n >= KMQTT_DEDUPE_SPAN) {
		memset(w->seen, 0, sizeof(w->seen));
		return;
	}
	size_t whole = (size_t)(n / 64);
	unsigned bits = (unsigned)(n % 64);
	for (size_t i = words; i-- > 0;) {
		uint64_t v = i >= whole ? w->seen[i - whole] << bits : 0;
		if (bits && i > whole)
			v |= w->seen[i - whole - 1] >> (64 - bits);
		w->seen[i] = v;
	}
}

int kmqtt_dedupe_seen(struct kmqtt_dedupe *d, const struct kmqtt_key *k)
{
	if (!k->instance)
		return 0;
	bool made;
	struct stream *s = stream_of(d, k, &made);
	if (!s)
		return -ENOMEM;
	struct kmqtt_window *w = &s->w;
	if (made || k->seqnum > w->top) {
		shift_up(w, made ? KMQTT_DEDUPE_SPAN : k->seqnum - w->top);
		w->top = k->seqnum;
		w->seen[0] |= 1;
		d->dirty = true;
		return 0;
	}
	uint64_t below = w->top - k->seqnum;
	if (below >= KMQTT_DEDUPE_SPAN)
		return 0; /* out of the window: run again rather than never */
	uint64_t bit = 1ull << (below % 64);
	if (w->seen[below / 64] & bit)
		return 1;
	w->seen[below / 64] |= bit;
	d->dirty = true;
	return 0;
}

int kmqtt_dedupe_restore(struct kmqtt_dedupe *d, const struct kmqtt_key *k,
			 const struct kmqtt_window *w)
{
	bool made;
	struct stream *s = stream_of(d, k, &made);
	if (!s)
		return -ENOMEM;
	s->w = *w;
	return 0;
}

void kmqtt_dedupe_each(const struct kmqtt_dedupe *d,
		       void (*fn)(const struct kmqtt_key *k, const struct kmqtt_window *w,
				  void *ud),
		       void *ud)
{
	for (const struct stream *s = d->oldest; s; s = s->newer)
		fn(&(struct kmqtt_key){.host = s->host,
				       .source = s->source,
				       .instance = s->instance},
		   &s->w, ud);
}

size_t kmqtt_dedupe_streams(const struct kmqtt_dedupe *d)
{
	return hashmap_size(d->map);
}

bool kmqtt_dedupe_dirty(const struct kmqtt_dedupe *d)
{
	return d->dirty;
}

void kmqtt_dedupe_clean(struct kmqtt_dedupe *d)
{
	d->dirty = false;
}

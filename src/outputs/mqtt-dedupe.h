/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The messages of the source mqtt already taken, so that one delivered
 * again runs once: a broker sends a QoS 1 message again when it missed
 * keventd's acknowledgement (a reconnect, a restart), and a publishing
 * keventd sends an event again when its journal hands it again after a
 * crash.  An event is named by (host, source, instance, seqnum) of its
 * message (docs/fleet.md): the keventd or the kernel module that numbered
 * it, and its number there.  Each (host, source, instance), a stream,
 * keeps the highest number taken and which of the KMQTT_DEDUPE_SPAN
 * numbers below it were taken too; a number further below is taken as
 * new (run twice rather than never).  At most KMQTT_DEDUPE_STREAMS
 * streams are kept, the least recently used forgotten first.  Pure: no
 * I/O (mqtt-dedupe-file.h saves and loads it).
 */
#ifndef KEVENT_MQTT_DEDUPE_H
#define KEVENT_MQTT_DEDUPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KMQTT_DEDUPE_SPAN    256  /* numbers top - 255 .. top are told apart */
#define KMQTT_DEDUPE_STREAMS 1024 /* (host, source, instance) kept, at most */

/* An event as its message names it. */
struct kmqtt_key {
	const char *host;
	enum kevent_source source; /* the source on the host it came from */
	uint64_t instance;	   /* 0: not given; such a message is never a duplicate */
	uint64_t seqnum;
};

/* What a stream knows: the highest number taken and bit i of seen[i / 64]
 * set when top - i was taken too (bit 0: top itself). */
struct kmqtt_window {
	uint64_t top;
	uint64_t seen[KMQTT_DEDUPE_SPAN / 64];
};

struct kmqtt_dedupe;

int kmqtt_dedupe_new(struct kmqtt_dedupe **out);
void kmqtt_dedupe_free(struct kmqtt_dedupe *d);
/* Whether k was taken before (true: a duplicate); if not, it is taken
 * now.  -ENOMEM (nothing is kept: the message counts as new). */
int kmqtt_dedupe_seen(struct kmqtt_dedupe *d, const struct kmqtt_key *k);
/* Sets the window of a stream (k's seqnum unused), as the file had it;
 * it becomes the most recently used.  0 or -ENOMEM. */
int kmqtt_dedupe_restore(struct kmqtt_dedupe *d, const struct kmqtt_key *k,
			 const struct kmqtt_window *w);
/* Calls fn for each stream, least recently used first (so that restoring
 * them in that order keeps the order). */
void kmqtt_dedupe_each(const struct kmqtt_dedupe *d,
		       void (*fn)(const struct kmqtt_key *k, const struct kmqtt_window *w,
				  void *ud),
		       void *ud);
size_t kmqtt_dedupe_streams(const struct kmqtt_dedupe *d);
/* Whether a stream changed since the last kmqtt_dedupe_clean(). */
bool kmqtt_dedupe_dirty(const struct kmqtt_dedupe *d);
void kmqtt_dedupe_clean(struct kmqtt_dedupe *d);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MQTT publisher: an observer of the events keventd handles, each
 * published as the JSON object of `keventctl record` plus "host" to
 * <topic_prefix>/<type>/<signal><object> on the broker of the section
 * mqtt of keventd.yaml(5).  libmosquitto is driven from keventd's own
 * loop: a non-blocking connect, its socket in epoll, mosquitto_loop_read()
 * and _write() when it is ready, a timer for mosquitto_loop_misc() and
 * for reconnecting with a backoff.  QoS 1 messages go to the spool
 * (mqtt-spool.h) first, and from it to libmosquitto as its window has
 * room: at most KMQTT_WINDOW sent and not yet acknowledged, since its own
 * queue has no bound.
 */
#ifndef KEVENT_MQTT_H
#define KEVENT_MQTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "loop.h"
#include "mqtt-config.h"
#include "mqtt-msg.h"
#include "source.h"
#include "util.h"

#define KMQTT_WINDOW		 64    /* QoS 1 messages sent and not yet acknowledged */
#define KMQTT_QUEUE_MAX		 65536 /* messages waiting, at most */
#define KMQTT_KEEPALIVE_S	 30
#define KMQTT_BACKOFF_MIN_MS	 500
#define KMQTT_BACKOFF_MAX_MS	 30000
#define KMQTT_CONNECT_TIMEOUT_MS 10000
/* how long the broker keeps a subscribed keventd's session while it is away */
#define KMQTT_SESSION_EXPIRY_S (7u * 24 * 3600)
/* The largest packet keventd asks the broker to send it (MQTT 5's
 * MAXIMUM_PACKET_SIZE): a message of KMQTT_MSG_MAX bytes on the longest
 * topic, and room for the header and its properties.  A broker that keeps
 * to MQTT 5 drops a larger one for keventd rather than send it. */
#define KMQTT_PACKET_MAX (KMQTT_MSG_MAX + KMQTT_TOPIC_MAX + 4096)

struct kmqtt;

struct kmqtt_counters {
	bool connected;
	uint64_t published;  /* messages handed to the broker (QoS 1: once each) */
	uint64_t acked;	     /* QoS 1 messages the broker acknowledged (PUBACK) */
	uint64_t dropped;    /* messages never sent: the spool was full, or QoS 0 offline */
	uint64_t received;   /* messages taken from the broker */
	uint64_t duplicates; /* of them, dropped: delivered again (mqtt-dedupe.h) */
	uint64_t attempts;   /* connection attempts */
	uint64_t corrupt;    /* spooled messages lost with damaged records of the spool */
	size_t spooled;	     /* messages in the spool, sent or not, not yet acknowledged */
	const char *off;     /* why publishing is off (valid until the next call); NULL: on */
};

/*
 * Sets up the client of cfg (which must outlive it) and starts
 * connecting, without waiting.  What keeps it from publishing (a password
 * file others may read, TLS files it cannot read, a spool it cannot open
 * or trust) turns publishing off, logged and in kmqtt_counters(), and the
 * rest goes on: the connection too, for the source mqtt, when only the
 * spool is at fault.  0, or -ENOMEM (*why is then NULL).
 */
int kmqtt_new(struct kloop *loop, const struct kmqtt_config *cfg, const struct ksink *sink,
	      struct kmqtt **out, const char **why);
/* The source mqtt: the events of cfg.subscribe's topic filters, each
 * message read with kmqtt_decode() and given to sink (NULL at
 * kmqtt_new(): none are taken).  Owned by m: its free is NULL. */
struct ksource *kmqtt_source(struct kmqtt *m);
/* Publishes ev (matched: it matched some rule), as cfg.publish says.
 * Never blocks. */
void kmqtt_publish(struct kmqtt *m, const struct kevent *ev, bool matched);
void kmqtt_counters(const struct kmqtt *m, struct kmqtt_counters *out);
/* Says "offline" on the status topic, disconnects (within a bounded
 * time) and frees everything.  NULL is fine. */
void kmqtt_free(struct kmqtt *m);

#endif

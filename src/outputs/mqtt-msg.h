/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What keventd puts on an MQTT broker and takes from it (keventd.yaml(5)):
 * the topic of an event, its message (the JSON object of `keventctl
 * record` plus "host") and the reader of such messages from other
 * machines.  Pure: a fuzzer drives the reader.
 */
#ifndef KEVENT_MQTT_MSG_H
#define KEVENT_MQTT_MSG_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"
#include "mqtt-dedupe.h"
#include "util.h"

/* A message longer than this is refused unread: a valid event's is far
 * shorter. */
#define KMQTT_MSG_MAX (64 * 1024)

/* The topic of ev under prefix: "<prefix>/<type>/<signal><object>", every
 * byte MQTT forbids or reserves in a topic name ('+', '#', control
 * characters, bytes outside ASCII) and '%' itself as "%XX". */
void kmqtt_topic(const char *prefix, const struct kevent *ev, struct strbuf *out);
/* A condition's row (an event of source condition, with its Condition:
 * property): "PREFIX/condition/NAME" and its object (or its Key:,
 * slash first), encoded as kmqtt_topic() does; false, writing nothing,
 * for any other event.  Its messages are retained
 * (kmqtt_topic_retained()): the row's last event while it holds, empty
 * once it cleared (keventd.yaml(5)). */
bool kmqtt_condition_topic(const char *prefix, const struct kevent *ev, struct strbuf *out);
bool kmqtt_topic_retained(const char *prefix, const char *topic);
/* The message of ev: the JSON object of a record, plus "host",
 * "instance" (ev->instance as 16 hex digits: what numbered it, the
 * keventd or the kernel module), "redelivered" and "recovered", which
 * name it for a reader that drops what it has already seen. */
void kmqtt_message(const struct kevent *ev, const char *host, struct strbuf *out);
/*
 * The host of a message that came on topic: the level (counted from 1) of
 * the topic that levels[i] names, for each subscription filters[i] (MQTT
 * 5's "$share/NAME/" not counted) that the topic matches.  Every one that
 * matches must name the same host; a topic no subscription matches, one
 * without that level, or whose level is not a host name
 * (kevent_host_valid()) names none.  0 with out (at most KEVENT_HOST_MAX
 * bytes and a NUL), or -EINVAL with *why (static).  Pure.
 */
int kmqtt_topic_host(char *const *filters, const unsigned *levels, size_t n, const char *topic,
		     char out[KEVENT_HOST_MAX + 1], const char **why);
/* Whether topic matches the filter (MQTT's '+' and '#'; a topic of '$'
 * matches no wildcard at its first level). */
bool kmqtt_topic_matches(const char *filter, const char *topic);
/*
 * Reads a message from the broker: a record's JSON object (as
 * kevent_json_read() reads it, within every limit of an event) with
 * "host", a host name (kevent_host_valid()), and "instance" if any (16
 * hex digits).  host is what its topic says (kmqtt_topic_host()): a
 * message whose "host" says another is refused, so that no sender speaks
 * as another host.  The event is of source mqtt, whatever the message
 * says, and carries the host and the instance.  key (may be NULL) names
 * the event as its sender did (its host is the event's).  0 with *out,
 * -EINVAL with *why (static), -ENOMEM.
 */
int kmqtt_decode(const void *buf, size_t len, const char *host, struct kevent **out,
		 struct kmqtt_key *key, const char **why);

#endif

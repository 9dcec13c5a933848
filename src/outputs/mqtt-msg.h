/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What keventd puts on an MQTT broker and takes from it (keventd.yaml(5)):
 * the topic of an event, its message (the JSON object of `keventctl
 * record` plus "host") and the reader of such messages from other
 * machines.  Pure: a fuzzer drives the reader.
 */
#ifndef KEVENT_MQTT_MSG_H
#define KEVENT_MQTT_MSG_H

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
/* The message of ev: the JSON object of a record, plus "host",
 * "instance" (ev->instance as 16 hex digits: what numbered it, the
 * keventd or the kernel module), "redelivered" and "recovered", which
 * name it for a reader that drops what it has already seen. */
void kmqtt_message(const struct kevent *ev, const char *host, struct strbuf *out);
/*
 * Reads a message from the broker: a record's JSON object (as
 * kevent_json_read() reads it, within every limit of an event) with
 * "host", a host name (kevent_host_valid()), and "instance" if any (16
 * hex digits).  The event is of source mqtt, whatever the message says,
 * and carries the host and the instance.  key (may be NULL) names the
 * event as its sender did (its host is the event's).  0 with *out,
 * -EINVAL with *why (static), -ENOMEM.
 */
int kmqtt_decode(const void *buf, size_t len, struct kevent **out, struct kmqtt_key *key,
		 const char **why);

#endif

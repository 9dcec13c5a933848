// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader of messages from an MQTT broker: kmqtt_topic_host() and
 * kmqtt_decode().  The input is a topic, a NUL and the message (without a
 * NUL: the message alone, on "fleet/h1/power/x").  A host the topic gives
 * is a valid host name, a level of the topic; what the reader accepts
 * must be a valid event (kevent_check()) of source mqtt whose host is the
 * topic's, refused with any other host, and must come back unchanged
 * through kmqtt_message() and the reader again: every field, the host,
 * and the payload byte for byte.
 */
#include <errno.h>
#include <string.h>

#include "event.h"
#include "fuzz.h"
#include "mqtt-msg.h"

#define MAX_INPUT (KMQTT_MSG_MAX + 1024)

/* Subscriptions that agree on the host of "fleet/HOST/power/...". */
static char *const filters[] = {"fleet/+/#", "$share/g/+/+/power/#", "x/#"};
static const unsigned levels[] = {2, 2, 3};

/* Whether host is level 2 or 3 of topic. */
static int is_level(const char *topic, const char *host)
{
	const char *p = topic;
	for (int level = 1; level <= 3 && p; level++) {
		size_t len = strcspn(p, "/");
		if (level >= 2 && len == strlen(host) && memcmp(p, host, len) == 0)
			return 1;
		p = strchr(p, '/');
		if (p)
			p++;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	struct fuzz_pair in = fuzz_split(data, size);
	const void *msg = in.b;
	size_t len = in.lb;
	char *topic = NULL;
	if (memchr(data, '\0', size)) {
		topic = strndup(in.a, in.la);
	} else {
		topic = strdup("fleet/h1/power/x");
		msg = data;
		len = size;
	}
	if (!topic)
		return 0;
	char host[KEVENT_HOST_MAX + 1];
	const char *why = NULL;
	int rc = kmqtt_topic_host(filters, levels, 3, topic, host, &why);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL && why);
		free(topic);
		return 0;
	}
	FUZZ_CHECK(kevent_host_valid(host) && is_level(topic, host));
	struct kevent *ev = NULL;
	struct kmqtt_key key;
	rc = kmqtt_decode(msg, len, host, &ev, &key, &why);
	if (rc < 0) {
		FUZZ_CHECK(!ev);
		FUZZ_CHECK(rc == -ENOMEM || (rc == -EINVAL && why));
		free(topic);
		return 0;
	}
	FUZZ_CHECK(kevent_check(ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	FUZZ_CHECK(ev->source == KEVENT_SOURCE_MQTT);
	FUZZ_CHECK(ev->host && strcmp(ev->host, host) == 0);
	FUZZ_CHECK(key.host == ev->host && key.instance == ev->instance &&
		   key.seqnum == ev->seqnum && key.source < KEVENT_SOURCE_MAX);
	/* the same message on another host's topic: refused */
	struct kevent *spoofed = NULL;
	char other[KEVENT_HOST_MAX + 2];
	snprintf(other, sizeof(other), "%s%s", strlen(host) < KEVENT_HOST_MAX ? "x" : "",
		 strlen(host) < KEVENT_HOST_MAX ? host : "other");
	rc = kmqtt_decode(msg, len, other, &spoofed, NULL, &why);
	FUZZ_CHECK(rc == -ENOMEM || (rc == -EINVAL && !spoofed));
	struct strbuf sb = STRBUF_INIT;
	kmqtt_message(ev, ev->host, &sb);
	if (!sb.oom) {
		FUZZ_CHECK(!memchr(sb.buf, '\n', sb.len));
		struct kevent *again = NULL;
		rc = kmqtt_decode(sb.buf, sb.len, host, &again, NULL, &why);
		FUZZ_CHECK(rc == 0 || rc == -ENOMEM || (rc == -EINVAL && sb.len > KMQTT_MSG_MAX));
		if (rc == 0) {
			FUZZ_CHECK_SAME_EVENT(again, ev);
			FUZZ_CHECK(strcmp(again->host, ev->host) == 0);
			FUZZ_CHECK(again->instance == ev->instance);
			kevent_free(again);
		}
	}
	strbuf_release(&sb);
	kevent_free(ev);
	free(topic);
	return 0;
}

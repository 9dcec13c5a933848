// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader of messages from an MQTT broker: kmqtt_decode().  What it
 * accepts must be a valid event (kevent_check()) of source mqtt with a
 * valid host, and must come back unchanged through kmqtt_message() and the
 * reader again: every field, the host, and the payload byte for byte.
 */
#include <errno.h>
#include <string.h>

#include "event.h"
#include "fuzz.h"
#include "mqtt-msg.h"

#define MAX_INPUT (KMQTT_MSG_MAX + 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	struct kevent *ev = NULL;
	const char *why = NULL;
	struct kmqtt_key key;
	int rc = kmqtt_decode(data, size, &ev, &key, &why);
	if (rc < 0) {
		FUZZ_CHECK(!ev);
		FUZZ_CHECK(rc == -ENOMEM || (rc == -EINVAL && why));
		return 0;
	}
	FUZZ_CHECK(kevent_check(ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	FUZZ_CHECK(ev->source == KEVENT_SOURCE_MQTT);
	FUZZ_CHECK(ev->host && kevent_host_valid(ev->host));
	FUZZ_CHECK(key.host == ev->host && key.instance == ev->instance &&
		   key.seqnum == ev->seqnum && key.source < KEVENT_SOURCE_MAX);
	struct strbuf sb = STRBUF_INIT;
	kmqtt_message(ev, ev->host, &sb);
	if (!sb.oom) {
		FUZZ_CHECK(!memchr(sb.buf, '\n', sb.len));
		struct kevent *again = NULL;
		rc = kmqtt_decode(sb.buf, sb.len, &again, NULL, &why);
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
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader of keventctl replay: kevent_json_read() of one line of a
 * record.  What it accepts must be a valid event (kevent_check()), and
 * must come back unchanged through the encoder and the reader again:
 * every field, and the payload byte for byte.
 */
#include <errno.h>
#include <string.h>

#include "event-json.h"
#include "event.h"
#include "fuzz.h"

#define MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kevent_json_read((const char *)data, size, &ev, &why);
	if (rc < 0) {
		FUZZ_CHECK(rc == -ENOMEM || (rc == -EINVAL && why));
		return 0;
	}
	FUZZ_CHECK(kevent_check(ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	struct strbuf sb = STRBUF_INIT;
	kevent_json_record(&sb, ev);
	if (!sb.oom) {
		FUZZ_CHECK(sb.len && sb.buf[sb.len - 1] == '\n');
		FUZZ_CHECK(!memchr(sb.buf, '\n', sb.len - 1));
		struct kevent *again = NULL;
		rc = kevent_json_read(sb.buf, sb.len, &again, &why);
		FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
		if (rc == 0) {
			FUZZ_CHECK_SAME_EVENT(again, ev);
			kevent_free(again);
		}
	}
	strbuf_release(&sb);
	kevent_free(ev);
	return 0;
}

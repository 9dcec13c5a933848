// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader of the table of messages taken (mqtt-seen in the state
 * directory): kmqtt_dedupe_decode().  What it accepts is at most
 * KMQTT_DEDUPE_STREAMS streams that come back byte for byte through
 * kmqtt_dedupe_encode() and the reader again.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "mqtt-dedupe-file.h"

#define MAX_INPUT (KMQTT_DEDUPE_STREAMS * 300)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	struct kmqtt_dedupe *d = NULL;
	if (kmqtt_dedupe_new(&d) < 0)
		return 0;
	const char *why = NULL;
	int rc = kmqtt_dedupe_decode(d, data, size, &why);
	FUZZ_CHECK(rc >= 0 || rc == -ENOMEM || (rc == -EINVAL && why));
	FUZZ_CHECK(kmqtt_dedupe_streams(d) <= KMQTT_DEDUPE_STREAMS);
	if (rc >= 0) {
		FUZZ_CHECK((size_t)rc >= kmqtt_dedupe_streams(d));
		struct strbuf sb = STRBUF_INIT;
		kmqtt_dedupe_encode(d, &sb);
		struct kmqtt_dedupe *e = NULL;
		if (!sb.oom && kmqtt_dedupe_new(&e) == 0) {
			FUZZ_CHECK(kmqtt_dedupe_decode(e, sb.buf, sb.len, &why) ==
				   (int)kmqtt_dedupe_streams(d));
			struct strbuf again = STRBUF_INIT;
			kmqtt_dedupe_encode(e, &again);
			FUZZ_CHECK(again.oom ||
				   (again.len == sb.len && memcmp(again.buf, sb.buf, sb.len) == 0));
			strbuf_release(&again);
			kmqtt_dedupe_free(e);
		}
		strbuf_release(&sb);
	}
	kmqtt_dedupe_free(d);
	return 0;
}

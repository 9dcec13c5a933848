// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader of the notifications' queue files: knotify_rec_decode() over
 * a file's bytes, as keventd reads one at start-up and before a try.  A
 * record it takes must be written again byte for byte the same (the
 * format has one spelling of each record), and what it refuses comes with
 * a reason; nothing it reads may crash or leak.
 */
#include <errno.h>

#include "fuzz.h"
#include "notify-rec.h"

#define MAX_INPUT (KNOTIFY_REC_MAX + 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	struct knotify_rec r;
	const char *why = NULL;
	int rc = knotify_rec_decode((const char *)data, size, &r, &why);
	if (rc == -ENOMEM)
		return 0;
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL && why);
		return 0;
	}
	FUZZ_CHECK(r.target && r.target[0] && r.rule && r.title && r.message && r.json);
	struct strbuf sb = STRBUF_INIT;
	knotify_rec_encode(&r, &sb);
	if (!sb.oom) {
		FUZZ_CHECK(sb.len == size);
		FUZZ_CHECK(memcmp(sb.buf, data, size) == 0);
	}
	strbuf_release(&sb);
	knotify_rec_release(&r);
	return 0;
}

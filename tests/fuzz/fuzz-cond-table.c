// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The condition table's file in --lib-dir, as a damaged or foreign file
 * could be (cond/file.h).  Checked: it is read whole or refused whole with
 * a reason (never half a table); one that is read writes a file that
 * reads back to the same rows and writes again to the same bytes, and the
 * table's machine runs on it (ticks, the start-up check,
 * an acknowledgement) without breaking its counts.
 */
#include <errno.h>
#include <string.h>

#include "file.h"
#include "fuzz.h"

#define MAX_INPUT (256 * 1024)

static const struct kcond_def *none(void *ud, const char *name)
{
	(void)ud;
	(void)name;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	struct kcond_table t;
	struct kcond_marks m;
	unsigned line = 0;
	const char *why = NULL;
	if (kcond_table_init(&t, 0, NULL, NULL) < 0)
		return 0;
	int rc = kcond_file_decode((const char *)data, size, &t, &m, &line, &why);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc < 0) {
		FUZZ_CHECK(rc == -ENOMEM || why != NULL);
		FUZZ_CHECK(t.n == 0 && t.holding == 0);
		kcond_table_release(&t);
		return 0;
	}
	size_t holding = 0;
	for (size_t i = 0; i < t.n; i++)
		holding += kcond_row_holds(t.v[i]);
	FUZZ_CHECK(holding == t.holding);
	struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT;
	FUZZ_CHECK(kcond_file_encode(&t, &m, &sb) == 0 || sb.oom);
	/* what it read, it writes as a table that reads back to the same rows
	 * and writes again byte for byte (a file keventd wrote is that file) */
	if (!sb.oom) {
		struct kcond_table u;
		struct kcond_marks um;
		if (kcond_table_init(&u, 0, NULL, NULL) == 0) {
			int rc2 = kcond_file_decode(sb.buf, sb.len, &u, &um, &line, &why);
			FUZZ_CHECK(rc2 == 0 || rc2 == -ENOMEM);
			if (rc2 == 0) {
				FUZZ_CHECK(u.n == t.n && u.holding == t.holding);
				FUZZ_CHECK(kcond_file_encode(&u, &um, &again) == 0 || again.oom);
				FUZZ_CHECK(again.oom || (again.len == sb.len &&
							 memcmp(again.buf, sb.buf, sb.len) == 0));
			}
			kcond_table_release(&u);
		}
	}
	strbuf_release(&sb);
	strbuf_release(&again);
	kcond_table_settle_begin(&t, ~0u);
	(void)kcond_table_settle_end(&t, 1u << KEVENT_SOURCE_MD, 1700000000ull * 1000000000);
	/* none declared: an acknowledgement ends the rows of its name, a tick
	 * leaves the others as they are */
	const char *name = t.n ? strdup(t.v[0]->name) : NULL;
	if (name)
		(void)kcond_table_ack(&t, NULL, name, NULL, "root", NULL, 1);
	size_t left = t.holding;
	(void)kcond_table_tick(&t, none, NULL, 1800000000ull * 1000000000);
	FUZZ_CHECK(t.holding == left);
	for (size_t i = 0; name && i < t.n; i++)
		FUZZ_CHECK(strcmp(t.v[i]->name, name) != 0 || !kcond_row_holds(t.v[i]));
	free((char *)name);
	kcond_table_release(&t);
	return 0;
}

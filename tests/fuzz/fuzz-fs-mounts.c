// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fs source's mount table: two reads of /proc/self/mountinfo (the
 * input split at its first NUL byte) parsed and diffed, each change made
 * into an event.  Checked: a table diffed against itself changes nothing;
 * a diff says at most one thing per mount of either table; every event is
 * of type fs under /org/kernel/fs with the signal its change names.
 */
#include <errno.h>
#include <string.h>

#include "fs.h"
#include "fuzz.h"

#define MAX_INPUT (64 * 1024)

static void on_change(void *userdata, enum kfs_change c, const struct kfs_mount *m,
		      const struct kfs_mount *prev)
{
	(void)userdata;
	FUZZ_CHECK((prev != NULL) == (c != KFS_MOUNT && c != KFS_UMOUNT));
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kfs_mount_event(c, m, prev, 1, &ev, &why);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		FUZZ_CHECK(ev->type == KEVENT_FS && ev->source == KEVENT_SOURCE_FS);
		FUZZ_CHECK(strncmp(ev->object, KFS_OBJECT_PREFIX "/", 15) == 0);
		FUZZ_CHECK(strcmp(ev->signal, kfs_change_signal(c)) == 0);
		kevent_free(ev);
	}
}

static void noop(void *userdata, enum kfs_change c, const struct kfs_mount *m,
		 const struct kfs_mount *prev)
{
	(void)userdata, (void)c, (void)m, (void)prev;
	FUZZ_CHECK(!"a table differs from itself");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	struct fuzz_pair in = fuzz_split(data, size);
	struct kfs_table ta, tb;
	FUZZ_CHECK(kfs_table_parse(in.a, in.la, &ta, NULL) == 0);
	FUZZ_CHECK(kfs_table_parse(in.b, in.lb, &tb, NULL) == 0);
	for (size_t i = 1; i < ta.n; i++)
		FUZZ_CHECK(ta.v[i - 1].id <= ta.v[i].id);
	for (int all = 0; all < 2; all++) {
		FUZZ_CHECK(kfs_diff(&ta, &ta, all, noop, NULL) == 0);
		size_t n = kfs_diff(&ta, &tb, all, on_change, NULL);
		FUZZ_CHECK(n <= ta.n + tb.n);
	}
	kfs_table_release(&ta);
	kfs_table_release(&tb);
	return 0;
}

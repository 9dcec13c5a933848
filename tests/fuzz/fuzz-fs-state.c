// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fs source's file in the state directory (fs.state), as a damaged
 * or foreign file could be.  Checked: it parses or is refused with a
 * reason, never more mounts than the bound; one that parses renders to a
 * file that parses to the same mounts and space states.
 */
#include <errno.h>
#include <string.h>

#include "fs.h"
#include "fuzz.h"

#define MAX_INPUT (256 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	struct kfs_state a, b;
	const char *why = NULL;
	int rc = kfs_state_parse((const char *)data, size, &a, &why);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -E2BIG);
	if (rc < 0) {
		FUZZ_CHECK(why != NULL);
		return 0;
	}
	FUZZ_CHECK(a.table.n <= KFS_MAX_MOUNTS && a.n_sp <= KFS_MAX_MOUNTS);
	struct strbuf sb = STRBUF_INIT;
	/* all: every mount read is rendered again */
	kfs_state_render(a.boot_id, true, &a.table, a.sp, a.n_sp, &sb);
	FUZZ_CHECK(!sb.oom);
	FUZZ_CHECK(kfs_state_parse(sb.buf, sb.len, &b, &why) == 0);
	FUZZ_CHECK(strcmp(a.boot_id, b.boot_id) == 0 && b.all);
	FUZZ_CHECK(a.table.n == b.table.n && a.n_sp == b.n_sp);
	for (size_t i = 0; i < a.table.n; i++) {
		const struct kfs_mount *x = &a.table.v[i], *y = &b.table.v[i];
		FUZZ_CHECK(kfs_mount_same(x, y));
		FUZZ_CHECK(strcmp(x->options, y->options) == 0 &&
			   strcmp(x->super_options, y->super_options) == 0 &&
			   strcmp(x->source, y->source) == 0);
	}
	for (size_t i = 0; i < a.n_sp; i++)
		FUZZ_CHECK(a.sp[i].id == b.sp[i].id && a.sp[i].space == b.sp[i].space &&
			   a.sp[i].inodes_low == b.sp[i].inodes_low &&
			   a.sp[i].judged == b.sp[i].judged &&
			   (!a.sp[i].judged || kfs_thresholds_equal(&a.sp[i].t, &b.sp[i].t)));
	strbuf_release(&sb);
	kfs_state_release(&a);
	kfs_state_release(&b);
	return 0;
}

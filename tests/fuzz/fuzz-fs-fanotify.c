// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fs source's fanotify records: a buffer as read() returns it, decoded
 * record by record with kfs_fan_decode().  Checked: a record's length never
 * goes past the buffer, the walk always moves on or stops, and an error
 * record makes an event of type fs whose Error-Count is the record's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fs.h"
#include "fuzz.h"

#define MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	struct kfs_mount m = {
		.id = 1,
		.mountpoint = (char *)"/var",
		.fstype = (char *)"ext4",
		.source = (char *)"/dev/vda1",
		.options = (char *)"rw",
		.super_options = (char *)"rw",
	};
	for (size_t off = 0; off < size;) {
		struct kfs_fan_rec r;
		size_t used = 0;
		const char *why = NULL;
		int rc = kfs_fan_decode(data + off, size - off, &r, &used, &why);
		FUZZ_CHECK(used <= size - off);
		FUZZ_CHECK(rc == 0 || (rc == -EINVAL && why));
		if (rc == 0 && r.has_error) {
			struct kevent *ev = NULL;
			FUZZ_CHECK(kfs_error_event(&r, &m, 1, &ev, &why) == 0);
			char want[32];
			snprintf(want, sizeof(want), "%u", r.error_count);
			FUZZ_CHECK(strcmp(kevent_prop(ev, "Error-Count"), want) == 0);
			kevent_free(ev);
		}
		if (!used)
			break;
		off += used;
	}
	return 0;
}

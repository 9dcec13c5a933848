// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fs source's quota warnings: one message of the VFS_DQUOT Generic
 * Netlink family (id 0x1d here) decoded with kfs_quota_decode().  Checked:
 * a warning names one of the documented signals and makes an event of
 * type fs on a mount, whose Id is the message's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fs.h"
#include "fuzz.h"

#define FAMILY	  0x1d
#define MAX_INPUT (16 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const signals[] = {
		"block-soft",	    "block-hard",	"block-grace-expired",
		"inode-soft",	    "inode-hard",	"inode-grace-expired",
		"block-below-soft", "block-below-hard", "inode-below-soft",
		"inode-below-hard",
	};
	if (size > MAX_INPUT)
		return 0;
	struct kfs_quota_msg q;
	const char *why = NULL;
	int rc = kfs_quota_decode(data, size, FAMILY, &q, &why);
	FUZZ_CHECK(rc == 0 || ((rc == -EINVAL || rc == -EBADMSG) && why));
	if (rc < 0 || !q.warning)
		return 0;
	bool known = false;
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		known |= strcmp(q.signal, signals[i]) == 0;
	FUZZ_CHECK(known && q.qtype <= 2);
	struct kfs_mount m = {1, q.major, q.minor, "/home", "ext4", "/dev/sda3", "rw", "rw"};
	struct kevent *ev = NULL;
	FUZZ_CHECK(kfs_quota_event(&q, &m, "someone", 1, &ev, &why) == 0);
	char id[24];
	snprintf(id, sizeof(id), "%llu", (unsigned long long)q.id);
	FUZZ_CHECK(strcmp(kevent_prop(ev, "Id"), id) == 0);
	kevent_free(ev);
	return 0;
}

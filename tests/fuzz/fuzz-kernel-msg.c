// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kevent Generic Netlink message parser, bytes of one recvmsg() in:
 * kkernel_decode() with the family id the seeds use.  gen-seeds.c
 * writes the seed messages.
 */
#include <errno.h>
#include <linux/genetlink.h>
#include <string.h>

#include "fuzz.h"
#include "kernel-msg.h"

#define FAMILY	  0x1d /* as tests/unit/test-kernel-msg.c */
#define MAX_INPUT (16 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	/* A buffer of exactly size bytes, aligned as a receive buffer is. */
	void *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kkernel_decode(buf, size, FAMILY, &ev, &why);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL || rc == -EBADMSG || rc == -ENOMEM);
		FUZZ_CHECK(!ev);
		FUZZ_CHECK(rc == -ENOMEM || (why && why[0]));
		free(buf);
		return 0;
	}
	FUZZ_CHECK(rc == 0 && ev);
	const struct nlmsghdr *nlh = buf;
	FUZZ_CHECK(size >= NLMSG_HDRLEN + GENL_HDRLEN && nlh->nlmsg_len <= size);
	FUZZ_CHECK(nlh->nlmsg_type == FAMILY);
	FUZZ_CHECK(ev->source == KEVENT_SOURCE_KERNEL);
	FUZZ_CHECK(kevent_check((int)ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	/* The event owns its strings: none points into the message. */
	const char *b = buf, *e = b + size;
	FUZZ_CHECK(!(ev->object >= b && ev->object < e));
	FUZZ_CHECK(!(ev->signal >= b && ev->signal < e));
	FUZZ_CHECK(!(ev->payload >= b && ev->payload < e));
	FUZZ_CHECK(ev->n_uevent_env == 0);
	for (size_t i = 0; i < ev->n_props; i++)
		FUZZ_CHECK(kevent_prop(ev, ev->props[i].key) == ev->props[i].value);
	kevent_free(ev);
	free(buf);
	return 0;
}

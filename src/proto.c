// SPDX-License-Identifier: GPL-2.0-or-later
#include "proto.h"

#include <errno.h>
#include <string.h>

int kctl_decode(const char *buf, size_t len, struct kctl_msg *m)
{
	m->n = 0;
	if (len == 0 || len > KCTL_MSG_MAX || buf[len - 1] != '\0')
		return -EBADMSG;
	size_t off = 0;
	while (off < len) {
		if (m->n == KCTL_FIELDS_MAX)
			return -EBADMSG;
		m->f[m->n++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	return 0;
}

int kctl_encode(struct strbuf *sb, const char *const *fields, size_t n)
{
	strbuf_reset(sb);
	for (size_t i = 0; i < n; i++)
		strbuf_add(sb, fields[i], strlen(fields[i]) + 1);
	if (sb->oom)
		return -ENOMEM;
	return sb->len <= KCTL_MSG_MAX ? 0 : -EMSGSIZE;
}

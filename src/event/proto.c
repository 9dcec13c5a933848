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

int kctl_event_from_msg(const struct kctl_msg *m, uint64_t seqnum, uint64_t timestamp,
			struct kevent **out, const char **why)
{
	if (m->n < 4 || m->n > 5)
		return -EBADMSG;
	int type = kevent_type_from_name(m->f[1]);
	if (type < 0) {
		*why = "unknown event type";
		return -EINVAL;
	}
	return kevent_new(type, m->f[2], m->f[3], m->n == 5 ? m->f[4] : "", KEVENT_SOURCE_SOCKET,
			  seqnum, timestamp, NULL, 0, out, why);
}

int kctl_event_from_msg_as(const struct kctl_msg *m, uint64_t seqnum, uint64_t timestamp,
			   struct kevent **out, const char **why)
{
	if (m->n < 5 || m->n > 6)
		return -EBADMSG;
	int source = kevent_source_from_name(m->f[1]);
	if (source < 0) {
		*why = "unknown source";
		return -EINVAL;
	}
	struct kctl_msg rest = {.n = m->n - 1};
	rest.f[0] = m->f[0];
	for (size_t i = 2; i < m->n; i++)
		rest.f[i - 1] = m->f[i];
	int rc = kctl_event_from_msg(&rest, seqnum, timestamp, out, why);
	if (rc == 0) {
		(*out)->source = (enum kevent_source)source;
		(*out)->injected = true;
	}
	return rc;
}

static bool subsystem_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == ':' || c == '-';
}

int kctl_trigger_from_msg(const struct kctl_msg *m, const char **action,
			  char list[KCTL_TRIGGER_MAX][KCTL_SUBSYSTEM_MAX], size_t *n,
			  const char **why)
{
	*n = 0;
	if (m->n < 2 || m->n > 3) {
		*why = "trigger takes ACTION [SUBSYSTEM,...]";
		return -EBADMSG;
	}
	if (strcmp(m->f[1], "add") != 0 && strcmp(m->f[1], "change") != 0) {
		*why = "trigger's action is add or change";
		return -EBADMSG;
	}
	*action = m->f[1];
	const char *s = m->n == 3 ? m->f[2] : "";
	while (*s) {
		size_t len = 0;
		while (s[len] && s[len] != ',')
			if (!subsystem_char(s[len++])) {
				*why = "a subsystem name is [A-Za-z0-9_.:-]";
				return -EBADMSG;
			}
		if (len == 0 || len >= KCTL_SUBSYSTEM_MAX) {
			*why = "a subsystem name is 1-63 characters";
			return -EBADMSG;
		}
		if (*n == KCTL_TRIGGER_MAX) {
			*why = "trigger takes at most 32 subsystems";
			return -EBADMSG;
		}
		memcpy(list[*n], s, len);
		list[(*n)++][len] = '\0';
		s += len;
		if (*s == ',' && !*++s) {
			*why = "a subsystem name is 1-63 characters";
			return -EBADMSG;
		}
	}
	return 0;
}

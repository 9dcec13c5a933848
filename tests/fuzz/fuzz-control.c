// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control protocol decoder, bytes of one SOCK_SEQPACKET message in:
 * kctl_decode(), then for a "send" or "post" request the event the daemon
 * makes of it, kctl_event_from_msg() (which parses the payload), and for a
 * "trigger" request its action and subsystems, kctl_trigger_from_msg();
 * for "test-run" and "post-as", kctl_event_from_msg_as().
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "event.h"
#include "filter.h"
#include "fuzz.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kctl_msg m;
	const char *buf = (const char *)data;
	const char *why_trigger = NULL;

	/* a little over the protocol's limit, so oversize messages are tried */
	if (fuzz_outside_size(size, 0, KCTL_MSG_MAX + 64))
		return 0;
	size_t nuls = 0;
	for (size_t i = 0; i < size; i++)
		nuls += buf[i] == '\0';
	bool valid = size > 0 && size <= KCTL_MSG_MAX && buf[size - 1] == '\0' &&
		     nuls <= KCTL_FIELDS_MAX;
	int rc = kctl_decode(buf, size, &m);
	FUZZ_CHECK(rc == (valid ? 0 : -EBADMSG));
	if (rc < 0)
		return 0;
	FUZZ_CHECK(m.n == nuls);
	/* The fields tile the message exactly: each starts right after the
	 * previous one's NUL and lies inside the buffer. */
	size_t off = 0;
	for (size_t i = 0; i < m.n; i++) {
		FUZZ_CHECK(m.f[i] == buf + off);
		off += strlen(m.f[i]) + 1;
		FUZZ_CHECK(off <= size);
	}
	FUZZ_CHECK(off == size);

	/* Encoding the fields again gives the same bytes. */
	struct strbuf sb = STRBUF_INIT;
	rc = kctl_encode(&sb, m.f, m.n);
	FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
	FUZZ_CHECK(rc != 0 || (sb.len == size && memcmp(sb.buf, buf, size) == 0));
	strbuf_release(&sb);

	if (strcmp(m.f[0], "trigger") == 0) {
		/* the names parsed are the list's, each whole and valid */
		char list[KCTL_TRIGGER_MAX][KCTL_SUBSYSTEM_MAX];
		const char *action = NULL;
		size_t n = 0;
		rc = kctl_trigger_from_msg(&m, &action, list, &n, &why_trigger);
		FUZZ_CHECK(rc == 0 || (rc == -EBADMSG && why_trigger));
		if (rc == 0) {
			FUZZ_CHECK(strcmp(action, "add") == 0 || strcmp(action, "change") == 0);
			FUZZ_CHECK(n <= KCTL_TRIGGER_MAX && (n > 0) == (m.n == 3 && *m.f[2]));
			struct strbuf joined = STRBUF_INIT;
			for (size_t i = 0; i < n; i++) {
				size_t len = strlen(list[i]);
				FUZZ_CHECK(len > 0 && len < KCTL_SUBSYSTEM_MAX);
				FUZZ_CHECK(strspn(list[i],
						  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
						  "qrstuvwxyz0123456789_.:-") == len);
				strbuf_printf(&joined, "%s%s", i ? "," : "", list[i]);
			}
			FUZZ_CHECK(joined.oom || strcmp(strbuf_str(&joined), n ? m.f[2] : "") == 0);
			strbuf_release(&joined);
		}
		return 0;
	}
	if (strcmp(m.f[0], "events") == 0 || strcmp(m.f[0], "monitor") == 0) {
		/* the filters: each field taken or refused with why, and what
		 * is taken is what the field says */
		struct kfilter f;
		kfilter_init(&f);
		for (size_t i = strcmp(m.f[0], "events") == 0 ? 3 : 2; i < m.n; i++) {
			const char *why = NULL;
			struct kfilter before = f;
			rc = kfilter_add(&f, m.f[i], &why);
			FUZZ_CHECK(rc == 0 || (rc == -EINVAL && why));
			FUZZ_CHECK(rc == 0 || memcmp(&before, &f, sizeof(f)) == 0 ||
				   strncmp(m.f[i], "source=", 7) == 0 ||
				   strncmp(m.f[i], "type=", 5) == 0);
			FUZZ_CHECK(strlen(f.rule) <= KFILTER_RULE_MAX);
			FUZZ_CHECK(rc != 0 || strncmp(m.f[i], "rule=", 5) != 0 ||
				   strcmp(f.rule, m.f[i] + 5) == 0);
		}
		return 0;
	}
	if (strcmp(m.f[0], "test-run") == 0 || strcmp(m.f[0], "post-as") == 0) {
		/* SOURCE first: the same event as the request without it, of
		 * that source, marked injected */
		struct kevent *ev = NULL, *plain = NULL;
		const char *why = NULL, *why2 = NULL;
		rc = kctl_event_from_msg_as(&m, 1, 2, &ev, &why);
		FUZZ_CHECK(rc != -EBADMSG || m.n < 5 || m.n > 6);
		FUZZ_CHECK(rc != -EINVAL || (why && !ev));
		if (rc == 0) {
			FUZZ_CHECK(kevent_source_from_name(m.f[1]) == (int)ev->source);
			FUZZ_CHECK(ev->injected && !ev->test);
			struct kctl_msg rest = {.n = m.n - 1, .f = {"send"}};
			for (size_t i = 2; i < m.n; i++)
				rest.f[i - 1] = m.f[i];
			FUZZ_CHECK(kctl_event_from_msg(&rest, 1, 2, &plain, &why2) == 0);
			FUZZ_CHECK(strcmp(plain->object, ev->object) == 0 &&
				   strcmp(plain->payload, ev->payload) == 0 &&
				   plain->n_props == ev->n_props);
			kevent_free(plain);
		}
		kevent_free(ev);
		return 0;
	}
	if (strcmp(m.f[0], "send") != 0 && strcmp(m.f[0], "post") != 0)
		return 0;
	struct kevent *ev = NULL;
	const char *why = NULL;
	rc = kctl_event_from_msg(&m, 1, 2, &ev, &why);
	FUZZ_CHECK(rc != -EBADMSG || m.n < 4 || m.n > 5);
	if (rc == -EINVAL) {
		FUZZ_CHECK(why && !ev);
		return 0;
	}
	if (rc < 0) {
		FUZZ_CHECK(!ev);
		return 0;
	}
	FUZZ_CHECK(m.n >= 4 && m.n <= 5 && kevent_type_from_name(m.f[1]) == (int)ev->type);
	FUZZ_CHECK(ev->source == KEVENT_SOURCE_SOCKET && ev->seqnum == 1 && ev->timestamp == 2);
	FUZZ_CHECK(strcmp(ev->payload, m.n == 5 ? m.f[4] : "") == 0);
	FUZZ_CHECK(kevent_check((int)ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	FUZZ_CHECK(strcmp(ev->object, m.f[2]) == 0 && strcmp(ev->signal, m.f[3]) == 0);
	for (size_t i = 0; i < ev->n_props; i++) {
		const struct kevent_prop *p = &ev->props[i];
		FUZZ_CHECK(p->key[0] &&
			   strspn(p->key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
					  "qrstuvwxyz0123456789_.-") == strlen(p->key));
		FUZZ_CHECK(kevent_prop(ev, p->key) == p->value);
		FUZZ_CHECK(!strchr(p->value, '\n'));
	}
	kevent_free(ev);
	return 0;
}

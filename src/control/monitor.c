// SPDX-License-Identifier: GPL-2.0-or-later
#include "monitor.h"

#include "event-json.h"

#include <inttypes.h>
#include <string.h>

/* Drops what was added to sb since it was len bytes long. */
static void strbuf_cut(struct strbuf *sb, size_t len)
{
	if (sb->buf && len < sb->len) {
		sb->len = len;
		sb->buf[len] = '\0';
	}
}

/* Appends the names of the rules, as many as leave room for the line's end. */
static void rule_names(struct strbuf *sb, const struct krule *const *rules, size_t n, bool json)
{
	for (size_t i = 0; i < n; i++) {
		size_t before = sb->len;
		strbuf_puts(sb, i ? "," : "");
		if (json)
			strbuf_json(sb, rules[i]->name);
		else
			strbuf_put_escaped(sb, rules[i]->name);
		if (sb->len > KMONITOR_LINE_MAX - 32) {
			strbuf_cut(sb, before);
			strbuf_puts(sb, json ? "],\"rules_truncated\":true" : ",...");
			return;
		}
	}
	if (json)
		strbuf_putc(sb, ']');
}

static void line_as(struct strbuf *sb, const struct kevent *ev, const char *payload, bool brief,
		    const struct krule *const *rules, size_t n, bool json)
{
	if (json) {
		kevent_json_open(sb, ev, payload, brief);
		strbuf_puts(sb, ",\"rules\":[");
		rule_names(sb, rules, n, true);
		strbuf_putc(sb, '}');
		return;
	}
	strbuf_printf(sb, "%s seq=%" PRIu64 " %s %s %s payload=", kevent_source_name(ev->source),
		      ev->seqnum, kevent_type_name(ev->type), ev->object, ev->signal);
	strbuf_quote(sb, payload);
	strbuf_puts(sb, brief ? "..." : "");
	strbuf_puts(sb, n ? " rules=" : " rules=(none)");
	rule_names(sb, rules, n, false);
}

void kmonitor_record(struct strbuf *sb, const struct kevent *ev)
{
	strbuf_printf(sb, "%s\x1f%" PRIu64 "\x1f%" PRIu64 "\x1f%s\x1f%s\x1f%s\x1f%s",
		      kevent_source_name(ev->source), ev->seqnum, ev->timestamp,
		      kevent_type_name(ev->type), ev->object, ev->signal, ev->payload);
}

void kmonitor_line(struct strbuf *sb, const struct kevent *ev, const struct krule *const *rules,
		   size_t n, bool json)
{
	size_t start = sb->len;
	line_as(sb, ev, ev->payload, false, rules, n, json);
	if (sb->len - start <= KMONITOR_LINE_MAX || sb->oom)
		return;
	/* too long for one message once escaped: the start of the payload (not
	 * cutting a UTF-8 character), and no properties, which are in it */
	size_t len = strlen(ev->payload);
	size_t cut = len < KMONITOR_BRIEF_PAYLOAD ? len : KMONITOR_BRIEF_PAYLOAD;
	while (cut && cut < len && ((unsigned char)ev->payload[cut] & 0xc0) == 0x80)
		cut--;
	_cleanup_free_ char *brief = strndup(ev->payload, cut);
	strbuf_cut(sb, start);
	if (!brief) {
		sb->oom = true;
		return;
	}
	line_as(sb, ev, brief, true, rules, n, json);
}

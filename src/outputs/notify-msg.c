// SPDX-License-Identifier: GPL-2.0-or-later
/* What a notification says, and how each target is sent it (notify-msg.h). */
#include "notify-msg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event-json.h"
#include "plan.h"
#include "template.h"

uint64_t knotify_msg_id(const struct kevent *ev, const struct krule *r, const char *target)
{
	uint64_t h = KNOTIFY_FNV_INIT;
	uint64_t nums[3] = {ev->instance, ev->seqnum, ev->timestamp};
	uint32_t src = (uint32_t)ev->source;
	h = knotify_fnv(h, nums, sizeof(nums));
	h = knotify_fnv(h, &src, sizeof(src));
	const char *parts[] = {ev->host ? ev->host : "", r->file ? r->file->name : "", r->name,
			       target};
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		h = knotify_fnv(h, parts[i], strlen(parts[i]) + 1);
	return h;
}

/* s cut to at most max bytes, at a character's start. */
static void cut(char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	s[max] = '\0';
}

/* A title is one line: control characters become spaces. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			*s = ' ';
}

static void default_title(const struct kevent *ev, const char *host, struct strbuf *sb)
{
	const char *cond = kevent_prop(ev, "Condition");
	strbuf_printf(sb, "%s: ", host);
	if (cond)
		strbuf_printf(sb, "%s %s", cond, ev->signal);
	else
		strbuf_puts(sb, ev->signal);
	strbuf_printf(sb, " on %s", ev->object);
}

static void default_message(const struct krule *r, const struct kevent *ev, const char *host,
			    struct strbuf *sb)
{
	char when[64] = "?";
	time_t t = (time_t)(ev->timestamp / 1000000000ull);
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (ev->payload[0]) {
		strbuf_puts(sb, ev->payload);
		if (ev->payload[strlen(ev->payload) - 1] != '\n')
			strbuf_putc(sb, '\n');
		strbuf_putc(sb, '\n');
	}
	strbuf_printf(sb,
		      "Host: %s\nSource: %s\nType: %s\nObject: %s\nSignal: %s\nSeqnum: %" PRIu64
		      "\nTime: %s\nRule: %s (%s)\n",
		      host, kevent_source_name(ev->source), kevent_type_name(ev->type), ev->object,
		      ev->signal, ev->seqnum, when, r->name, r->file ? r->file->path : "");
}

static char *take(struct strbuf *sb, size_t max)
{
	if (sb->oom)
		return NULL;
	char *s = strbuf_steal(sb);
	if (s)
		cut(s, max);
	return s;
}

int knotify_msg_make(const struct krule *r, const struct kevent *ev, const char *target,
		     const char *host, uint64_t now_s, struct knotify_rec *out)
{
	const struct krule_extra *x = krule_extra(r);
	struct knotify_rec rec = {
		.id = knotify_msg_id(ev, r, target),
		.created = now_s,
		.retry = ev->redelivered,
		.severity = knotify_severity_from(kevent_prop(ev, "Severity")),
		.target = strdup(target),
		.rule = strdup(r->name),
	};
	char **env = NULL;
	size_t n_env = 0;
	int rc = x->notify_title || x->notify_message ? kplan_build_env(r, ev, &env, &n_env) : 0;
	struct strbuf sb = STRBUF_INIT;
	if (rc == 0) {
		if (x->notify_title)
			rec.title = ktemplate_expand(x->notify_title, env);
		else
			default_title(ev, host, &sb), rec.title = take(&sb, KNOTIFY_REC_TITLE_MAX);
		if (rec.title) {
			cut(rec.title, KNOTIFY_REC_TITLE_MAX);
			one_line(rec.title);
		}
		strbuf_release(&sb);
		if (x->notify_message)
			rec.message = ktemplate_expand(x->notify_message, env);
		else
			default_message(r, ev, host, &sb),
				rec.message = take(&sb, KNOTIFY_REC_TEXT_MAX);
		if (rec.message)
			cut(rec.message, KNOTIFY_REC_TEXT_MAX);
		strbuf_release(&sb);
		/* the event's JSON object, with the host it is of */
		kevent_json_record(&sb, ev);
		if (!sb.oom && sb.len >= 2) {
			sb.len -= 2; /* "}\n" */
			strbuf_puts(&sb, ",\"host\":");
			strbuf_json(&sb, host);
			strbuf_printf(&sb, ",\"instance\":\"%016" PRIx64 "\",\"redelivered\":%s}",
				      ev->instance, ev->redelivered ? "true" : "false");
		}
		if (sb.len <= KNOTIFY_REC_JSON_MAX)
			rec.json = take(&sb, KNOTIFY_REC_JSON_MAX);
		else
			rec.json = strdup("{}"); /* cannot happen: an event is far smaller */
		strbuf_release(&sb);
	}
	strv_free(env);
	if (rc < 0 || !rec.target || !rec.rule || !rec.title || !rec.message || !rec.json) {
		knotify_rec_release(&rec);
		return -ENOMEM;
	}
	*out = rec;
	return 0;
}

static bool ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

static void base64(struct strbuf *out, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		strbuf_putc(out, tab[v >> 18 & 63]);
		strbuf_putc(out, tab[v >> 12 & 63]);
		strbuf_putc(out, i + 1 < n ? tab[v >> 6 & 63] : '=');
		strbuf_putc(out, i + 2 < n ? tab[v & 63] : '=');
	}
}

void knotify_header_text(const char *s, struct strbuf *out)
{
	_cleanup_free_ char *c = strdup(s);
	if (!c) {
		out->oom = true;
		return;
	}
	one_line(c);
	if (ascii(c)) {
		strbuf_puts(out, c);
		return;
	}
	/* encoded words of at most 45 bytes (60 of base64), each of whole
	 * characters, separated by a space (RFC 2047 section 2) */
	const char *p = c;
	size_t len = strlen(c);
	bool first = true;
	while (len) {
		size_t n = len < 45 ? len : 45;
		while (n < len && n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
		if (!n)
			n = len < 45 ? len : 45;
		strbuf_puts(out, first ? "=?UTF-8?B?" : " =?UTF-8?B?");
		base64(out, (const unsigned char *)p, n);
		strbuf_puts(out, "?=");
		first = false;
		p += n;
		len -= n;
	}
}

static const char *subject_tag(enum knotify_severity s)
{
	switch (s) {
	case KNOTIFY_SEV_CRITICAL:
		return "[critical] ";
	case KNOTIFY_SEV_WARNING:
		return "[warning] ";
	case KNOTIFY_SEV_INFO:
		return "[info] ";
	case KNOTIFY_SEV_NONE:
		break;
	}
	return "";
}

/* Whether every line of s is ASCII and at most 998 bytes. */
static bool plain_text(const char *s)
{
	size_t line = 0;
	for (; *s; s++) {
		if ((unsigned char)*s >= 0x80 || *s == '\r' || (*s == '\0'))
			return false;
		line = *s == '\n' ? 0 : line + 1;
		if (line > 998)
			return false;
	}
	return true;
}

void knotify_mail(const struct knotify_rec *rec, bool retry, const char *from, char *const *to,
		  size_t n_to, const char *host, struct strbuf *out)
{
	char date[64] = "";
	time_t now = (time_t)rec->created;
	struct tm tm;
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	strbuf_printf(out, "Date: %s\r\nFrom: <%s>\r\nTo: ", date, from);
	for (size_t i = 0; i < n_to; i++)
		strbuf_printf(out, "%s<%s>", i ? ",\r\n    " : "", to[i]);
	_cleanup_strbuf_ struct strbuf subject = STRBUF_INIT;
	strbuf_puts(&subject, subject_tag(rec->severity));
	strbuf_puts(&subject, rec->title);
	strbuf_puts(out, "\r\nSubject: ");
	knotify_header_text(strbuf_str(&subject), out);
	/* the same Message-ID for every try: a mail reader shows one */
	strbuf_printf(out, "\r\nMessage-ID: <%016" PRIx64 ".keventd@", rec->id);
	for (const char *h = host; *h; h++)
		strbuf_putc(out, (*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') ||
						 (*h >= '0' && *h <= '9') || *h == '.' || *h == '-'
					 ? *h
					 : '_');
	strbuf_printf(out, ">\r\nX-Keventd-Id: %016" PRIx64 "\r\n", rec->id);
	if (retry)
		strbuf_puts(out, "X-Keventd-Retry: yes\r\n");
	if (rec->severity != KNOTIFY_SEV_NONE)
		strbuf_printf(out, "X-Keventd-Severity: %s\r\n",
			      knotify_severity_name(rec->severity));
	if (rec->severity == KNOTIFY_SEV_CRITICAL)
		strbuf_puts(out, "Importance: high\r\nX-Priority: 1\r\n");
	strbuf_puts(out, "Auto-Submitted: auto-generated\r\nMIME-Version: 1.0\r\n");
	bool plain = plain_text(rec->message);
	strbuf_printf(out,
		      "Content-Type: text/plain; charset=%s\r\n"
		      "Content-Transfer-Encoding: %s\r\n\r\n",
		      plain ? "us-ascii" : "utf-8", plain ? "7bit" : "base64");
	if (plain) {
		for (const char *p = rec->message; *p; p++) {
			if (*p == '\n')
				strbuf_puts(out, "\r\n");
			else
				strbuf_putc(out, *p);
		}
		if (!rec->message[0] || rec->message[strlen(rec->message) - 1] != '\n')
			strbuf_puts(out, "\r\n");
		return;
	}
	const unsigned char *p = (const unsigned char *)rec->message;
	for (size_t len = strlen(rec->message); len;) {
		size_t n = len < 57 ? len : 57; /* 76 characters a line */
		base64(out, p, n);
		strbuf_puts(out, "\r\n");
		p += n;
		len -= n;
	}
}

int knotify_ntfy_priority(enum knotify_severity s)
{
	return s == KNOTIFY_SEV_CRITICAL ? 5 : s == KNOTIFY_SEV_WARNING ? 4 : 3;
}

int knotify_gotify_priority(enum knotify_severity s)
{
	return s == KNOTIFY_SEV_CRITICAL ? 10 : s == KNOTIFY_SEV_WARNING ? 7 : 5;
}

void knotify_ntfy_headers(const struct knotify_rec *rec, bool retry, struct strbuf *out)
{
	static const char *const emoji[] = {
		[KNOTIFY_SEV_NONE] = "",
		[KNOTIFY_SEV_INFO] = "information_source,",
		[KNOTIFY_SEV_WARNING] = "warning,",
		[KNOTIFY_SEV_CRITICAL] = "rotating_light,",
	};
	strbuf_puts(out, "Title: ");
	knotify_header_text(rec->title, out);
	strbuf_printf(out, "\nPriority: %d\nTags: %skeventd%s%s\n",
		      knotify_ntfy_priority(rec->severity), emoji[rec->severity],
		      rec->severity ? "," : "",
		      rec->severity ? knotify_severity_name(rec->severity) : "");
	strbuf_printf(out, "X-Keventd-Id: %016" PRIx64 "\n", rec->id);
	if (retry)
		strbuf_puts(out, "X-Keventd-Retry: yes\n");
}

void knotify_gotify_body(const struct knotify_rec *rec, bool retry, struct strbuf *out)
{
	strbuf_puts(out, "{\"title\":");
	strbuf_json(out, rec->title);
	strbuf_puts(out, ",\"message\":");
	strbuf_json(out, rec->message);
	strbuf_printf(out,
		      ",\"priority\":%d,\"extras\":{\"client::display\":{\"contentType\":"
		      "\"text/plain\"},\"keventd::notification\":{\"id\":\"%016" PRIx64
		      "\",\"retry\":%s}}}",
		      knotify_gotify_priority(rec->severity), rec->id, retry ? "true" : "false");
}

void knotify_webhook_body(const struct knotify_rec *rec, bool retry, struct strbuf *out)
{
	size_t len = strlen(rec->json);
	if (len < 2 || rec->json[len - 1] != '}') {
		strbuf_puts(out, "{");
	} else {
		strbuf_add(out, rec->json, len - 1);
		strbuf_puts(out, len > 2 ? "," : "");
	}
	strbuf_printf(out, "\"notification\":{\"id\":\"%016" PRIx64 "\",\"target\":", rec->id);
	strbuf_json(out, rec->target);
	strbuf_puts(out, ",\"rule\":");
	strbuf_json(out, rec->rule);
	strbuf_puts(out, ",\"title\":");
	strbuf_json(out, rec->title);
	strbuf_puts(out, ",\"message\":");
	strbuf_json(out, rec->message);
	strbuf_printf(out, ",\"severity\":");
	if (rec->severity)
		strbuf_json(out, knotify_severity_name(rec->severity));
	else
		strbuf_puts(out, "null");
	strbuf_printf(out, ",\"retry\":%s,\"test\":%s}}", retry ? "true" : "false",
		      rec->test ? "true" : "false");
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The notifications' queue records (notify-rec.h). */
#include "notify-rec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAGIC "keventd-notify 1 "

static const char *const severities[] = {
	[KNOTIFY_SEV_NONE] = "none",
	[KNOTIFY_SEV_INFO] = "info",
	[KNOTIFY_SEV_WARNING] = "warning",
	[KNOTIFY_SEV_CRITICAL] = "critical",
};

const char *knotify_severity_name(enum knotify_severity s)
{
	return severities[s];
}

enum knotify_severity knotify_severity_from(const char *s)
{
	for (size_t i = KNOTIFY_SEV_INFO; s && i < ARRAY_SIZE(severities); i++)
		if (strcasecmp(s, severities[i]) == 0)
			return (enum knotify_severity)i;
	return KNOTIFY_SEV_NONE;
}

uint64_t knotify_fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void field(struct strbuf *out, const char *name, const char *value)
{
	size_t len = value ? strlen(value) : 0;
	strbuf_printf(out, "%s %zu\n", name, len);
	strbuf_add(out, value ? value : "", len);
	strbuf_putc(out, '\n');
}

void knotify_rec_encode(const struct knotify_rec *r, struct strbuf *out)
{
	struct strbuf body = STRBUF_INIT;
	char num[32];
	snprintf(num, sizeof(num), "%016" PRIx64, r->id);
	field(&body, "id", num);
	snprintf(num, sizeof(num), "%" PRIu64, r->created);
	field(&body, "created", num);
	field(&body, "flags", r->retry && r->test ? "rt" : r->retry ? "r" : r->test ? "t" : "-");
	field(&body, "severity", severities[r->severity]);
	field(&body, "target", r->target);
	field(&body, "rule", r->rule);
	field(&body, "title", r->title);
	field(&body, "message", r->message);
	field(&body, "json", r->json);
	if (body.oom) {
		out->oom = true;
	} else {
		uint64_t sum = knotify_fnv(KNOTIFY_FNV_INIT, body.buf, body.len);
		strbuf_printf(out, MAGIC "%016" PRIx64 " %zu\n", sum, body.len);
		strbuf_add(out, body.buf, body.len);
	}
	strbuf_release(&body);
}

/* Reads a decimal number of at most 20 digits ending at term. */
static int number(const char **p, const char *end, char term, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	size_t digits = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++, digits++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (!digits || digits > 20 || (digits > 1 && **p == '0') || s == end || *s != term)
		return -EINVAL;
	*p = s + 1;
	*out = v;
	return 0;
}

static int hex16(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (len != 16)
		return -EINVAL;
	for (size_t i = 0; i < 16; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* The next field, which must be name: its value's bytes (no NUL among them). */
static int next(const char **p, const char *end, const char *name, size_t max, const char **val,
		size_t *len)
{
	size_t n = strlen(name);
	uint64_t v;
	if ((size_t)(end - *p) < n + 1 || memcmp(*p, name, n) != 0 || (*p)[n] != ' ')
		return -EINVAL;
	*p += n + 1;
	if (number(p, end, '\n', &v) < 0 || v > max || v + 1 > (uint64_t)(end - *p) ||
	    (*p)[v] != '\n' || memchr(*p, '\0', (size_t)v))
		return -EINVAL;
	*val = *p;
	*len = (size_t)v;
	*p += v + 1;
	return 0;
}

static char *copy(const char *s, size_t len, bool *oom)
{
	char *c = strndup(s, len);
	if (!c)
		*oom = true;
	return c;
}

int knotify_rec_decode(const char *buf, size_t len, struct knotify_rec *out, const char **why)
{
	*out = (struct knotify_rec){0};
	*why = NULL;
	const char *p = buf, *end = buf + len, *v;
	size_t n;
	uint64_t sum, body;
	if (len > KNOTIFY_REC_MAX) {
		*why = "larger than a record";
		return -EINVAL;
	}
	if (len < strlen(MAGIC) + 19 || memcmp(p, MAGIC, strlen(MAGIC)) != 0) {
		*why = "not a record of the notifications' queue";
		return -EINVAL;
	}
	p += strlen(MAGIC);
	if (hex16(p, 16, &sum) < 0 || p[16] != ' ') {
		*why = "a damaged first line";
		return -EINVAL;
	}
	p += 17;
	if (number(&p, end, '\n', &body) < 0 || body != (uint64_t)(end - p)) {
		*why = "cut short, or with bytes after its end";
		return -EINVAL;
	}
	if (knotify_fnv(KNOTIFY_FNV_INIT, p, (size_t)body) != sum) {
		*why = "its checksum does not hold";
		return -EINVAL;
	}
	struct knotify_rec r = {0};
	bool oom = false;
	int rc = next(&p, end, "id", 16, &v, &n);
	if (rc == 0)
		rc = hex16(v, n, &r.id);
	if (rc == 0)
		rc = next(&p, end, "created", 20, &v, &n);
	if (rc == 0) {
		const char *q = v; /* v[n] is the field's '\n' */
		rc = number(&q, v + n + 1, '\n', &r.created);
	}
	if (rc == 0)
		rc = next(&p, end, "flags", 2, &v, &n);
	if (rc == 0) {
		if (n == 1 && v[0] == '-')
			;
		else if (n == 1 && v[0] == 'r')
			r.retry = true;
		else if (n == 1 && v[0] == 't')
			r.test = true;
		else if (n == 2 && v[0] == 'r' && v[1] == 't')
			r.retry = r.test = true;
		else
			rc = -EINVAL;
	}
	if (rc == 0)
		rc = next(&p, end, "severity", 8, &v, &n);
	if (rc == 0) {
		rc = -EINVAL;
		for (size_t i = 0; i < ARRAY_SIZE(severities); i++)
			if (strlen(severities[i]) == n && memcmp(severities[i], v, n) == 0) {
				r.severity = (enum knotify_severity)i;
				rc = 0;
			}
	}
	static const struct {
		const char *name;
		size_t max;
		size_t off;
		bool nonempty;
	} texts[] = {
		{"target", 64, offsetof(struct knotify_rec, target), true},
		{"rule", 1024, offsetof(struct knotify_rec, rule), false},
		{"title", KNOTIFY_REC_TITLE_MAX, offsetof(struct knotify_rec, title), false},
		{"message", KNOTIFY_REC_TEXT_MAX, offsetof(struct knotify_rec, message), false},
		{"json", KNOTIFY_REC_JSON_MAX, offsetof(struct knotify_rec, json), false},
	};
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(texts); i++) {
		rc = next(&p, end, texts[i].name, texts[i].max, &v, &n);
		if (rc == 0 && texts[i].nonempty && !n)
			rc = -EINVAL;
		if (rc == 0)
			*(char **)((char *)&r + texts[i].off) = copy(v, n, &oom);
	}
	if (rc == 0 && p != end)
		rc = -EINVAL;
	if (rc < 0 || oom) {
		knotify_rec_release(&r);
		*why = oom ? NULL : "a field is missing, out of order or too long";
		return oom ? -ENOMEM : -EINVAL;
	}
	*out = r;
	return 0;
}

void knotify_rec_release(struct knotify_rec *r)
{
	free(r->target);
	free(r->rule);
	free(r->title);
	free(r->message);
	free(r->json);
	*r = (struct knotify_rec){0};
}

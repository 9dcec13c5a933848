// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A tracepoint's format and records (trace-msg.h).  The format file is
 * the kernel's own description of the record: one line per field,
 *	field:__data_loc char[] filename;	offset:8;	size:4;	signed:0;
 * which is all a decoder needs: where each field is, how wide, whether
 * signed, and whether it is text.  The print fmt line after the fields is
 * not read: the event carries the fields, not the kernel's sentence.
 */
#include "trace-msg.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define RECORD_MAX (64 * 1024) /* a tracepoint's record is smaller */
/* room kept in the payload for Cpu: and Task-Pid: */
#define TRAILER_MAX 128

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Reads "key:NUMBER;" at p (blanks before it skipped); the position after
 * the ';', or NULL. */
static const char *read_number(const char *p, const char *end, const char *key, uint32_t *out)
{
	size_t klen = strlen(key);
	p = skip_blanks(p, end);
	if ((size_t)(end - p) < klen || memcmp(p, key, klen) != 0)
		return NULL;
	p += klen;
	uint64_t v = 0;
	const char *digits = p;
	while (p < end && *p >= '0' && *p <= '9' && v <= UINT32_MAX)
		v = v * 10 + (uint64_t)(*p++ - '0');
	if (p == digits || v > UINT32_MAX || p >= end || *p != ';')
		return NULL;
	*out = (uint32_t)v;
	return p + 1;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static bool word_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* The declaration "TYPE NAME[N]" (n bytes) into fl's name and kind;
 * false when it cannot be read.  The size is checked by the caller. */
static bool read_decl(const char *d, size_t n, struct ktrace_field *fl)
{
	while (n && (d[n - 1] == ' ' || d[n - 1] == '\t'))
		n--;
	size_t name_end = n;
	bool array = false;
	if (n && d[n - 1] == ']') {
		const char *open = memrchr(d, '[', n);
		if (!open)
			return false;
		name_end = (size_t)(open - d);
		array = true;
	}
	size_t name_start = name_end;
	while (name_start && ident_char(d[name_start - 1]))
		name_start--;
	size_t name_len = name_end - name_start;
	/* a C identifier, after a type: the payload's key as it is */
	if (!name_len || name_len >= sizeof(fl->name) || !name_start ||
	    (d[name_start] >= '0' && d[name_start] <= '9'))
		return false;
	memcpy(fl->name, d + name_start, name_len);
	fl->name[name_len] = '\0';
	/* the type, without the blanks before the name */
	size_t type_len = name_start;
	while (type_len && (d[type_len - 1] == ' ' || d[type_len - 1] == '\t'))
		type_len--;
	if (!type_len)
		return false;
	static const char data_loc[] = "__data_loc ", rel_loc[] = "__rel_loc ";
	bool loc = false;
	if (type_len > strlen(data_loc) && memcmp(d, data_loc, strlen(data_loc)) == 0) {
		loc = true;
	} else if (type_len > strlen(rel_loc) && memcmp(d, rel_loc, strlen(rel_loc)) == 0) {
		loc = true;
		fl->rel = true;
	}
	if (loc) {
		const char *t = d + (fl->rel ? strlen(rel_loc) : strlen(data_loc));
		size_t tl = type_len - (size_t)(t - d);
		bool text = word_is(t, tl, "char[]") || word_is(t, tl, "const char[]");
		fl->kind = text ? (fl->rel ? KTRACE_REL_LOC : KTRACE_DATA_LOC) : KTRACE_LOC_BYTES;
		return fl->size == 4;
	}
	if (array) {
		bool text = word_is(d, type_len, "char") || word_is(d, type_len, "const char");
		fl->kind = text ? KTRACE_STR : KTRACE_BYTES;
		return true;
	}
	bool width = fl->size == 1 || fl->size == 2 || fl->size == 4 || fl->size == 8;
	fl->kind = width ? KTRACE_INT : KTRACE_BYTES;
	return true;
}

/* One "field:" line, p after its "field:"; 1 when a field of the
 * tracepoint's own, 0 for a common_ one, -EINVAL. */
static int read_field(const char *p, const char *end, struct ktrace_field *fl)
{
	const char *semi = memchr(p, ';', (size_t)(end - p));
	if (!semi)
		return -EINVAL;
	const char *decl = p;
	size_t decl_len = (size_t)(semi - p);
	uint32_t is_signed;
	*fl = (struct ktrace_field){0};
	p = read_number(semi + 1, end, "offset:", &fl->offset);
	p = p ? read_number(p, end, "size:", &fl->size) : NULL;
	p = p ? read_number(p, end, "signed:", &is_signed) : NULL;
	if (!p || is_signed > 1 || !fl->size || fl->size > RECORD_MAX ||
	    fl->offset > RECORD_MAX - fl->size)
		return -EINVAL;
	fl->is_signed = is_signed;
	if (!read_decl(decl, decl_len, fl))
		return -EINVAL;
	return strncmp(fl->name, "common_", 7) == 0 ? 0 : 1;
}

int ktrace_format_parse(const char *text, size_t len, struct ktrace_format *f, const char **why)
{
	*f = (struct ktrace_format){0};
	if (len > KTRACE_FORMAT_MAX) {
		*why = "tracepoint format longer than 64 KiB";
		return -EINVAL;
	}
	bool have_id = false;
	const char *end = text + len;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *eol = nl ? nl : end;
		const char *p = skip_blanks(line, eol);
		if ((size_t)(eol - p) >= 3 && memcmp(p, "ID:", 3) == 0) {
			int64_t id;
			char num[24];
			const char *q = skip_blanks(p + 3, eol);
			size_t n = (size_t)(eol - q);
			if (n == 0 || n >= sizeof(num))
				goto bad_id;
			memcpy(num, q, n);
			num[n] = '\0';
			if (parse_int64(num, &id) < 0 || id < 0 || id > UINT32_MAX)
				goto bad_id;
			f->id = (uint32_t)id;
			have_id = true;
		} else if ((size_t)(eol - p) >= 6 && memcmp(p, "field:", 6) == 0) {
			struct ktrace_field fl;
			int rc = read_field(p + 6, eol, &fl);
			if (rc < 0) {
				*why = "tracepoint format has a field line it cannot read";
				return -EINVAL;
			}
			if (rc > 0) {
				if (f->n_fields == KTRACE_MAX_FIELDS) {
					*why = "tracepoint has more than 64 fields";
					return -EINVAL;
				}
				f->fields[f->n_fields++] = fl;
			}
		}
		line = nl ? nl + 1 : end;
	}
	if (!have_id) {
		*why = "tracepoint format has no ID";
		return -EINVAL;
	}
	return 0;
bad_id:
	*why = "tracepoint format has an ID that is not a number";
	return -EINVAL;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

int ktrace_record_parse(const void *buf, size_t len, struct ktrace_record *r, const char **why)
{
	const uint8_t *b = buf;
	struct perf_event_header h;
	*r = (struct ktrace_record){.kind = KTRACE_REC_OTHER};
	if (len < sizeof(h)) {
		*why = "perf record shorter than its header";
		return -EBADMSG;
	}
	memcpy(&h, b, sizeof(h));
	if (h.size < sizeof(h) || h.size > len) {
		*why = "perf record with a wrong size";
		return -EBADMSG;
	}
	size_t n = h.size - sizeof(h);
	b += sizeof(h);
	if (h.type == PERF_RECORD_LOST) {
		if (n < 16)
			goto short_rec;
		r->kind = KTRACE_REC_LOST;
		r->lost = get_u64(b + 8);
		return 0;
	}
	if (h.type != PERF_RECORD_SAMPLE)
		return 0;
	/* PERF_SAMPLE_TID, TIME, CPU, RAW, in the kernel's order */
	if (n < 28)
		goto short_rec;
	r->pid = get_u32(b);
	r->tid = get_u32(b + 4);
	r->time = get_u64(b + 8);
	r->cpu = get_u32(b + 16);
	r->raw_size = get_u32(b + 24);
	if (r->raw_size > n - 28)
		goto short_rec;
	r->raw = b + 28;
	r->kind = KTRACE_REC_SAMPLE;
	return 0;
short_rec:
	*r = (struct ktrace_record){.kind = KTRACE_REC_OTHER};
	*why = "perf record shorter than its contents";
	return -EBADMSG;
}

static void put_hex(struct strbuf *sb, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		strbuf_putc(sb, digits[p[i] >> 4]);
		strbuf_putc(sb, digits[p[i] & 15]);
	}
}

static void put_text(struct strbuf *sb, const uint8_t *p, size_t n)
{
	const uint8_t *nul = memchr(p, '\0', n);
	strbuf_add_name(sb, (const char *)p, nul ? (size_t)(nul - p) : n, false);
}

static void put_int(struct strbuf *sb, const struct ktrace_field *fl, const uint8_t *p)
{
	uint64_t u = 0;
	int64_t s = 0;
	switch (fl->size) {
	case 1: {
		uint8_t v = p[0];
		u = v;
		s = (int8_t)v;
		break;
	}
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		u = v;
		s = (int16_t)v;
		break;
	}
	case 4: {
		uint32_t v = get_u32(p);
		u = v;
		s = (int32_t)v;
		break;
	}
	default:
		u = get_u64(p);
		s = (int64_t)u;
		break;
	}
	if (fl->is_signed)
		strbuf_printf(sb, "%" PRId64, s);
	else
		strbuf_printf(sb, "%" PRIu64, u);
}

/* Appends field fl of raw's record as its value; -EINVAL when the record
 * does not hold it. */
static int put_field(struct strbuf *sb, const struct ktrace_field *fl, const uint8_t *raw,
		     uint32_t raw_size)
{
	if (fl->offset > raw_size || fl->size > raw_size - fl->offset)
		return -EINVAL;
	const uint8_t *p = raw + fl->offset;
	switch (fl->kind) {
	case KTRACE_INT:
		put_int(sb, fl, p);
		return 0;
	case KTRACE_STR:
		put_text(sb, p, fl->size);
		return 0;
	case KTRACE_BYTES:
		put_hex(sb, p, fl->size);
		return 0;
	case KTRACE_DATA_LOC:
	case KTRACE_REL_LOC:
	case KTRACE_LOC_BYTES: {
		uint32_t loc = get_u32(p);
		uint64_t off = loc & 0xffff, len = loc >> 16;
		if (fl->rel)
			off += (uint64_t)fl->offset + fl->size;
		if (off > raw_size || len > raw_size - off)
			return -EINVAL;
		if (fl->kind == KTRACE_LOC_BYTES)
			put_hex(sb, raw + off, len);
		else
			put_text(sb, raw + off, len);
		return 0;
	}
	}
	return -EINVAL;
}

int ktrace_event(const struct ktrace_format *f, const struct ktrace_name *n,
		 const struct ktrace_record *r, uint64_t seqnum, struct kevent **ev,
		 bool *truncated, const char **why)
{
	_cleanup_strbuf_ struct strbuf payload = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf object = STRBUF_INIT;
	*ev = NULL;
	*truncated = false;
	if (r->kind != KTRACE_REC_SAMPLE || !r->raw) {
		*why = "perf record is not a sample";
		return -EINVAL;
	}
	for (size_t i = 0; i < f->n_fields; i++) {
		const struct ktrace_field *fl = &f->fields[i];
		strbuf_reset(&line);
		strbuf_printf(&line, "%s: ", fl->name);
		if (put_field(&line, fl, r->raw, r->raw_size) < 0) {
			*why = "trace record shorter than its tracepoint's format";
			return -EINVAL;
		}
		strbuf_putc(&line, '\n');
		if (*truncated || payload.len + line.len > KEVENT_PAYLOAD_MAX - TRAILER_MAX) {
			*truncated = true; /* the line does not fit: left out whole */
			continue;
		}
		strbuf_add(&payload, strbuf_str(&line), line.len);
	}
	/* the task by its pid alone: its name is not in the sample, and
	 * /proc/PID read now may be another task's, the pid used again */
	strbuf_printf(&payload, "Cpu: %" PRIu32 "\nTask-Pid: %" PRIu32 "\n", r->cpu, r->tid);
	strbuf_printf(&object, KTRACE_OBJECT_PREFIX "%s", n->system);
	if (payload.oom || line.oom || object.oom)
		return -ENOMEM;
	return kevent_new(n->type, strbuf_str(&object), n->event, strbuf_str(&payload),
			  KEVENT_SOURCE_TRACE, seqnum, r->time, NULL, 0, ev, why);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The condition table's file: encode and decode (file.h). */
#include "file.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hashmap.h"

#define ROW_FIELDS 20

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}
#define FNV_START 14695981039346656037ull

static void put_text(struct strbuf *sb, const char *s)
{
	strbuf_putc(sb, '\t');
	if (s)
		strbuf_add_name(sb, s, strlen(s), false);
}

static void put_num(struct strbuf *sb, uint64_t v)
{
	strbuf_printf(sb, "\t%" PRIu64, v);
}

int kcond_file_encode(const struct kcond_table *t, const struct kcond_marks *m, struct strbuf *out)
{
	strbuf_reset(out);
	strbuf_printf(out, "keventd-conditions %d\nseq %" PRIu64 "\n", KCOND_FILE_VERSION, m->seq);
	if (m->boot[0])
		strbuf_printf(out, "mark socket %s %" PRIu64 "\n", m->boot, m->socket_seq);
	if (m->kernel_instance)
		strbuf_printf(out, "mark kernel %" PRIu64 " %" PRIu64 "\n", m->kernel_instance,
			      m->kernel_seq);
	for (size_t i = 0; i < t->n; i++) {
		const struct kcond_row *r = t->v[i];
		strbuf_puts(out, "row");
		put_text(out, r->name);
		put_text(out, r->key);
		put_text(out, r->object);
		put_text(out, kevent_type_name(r->type));
		put_text(out, kevent_source_name(r->source));
		put_text(out, kcond_severity_name(r->severity));
		put_num(out, r->since);
		put_num(out, r->count);
		put_num(out, r->last_time);
		put_num(out, r->last_seqnum);
		put_text(out, r->last_signal);
		put_text(out, r->last_payload);
		put_num(out, r->acked_at);
		put_text(out, r->acked_by);
		put_text(out, r->note);
		put_num(out, r->next_remind);
		put_num(out, r->reminds);
		put_num(out, r->cleared);
		put_text(out, r->reason);
		put_num(out, r->confirmed);
		strbuf_putc(out, '\n');
	}
	if (out->oom)
		return -ENOMEM;
	strbuf_printf(out, "end %zu %016" PRIx64 "\n", t->n, fnv(FNV_START, out->buf, out->len));
	return out->oom ? -ENOMEM : 0;
}

static int num(const char *s, size_t n, uint64_t *out)
{
	char buf[24];
	uint64_t v = 0;
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* A text field: NULL for an empty one when empty_null (the optional
 * texts), else "". */
static int text(const char *s, size_t n, bool empty_null, char **out)
{
	size_t len;
	*out = NULL;
	if (n == 0 && empty_null)
		return 0;
	int rc = str_unescape(s, n, out, &len);
	if (rc == 0 && strlen(*out) != len) { /* a NUL inside */
		free(TAKE_PTR(*out));
		return -EINVAL;
	}
	return rc;
}

/* Whether the line p (n bytes) is the one fmt writes: sscanf() takes
 * more (blanks, signs, leading zeros, upper-case hex) than the encoder
 * writes, and a table read must write back the same bytes. */
__attribute__((format(printf, 3, 4))) static bool as_written(const char *p, size_t n,
							     const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return len >= 0 && (size_t)len == n && memcmp(buf, p, n) == 0;
}

struct field {
	const char *s;
	size_t n;
};

static int parse_row(const struct field *f, struct kcond_row *r, const char **why)
{
	uint64_t v[ROW_FIELDS] = {0};
	static const int nums[] = {6, 7, 8, 9, 12, 15, 16, 17, 19};
	for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
		if (num(f[nums[i]].s, f[nums[i]].n, &v[nums[i]]) < 0) {
			*why = "a number field is not a number";
			return -EINVAL;
		}
	char *type = NULL, *source = NULL, *sev = NULL;
	int rc = 0;
	if ((rc = text(f[0].s, f[0].n, false, &r->name)) < 0 ||
	    (rc = text(f[1].s, f[1].n, false, &r->key)) < 0 ||
	    (rc = text(f[2].s, f[2].n, false, &r->object)) < 0 ||
	    (rc = text(f[3].s, f[3].n, false, &type)) < 0 ||
	    (rc = text(f[4].s, f[4].n, false, &source)) < 0 ||
	    (rc = text(f[5].s, f[5].n, false, &sev)) < 0 ||
	    (rc = text(f[10].s, f[10].n, true, &r->last_signal)) < 0 ||
	    (rc = text(f[11].s, f[11].n, false, &r->last_payload)) < 0 ||
	    (rc = text(f[13].s, f[13].n, true, &r->acked_by)) < 0 ||
	    (rc = text(f[14].s, f[14].n, true, &r->note)) < 0 ||
	    (rc = text(f[18].s, f[18].n, true, &r->reason)) < 0) {
		*why = "a text field is not as keventd writes it";
		goto out;
	}
	int t = kevent_type_from_name(type), s = kevent_source_from_name(source);
	int sv = kcond_severity_from_name(sev);
	rc = -EINVAL;
	if (t < 0 || s < 0 || sv < 0) {
		*why = "an unknown type, source or severity";
		goto out;
	}
	if (!r->name[0] || !r->key[0] || v[19] > 1 || v[16] > UINT32_MAX) {
		*why = "a row without a name or a key, or with a field out of range";
		goto out;
	}
	r->type = (uint8_t)t;
	r->source = (uint8_t)s;
	r->severity = (uint8_t)sv;
	r->since = v[6];
	r->count = v[7];
	r->last_time = v[8];
	r->last_seqnum = v[9];
	r->acked_at = v[12];
	r->next_remind = v[15];
	r->reminds = (uint32_t)v[16];
	r->cleared = v[17];
	r->confirmed = v[19];
	rc = 0;
out:
	free(type);
	free(source);
	free(sev);
	return rc;
}

/* Splits line (n bytes) at tabs into at most max fields; the count. */
static size_t split(const char *line, size_t n, struct field *f, size_t max)
{
	size_t k = 0;
	const char *p = line, *end = line + n;
	for (;;) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		if (k == max)
			return max + 1;
		f[k++] = (struct field){p, (size_t)((tab ? tab : end) - p)};
		if (!tab)
			return k;
		p = tab + 1;
	}
}

int kcond_file_decode(const char *buf, size_t len, struct kcond_table *t, struct kcond_marks *m,
		      unsigned *line, const char **why)
{
	*m = (struct kcond_marks){0};
	*line = 0;
	*why = NULL;
	const char *p = buf, *end = buf + len;
	size_t rows = 0;
	int rc = -EINVAL;
	bool ended = false;
	for (unsigned no = 1; p < end && !ended; no++) {
		*line = no;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			*why = "the last line is cut short";
			goto bad;
		}
		size_t n = (size_t)(nl - p);
		struct field f[ROW_FIELDS];
		char word[16] = "", l[128];
		int used = -1;
		if (memchr(p, '\0', n)) {
			*why = "a NUL byte";
			goto bad;
		}
		/* the short lines, as a string of their own */
		bool is_row = n > 3 && memcmp(p, "row\t", 4) == 0;
		if (!is_row && n >= sizeof(l)) {
			*why = "an unknown line";
			goto bad;
		}
		if (!is_row) {
			memcpy(l, p, n);
			l[n] = '\0';
			sscanf(l, "%15s", word);
		}
		if (no == 1) {
			unsigned version = 0;
			if (sscanf(l, "keventd-conditions %u%n", &version, &used) != 1 ||
			    (size_t)used != n || version != KCOND_FILE_VERSION) {
				*why = "not a condition table of this keventd (keventd-conditions "
				       "1)";
				goto bad;
			}
		} else if (strcmp(word, "seq") == 0) {
			if (n < 4 || num(p + 4, n - 4, &m->seq) < 0) {
				*why = "a bad seq line";
				goto bad;
			}
		} else if (strcmp(word, "mark") == 0) {
			char what[8], id[40];
			uint64_t a = 0, b = 0;
			if (sscanf(l, "mark %7s %39s %" SCNu64 "%n", what, id, &b, &used) != 3 ||
			    (size_t)used != n) {
				*why = "a bad mark line";
				goto bad;
			}
			if (strcmp(what, "socket") == 0 &&
			    as_written(p, n, "mark socket %s %" PRIu64, id, b)) {
				snprintf(m->boot, sizeof(m->boot), "%s", id);
				m->socket_seq = b;
			} else if (strcmp(what, "kernel") == 0 && num(id, strlen(id), &a) == 0 &&
				   as_written(p, n, "mark kernel %" PRIu64 " %" PRIu64, a, b)) {
				m->kernel_instance = a;
				m->kernel_seq = b;
			} else {
				*why = "a bad mark line";
				goto bad;
			}
		} else if (is_row) {
			if (split(p + 4, n - 4, f, ROW_FIELDS) != ROW_FIELDS) {
				*why = "a row without its 20 fields";
				goto bad;
			}
			struct kcond_row *r = calloc(1, sizeof(*r));
			if (!r) {
				rc = -ENOMEM;
				goto bad;
			}
			rc = parse_row(f, r, why);
			if (rc < 0) {
				kcond_row_free(r);
				goto bad;
			}
			rc = kcond_table_put(t, r);
			if (rc == -EEXIST) {
				*why = "a row given twice";
				rc = -EINVAL; /* damaged, as any other bad line */
			}
			if (rc < 0)
				goto bad;
			rc = -EINVAL;
			rows++;
		} else if (strcmp(word, "end") == 0) {
			size_t count = 0;
			uint64_t sum = 0;
			if (sscanf(l, "end %zu %16" SCNx64 "%n", &count, &sum, &used) != 2 ||
			    (size_t)used != n || count != rows ||
			    !as_written(p, n, "end %zu %016" PRIx64, count, sum)) {
				*why = "the end line does not count the rows";
				goto bad;
			}
			if (sum != fnv(FNV_START, buf, (size_t)(p - buf))) {
				*why = "the sum does not match: the file was changed or damaged";
				goto bad;
			}
			ended = true;
		} else {
			*why = "an unknown line";
			goto bad;
		}
		p = nl + 1;
	}
	if (!ended || p != end) {
		*why = ended ? "more after the end line" : "no end line: the file is cut short";
		*line = 0;
		goto bad;
	}
	t->dirty = false;
	return 0;
bad:
	/* never half a table */
	for (size_t i = 0; i < t->n; i++)
		kcond_row_free(t->v[i]);
	t->n = t->holding = 0;
	hashmap_free(t->rows, NULL);
	t->rows = NULL;
	if (hashmap_new(&t->rows) < 0)
		return -ENOMEM;
	return rc;
}

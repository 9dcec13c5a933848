// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One record of /dev/kmsg (kmsg.h), as the kernel's
 * Documentation/ABI/testing/dev-kmsg describes it: a header of comma
 * separated fields up to ';', the message up to a newline, then the
 * record's dictionary, one " KEY=VALUE" line each.  The kernel escapes
 * every byte below a space, from 127 up, and the backslash as \xNN, so a
 * record is one line of printable text plus its key lines.  Read
 * strictly: a record that is not this shape is refused as a whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kmsg.h"

static const char *const level_names[KKMSG_LEVELS] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

const char *kkmsg_level_name(unsigned level)
{
	return level < KKMSG_LEVELS ? level_names[level] : NULL;
}

int kkmsg_level_from_name(const char *s)
{
	if (s[0] >= '0' && s[0] <= '7' && !s[1])
		return s[0] - '0';
	for (int i = 0; i < KKMSG_LEVELS; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	/* the other names syslog(3) and the kernel know */
	if (strcmp(s, "panic") == 0)
		return 0;
	if (strcmp(s, "error") == 0)
		return 3;
	if (strcmp(s, "warn") == 0)
		return 4;
	return -1;
}

struct cursor {
	const char *p, *end;
};

/* A decimal number of at most max, ending at one of stops. */
static bool number(struct cursor *c, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	const char *start = c->p;
	for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
		unsigned d = (unsigned)(*c->p - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return c->p > start;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The n bytes at s with the kernel's \xNN undone, NUL-terminated, into
 * *out (*len without the NUL).  A backslash not followed by two hex
 * digits stands for itself.  -EINVAL: it would hold a NUL. */
static int unescape(const char *s, size_t n, char **out, size_t *len)
{
	char *d = malloc(n + 1);
	if (!d)
		return -ENOMEM;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && (hi = hexval(s[i + 2])) >= 0 &&
		    (lo = hexval(s[i + 3])) >= 0) {
			d[j++] = (char)(hi << 4 | lo);
			i += 3;
		} else {
			d[j++] = s[i];
		}
		if (!d[j - 1]) {
			free(d);
			return -EINVAL;
		}
	}
	d[j] = '\0';
	*out = d;
	if (len)
		*len = j;
	return 0;
}

void kkmsg_rec_release(struct kkmsg_rec *rec)
{
	free(rec->text);
	free(rec->subsystem);
	free(rec->device);
	*rec = (struct kkmsg_rec){0};
}

/* The record's key line "KEY=VALUE" (its leading space gone), n bytes. */
static int key_line(struct kkmsg_rec *r, const char *s, size_t n, const char **why)
{
	const char *eq = memchr(s, '=', n);
	if (!eq || eq == s) {
		*why = "a key line without KEY=";
		return -EINVAL;
	}
	size_t klen = (size_t)(eq - s);
	char **slot = NULL;
	if (klen == 9 && memcmp(s, "SUBSYSTEM", 9) == 0)
		slot = &r->subsystem;
	else if (klen == 6 && memcmp(s, "DEVICE", 6) == 0)
		slot = &r->device;
	else
		return 0; /* a key keventd does not use */
	if (*slot) {
		*why = "a key given twice";
		return -EINVAL;
	}
	if (n - klen - 1 > KKMSG_KEY_MAX * 4)
		return 0; /* longer than the kernel makes them: not believed */
	size_t len;
	int rc = unescape(eq + 1, n - klen - 1, slot, &len);
	if (rc == -EINVAL)
		*why = "a NUL in a key's value";
	if (rc == 0 && len > KKMSG_KEY_MAX) {
		free(*slot);
		*slot = NULL;
	}
	return rc;
}

/* Refuses the record: its number is kept when it was read. */
static int refuse(struct kkmsg_rec *rec, struct kkmsg_rec *r, bool numbered, const char **why,
		  const char *what)
{
	uint64_t seq = r->seq;
	kkmsg_rec_release(r);
	*rec = (struct kkmsg_rec){.seq = seq, .last_seq = seq, .numbered = numbered};
	*why = what;
	return -EINVAL;
}

int kkmsg_parse(const char *buf, size_t len, struct kkmsg_rec *rec, const char **why)
{
	*rec = (struct kkmsg_rec){0};
	struct kkmsg_rec r = {0};
	static const char bad_header[] = "not a kmsg record header (PRIORITY,SEQUENCE,TIME,FLAG;)";
	if (len > KKMSG_RECORD_MAX)
		return refuse(rec, &r, false, why, "record too long");
	struct cursor c = {buf, buf + len};
	uint64_t pri;
	if (!number(&c, UINT32_MAX, &pri) || c.p == c.end || *c.p++ != ',' ||
	    !number(&c, UINT64_MAX, &r.seq))
		return refuse(rec, &r, false, why, bad_header);
	if (c.p == c.end || *c.p++ != ',' || !number(&c, UINT64_MAX, &r.usec) || c.p == c.end ||
	    *c.p++ != ',' || c.p == c.end)
		return refuse(rec, &r, true, why, bad_header);
	r.level = (unsigned)(pri & 7);
	r.facility = (unsigned)(pri >> 3);
	r.flag = *c.p++;
	if (r.flag != '-' && r.flag != 'c' && r.flag != '+')
		return refuse(rec, &r, true, why, "unknown record flag");
	/* fields a later kernel adds (",caller=T42") are passed over */
	if (c.p < c.end && *c.p == ',')
		while (c.p < c.end && *c.p != ';' && *c.p != '\n')
			c.p++;
	if (c.p == c.end || *c.p++ != ';')
		return refuse(rec, &r, true, why, "no ';' after the record header");
	const char *text = c.p;
	const char *nl = memchr(text, '\n', (size_t)(c.end - text));
	const char *text_end = nl ? nl : c.end;
	int rc = unescape(text, (size_t)(text_end - text), &r.text, &r.text_len);
	if (rc == -ENOMEM) {
		*why = "out of memory";
		return rc;
	}
	if (rc < 0)
		return refuse(rec, &r, true, why, "a NUL in the message");
	c.p = nl ? nl + 1 : c.end;
	while (c.p < c.end) {
		if (*c.p != ' ')
			return refuse(rec, &r, true, why,
				      "a line after the message that is not a key line");
		c.p++;
		const char *e = memchr(c.p, '\n', (size_t)(c.end - c.p));
		if (!e)
			e = c.end;
		rc = key_line(&r, c.p, (size_t)(e - c.p), why);
		if (rc == -ENOMEM) {
			kkmsg_rec_release(&r);
			*why = "out of memory";
			return rc;
		}
		if (rc < 0)
			return refuse(rec, &r, true, why, *why);
		c.p = e < c.end ? e + 1 : e;
	}
	r.last_seq = r.seq;
	r.numbered = true;
	*rec = r;
	return 0;
}

int kkmsg_rec_join(struct kkmsg_rec *rec, const struct kkmsg_rec *piece)
{
	if (rec->text_len + piece->text_len > KKMSG_RECORD_MAX)
		return -E2BIG;
	char *t = realloc(rec->text, rec->text_len + piece->text_len + 1);
	if (!t)
		return -ENOMEM;
	memcpy(t + rec->text_len, piece->text, piece->text_len + 1);
	rec->text = t;
	rec->text_len += piece->text_len;
	if (!rec->subsystem && piece->subsystem && !(rec->subsystem = strdup(piece->subsystem)))
		return -ENOMEM;
	if (!rec->device && piece->device && !(rec->device = strdup(piece->device)))
		return -ENOMEM;
	rec->last_seq = piece->last_seq;
	return 0;
}

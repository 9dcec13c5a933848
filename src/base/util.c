// SPDX-License-Identifier: GPL-2.0-or-later
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->oom)
		return false;
	if (sb->len + extra + 1 <= sb->cap)
		return true;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	char *p = realloc(sb->buf, cap);
	if (!p) {
		sb->oom = true;
		return false;
	}
	sb->buf = p;
	sb->cap = cap;
	return true;
}

void strbuf_add(struct strbuf *sb, const char *s, size_t n)
{
	if (!strbuf_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_putc(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_put_u64(struct strbuf *sb, uint64_t v)
{
	char buf[20], *p = buf + sizeof(buf);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_add(sb, p, (size_t)(buf + sizeof(buf) - p));
}

void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || !strbuf_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

static void strbuf_escaped(struct strbuf *sb, const char *s, bool json)
{
	strbuf_putc(sb, '"');
	/* the bytes that need no escape go in runs, one copy each */
	const unsigned char *p = (const unsigned char *)s, *run = p;
	for (; *p; p++) {
		const char *esc;
		switch (*p) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\r':
			esc = "\\r";
			break;
		default:
			if (*p >= 0x20 && *p != 0x7f && (json || *p < 0x80))
				continue;
			esc = NULL;
		}
		strbuf_add(sb, (const char *)run, (size_t)(p - run));
		if (esc)
			strbuf_puts(sb, esc);
		else
			strbuf_printf(sb, json ? "\\u%04x" : "\\x%02x", *p);
		run = p + 1;
	}
	strbuf_add(sb, (const char *)run, (size_t)(p - run));
	strbuf_putc(sb, '"');
}

void strbuf_quote(struct strbuf *sb, const char *s)
{
	strbuf_escaped(sb, s, false);
}

void strbuf_json(struct strbuf *sb, const char *s)
{
	strbuf_escaped(sb, s, true);
}

/* The length of the UTF-8 character at s (of n bytes), 0 if s does not
 * start one: a stray continuation byte, an overlong form, a surrogate, a
 * code point past U+10FFFF, or a sequence cut short. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	/* the lead byte's length, the value bits it holds, the least value
	 * that needs this length */
	size_t len = s[0] < 0x80 ? 1 : s[0] < 0xc0 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	uint32_t cp = s[0] & (0x7fu >> len), min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
	if (len == 1)
		return 1;
	if (!len || s[0] >= 0xf8 || n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t n = strlen(s), len; n; p += len, n -= len)
		if (!(len = utf8_len(p, n)))
			return false;
	return true;
}

char *utf8_sanitize(const char *s)
{
	if (utf8_valid(s))
		return strdup(s);
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p = (const unsigned char *)s;
	for (size_t n = strlen(s), len; n; p += len, n -= len) {
		len = utf8_len(p, n);
		if (len)
			strbuf_add(&sb, (const char *)p, len);
		else {
			strbuf_printf(&sb, "\\x%02x", p[0]);
			len = 1;
		}
	}
	if (sb.oom) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_steal(&sb);
}

char **strv_utf8_sanitize(char *const *v)
{
	size_t n = strv_length(v);
	char **d = calloc(n + 1, sizeof(*d));
	for (size_t i = 0; d && i < n; i++)
		if (!(d[i] = utf8_sanitize(v[i]))) {
			strv_free(d);
			return NULL;
		}
	return d;
}

uint64_t kinstance_id(void)
{
	static uint64_t id;
	while (!id) {
		uint64_t v = 0;
		if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
			v = now_realtime_ns() ^ ((uint64_t)getpid() << 32) ^ now_monotonic_ns();
		id = v;
	}
	return id;
}

/* How many bytes at s (of n) are one character shown as it is; 0 when
 * s[0] is to be escaped (strbuf_add_escaped()). */
static size_t shown_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x20 || s[0] == 0x7f)
		return 0;
	size_t len = utf8_len(s, n);
	if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0; /* a C1 control, U+0080..U+009F: 0x9b is a terminal's CSI */
	return len;
}

/* The n bytes at s, shown as they are where shown_len() allows (and, with
 * backslash, a \ doubled; with ascii, nothing past 0x7f), the rest as
 * \n, \t or \xHH: strbuf_add_escaped()'s and strbuf_add_name()'s. */
static void add_shown(struct strbuf *sb, const char *s, size_t n, bool backslash, bool ascii)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		const unsigned char *run = p;
		for (size_t len; p < end && !(backslash && *p == '\\') && (!ascii || *p < 0x80) &&
				 (len = shown_len(p, (size_t)(end - p)));
		     p += len)
			;
		strbuf_add(sb, (const char *)run, (size_t)(p - run));
		if (p == end)
			break;
		if (*p == '\\')
			strbuf_puts(sb, "\\\\");
		else if (*p == '\n')
			strbuf_puts(sb, "\\n");
		else if (*p == '\t')
			strbuf_puts(sb, "\\t");
		else
			strbuf_printf(sb, "\\x%02x", *p);
		p++;
	}
}

void strbuf_add_escaped(struct strbuf *sb, const char *s, size_t n)
{
	add_shown(sb, s, n, false, false);
}

void strbuf_put_escaped(struct strbuf *sb, const char *s)
{
	strbuf_add_escaped(sb, s, strlen(s));
}

void strbuf_put_time(struct strbuf *sb, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char buf[32];
	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm))
		strcpy(buf, "?");
	strbuf_printf(sb, "%s.%03uZ", buf, (unsigned)(ns / 1000000ull % 1000));
}

void strbuf_add_name(struct strbuf *sb, const char *s, size_t n, bool ascii)
{
	add_shown(sb, s, n, true, ascii);
}

size_t escaped_cut(const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t at = 0;
	if (n <= max)
		return n;
	while (at < n) {
		size_t len = p[at] != '\\'		      ? utf8_len(p + at, n - at)
			     : at + 1 < n && p[at + 1] == 'x' ? 4
							      : 2;
		if (!len)
			len = 1;
		if (at + len > max)
			break;
		at += len;
	}
	return at;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int str_unescape(const char *s, size_t n, char **out, size_t *len)
{
	_cleanup_free_ char *buf = malloc(n + 1);
	size_t o = 0;
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			buf[o++] = s[i];
			continue;
		}
		if (i + 1 == n)
			return -EINVAL;
		char e = s[++i];
		if (e == '\\' || e == 'n' || e == 't') {
			buf[o++] = e == 'n' ? '\n' : e == 't' ? '\t' : '\\';
			continue;
		}
		int hi = i + 2 < n ? hex_digit(s[i + 1]) : -1,
		    lo = hi >= 0 ? hex_digit(s[i + 2]) : -1;
		if (e != 'x' || lo < 0)
			return -EINVAL;
		buf[o++] = (char)(hi * 16 + lo);
		i += 2;
	}
	buf[o] = '\0';
	*len = o;
	*out = TAKE_PTR(buf);
	return 0;
}

bool str_has_control(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t len; n; p += len, n -= len)
		if (!(len = shown_len(p, n)))
			return true;
	return false;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

char *strbuf_steal(struct strbuf *sb)
{
	char *s = sb->oom ? NULL : sb->buf;
	if (sb->oom)
		free(sb->buf);
	else if (!s)
		s = strdup("");
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
	return s;
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
}

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

size_t strv_length(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

bool str_has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int read_fd(int fd, size_t max, char **out, size_t *out_len)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[8192];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int r = -errno;
			strbuf_release(&sb);
			return r;
		}
		if (n == 0)
			break;
		if (sb.len + (size_t)n > max) {
			strbuf_release(&sb);
			return -EFBIG;
		}
		strbuf_add(&sb, chunk, (size_t)n);
	}
	if (sb.oom) {
		strbuf_release(&sb);
		return -ENOMEM;
	}
	*out_len = sb.len;
	*out = strbuf_steal(&sb);
	return *out ? 0 : -ENOMEM;
}

int reread_fd(int fd, size_t max, char **out, size_t *out_len)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	return read_fd(fd, max, out, out_len);
}

int read_file(const char *path, size_t max, char **out, size_t *out_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return read_fd(fd, max, out, out_len);
}

bool str_is_name(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (!n || n > max)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return false;
	return true;
}

bool str_is_token(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

bool parse_digits(const char *s, size_t n, unsigned *out)
{
	unsigned long v = 0;
	if (!n || n > 9)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = (unsigned)v;
	return true;
}

int parse_int64(const char *s, int64_t *out)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return -EINVAL;
	const char *digits = s + (*s == '-' || *s == '+');
	if (!isdigit((unsigned char)*digits))
		return -EINVAL;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

char *path_absolute(const char *dir)
{
	char *abs = NULL;
	if (dir[0] == '/') {
		abs = strdup(dir);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return NULL;
		if (asprintf(&abs, "%s/%s", cwd, dir) < 0)
			abs = NULL;
	}
	if (!abs)
		return NULL;
	size_t l = strlen(abs);
	while (l > 1 && abs[l - 1] == '/')
		abs[--l] = '\0';
	return abs;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t now_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

bool env_name_valid(const char *name, size_t len)
{
	if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

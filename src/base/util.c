// SPDX-License-Identifier: GPL-2.0-or-later
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			strbuf_puts(sb, "\\\"");
			break;
		case '\\':
			strbuf_puts(sb, "\\\\");
			break;
		case '\n':
			strbuf_puts(sb, "\\n");
			break;
		case '\t':
			strbuf_puts(sb, "\\t");
			break;
		case '\r':
			strbuf_puts(sb, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f || (!json && *p >= 0x80))
				strbuf_printf(sb, json ? "\\u%04x" : "\\x%02x", *p);
			else
				strbuf_putc(sb, (char)*p);
		}
	}
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

int read_file(const char *path, size_t max, char **out, size_t *out_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return read_fd(fd, max, out, out_len);
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

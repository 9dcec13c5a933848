/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by libkevent: cleanup attributes, growable strings. */
#ifndef KEVENT_UTIL_H
#define KEVENT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A macro's value as a string literal: STRINGIFY(KEVENT_SIGNAL_MAX) is "64". */
#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

/* The structure of type that holds ptr as its member. */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define _cleanup_(f)	__attribute__((cleanup(f)))
#define _cleanup_free_	_cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _printf_(a, b)	__attribute__((format(printf, a, b)))
#define _unused_	__attribute__((unused))

/* Take ownership of a pointer: returns it and sets the variable to NULL. */
#define TAKE_PTR(p)                     \
	({                              \
		__typeof__(p) _p = (p); \
		(p) = NULL;             \
		_p;                     \
	})

#define TAKE_FD(fd)             \
	({                      \
		int _fd = (fd); \
		(fd) = -1;      \
		_fd;            \
	})

/* A growable, always NUL-terminated string.  On allocation failure it
 * remembers the failure (oom) and further appends are ignored. */
struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;
};

#define STRBUF_INIT               \
	{                         \
		NULL, 0, 0, false \
	}

void strbuf_add(struct strbuf *sb, const char *s, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putc(struct strbuf *sb, char c);
/* v in decimal (as "%" PRIu64, without printf's cost). */
void strbuf_put_u64(struct strbuf *sb, uint64_t v);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap) _printf_(2, 0);
/* Appends s quoted as a C string literal ("a\nb"), escaping anything unprintable. */
void strbuf_quote(struct strbuf *sb, const char *s);
/* Appends s as a JSON string. */
void strbuf_json(struct strbuf *sb, const char *s);
/*
 * Text from outside (a rule file, an event, a client, a handler's output)
 * made safe to show on a terminal or in a line of the log: appends s (n
 * bytes) with every byte that a terminal or a line reader would act on
 * written as an escape: a newline as "\n", a tab as "\t", and as "\xHH"
 * each other control character (C0 and DEL), each byte of a C1 control
 * (U+0080..U+009F) and each byte that is not part of valid UTF-8.
 * Everything else, a backslash included, is kept as it is, so the result
 * reads as the text did and escaping it again changes nothing.
 */
void strbuf_add_escaped(struct strbuf *sb, const char *s, size_t n);
void strbuf_put_escaped(struct strbuf *sb, const char *s);
/* "2026-12-03T15:20:01.123Z": ns since the epoch, in UTC, to the
 * millisecond. */
void strbuf_put_time(struct strbuf *sb, uint64_t ns);
/*
 * A name from outside that becomes an event's object or payload text (a
 * mount point, a kmsg message, a trace string): appended as
 * strbuf_add_escaped() does, and a backslash as "\\", so that the
 * escaping is injective: two different names never give the same text,
 * and str_unescape() gives the name back.  ascii: every byte that is not
 * printable ASCII is escaped ("\xHH"), for an object.
 */
void strbuf_add_name(struct strbuf *sb, const char *s, size_t n, bool ascii);
/* The longest prefix of the first n bytes of text made by
 * strbuf_add_name() that is at most max bytes and cuts no escape and no
 * character in two. */
size_t escaped_cut(const char *s, size_t n, size_t max);
/* The name that strbuf_add_name() wrote as s (n bytes): *out (free(),
 * NUL-terminated) and its *len.  0, -EINVAL for text it cannot have
 * written, -ENOMEM. */
int str_unescape(const char *s, size_t n, char **out, size_t *len);
/* Whether s is valid UTF-8 (no overlong forms, surrogates or code points
 * past U+10FFFF). */
bool utf8_valid(const char *s);
/* A copy of s that D-Bus takes: valid UTF-8 as it is, each byte that is
 * not part of valid UTF-8 as the four characters "\xHH" (keventd.rules(5)).
 * NULL when out of memory; free(). */
char *utf8_sanitize(const char *s);
/* The same for each string of a NULL-terminated vector (strv_free()). */
char **strv_utf8_sanitize(char *const *v);
/* This keventd's instance: a random number drawn once per process, never
 * 0, that names what must not collide with an earlier or a later
 * keventd's (transient units). */
uint64_t kinstance_id(void);
/* Whether strbuf_put_escaped() would change s. */
bool str_has_control(const char *s);
void strbuf_reset(struct strbuf *sb);
/* Returns the string (never NULL unless out of memory) and empties sb. */
char *strbuf_steal(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
static inline const char *strbuf_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

static inline void strbuf_releasep(struct strbuf *sb)
{
	strbuf_release(sb);
}
#define _cleanup_strbuf_ _cleanup_(strbuf_releasep)

/* NULL-terminated string vectors. */
void strv_free(char **v);
size_t strv_length(char *const *v);
static inline void strv_freep(char ***v)
{
	strv_free(*v);
}
#define _cleanup_strv_	   _cleanup_(strv_freep)
#define strv_foreach(s, v) for (char *const *s = (v); s && *s; s++)

bool str_has_suffix(const char *s, const char *suffix);
/* Whether name[0..len) is a shell variable's name: [A-Za-z_][A-Za-z0-9_]*. */
bool env_name_valid(const char *name, size_t len);
/* Whether s is a name of 1 to max bytes of [A-Za-z0-9_.-] (a notification
 * target's, keventd.yaml(5)). */
bool str_is_name(const char *s, size_t max);
/* Whether s has no blank and no control byte (a URL, an address, a label). */
bool str_is_token(const char *s);
/* The n bytes at s as a decimal number of 1 to 9 digits (a mount table's
 * ids); false when they are not. */
bool parse_digits(const char *s, size_t n, unsigned *out);
/* Reads a whole file (at most max bytes; -EFBIG beyond).  Returns 0 or -errno. */
int read_file(const char *path, size_t max, char **out, size_t *out_len);
/* Reads a whole open fd, as read_file. */
int read_fd(int fd, size_t max, char **out, size_t *out_len);
/* Reads an open file again from its start (/proc's tables, which wake a
 * poller when they change), as read_fd. */
int reread_fd(int fd, size_t max, char **out, size_t *out_len);
/* Parses a decimal integer, whole string, optional sign and surrounding blanks. */
int parse_int64(const char *s, int64_t *out);
/* dir made absolute (against the working directory) without trailing
 * slashes; malloc'd, NULL on failure with errno set. */
char *path_absolute(const char *dir);
uint64_t now_realtime_ns(void);
uint64_t now_monotonic_ns(void);

#endif

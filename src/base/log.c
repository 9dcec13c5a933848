// SPDX-License-Identifier: GPL-2.0-or-later
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "config.h"
#if KEVENT_DBUS
#include <systemd/sd-journal.h>
#endif

static int max_level = LOG_INFO;
static bool to_journal;
static enum klog_format log_format = KLOG_TEXT;

static const char *const level_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

int klog_level_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
		if (strcmp(name, level_names[i]) == 0)
			return (int)i;
	if (strcmp(name, "error") == 0)
		return LOG_ERR;
	if (name[0] >= '0' && name[0] <= '7' && !name[1])
		return name[0] - '0';
	return -1;
}

void klog_setup(int level, enum klog_format format)
{
	max_level = level;
	log_format = format;
	to_journal = false;
	const char *e = getenv("JOURNAL_STREAM");
	struct stat st;
	unsigned long long dev, ino;
	if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0)
		to_journal = st.st_dev == dev && st.st_ino == ino;
}

bool klog_enabled(int level)
{
	return level <= max_level;
}

/* A text field value, quoted when a reader would otherwise split it. */
static void text_value(struct strbuf *o, const char *v)
{
	if (*v && !strpbrk(v, " \"=\\") && !str_has_control(v)) {
		strbuf_puts(o, v);
		return;
	}
	strbuf_putc(o, '"');
	for (const char *p = v, *q; *p; p = q) {
		q = p + strcspn(p, "\"\\");
		strbuf_add_escaped(o, p, (size_t)(q - p));
		if (*q) {
			strbuf_putc(o, '\\');
			strbuf_putc(o, *q++);
		}
	}
	strbuf_putc(o, '"');
}

static void put_fields(struct strbuf *line, const struct klog_field *f, size_t n, bool json)
{
	for (size_t i = 0; i < n; i++) {
		if (json)
			strbuf_printf(line, ",\"%s\":", f[i].key);
		else
			strbuf_printf(line, " %s=", f[i].key);
		switch (f[i].type) {
		case KLOG_F_STR:
			if (json)
				strbuf_json(line, f[i].s ? f[i].s : "");
			else
				text_value(line, f[i].s ? f[i].s : "");
			break;
		case KLOG_F_INT:
			strbuf_printf(line, "%" PRId64, f[i].i);
			break;
		case KLOG_F_UINT:
			strbuf_printf(line, "%" PRIu64, f[i].u);
			break;
		case KLOG_F_BOOL:
			strbuf_puts(line, f[i].b ? "true" : "false");
			break;
		}
	}
}

#if KEVENT_DBUS
/* A field's name in the journal: KEVENT_ and the key in capitals, but for
 * the two whose plain names would say something else there (keventd(8)). */
static void journal_name(struct strbuf *o, const char *key)
{
	if (strcmp(key, "seq") == 0)
		key = "seqnum";
	else if (strcmp(key, "signal") == 0)
		key = "exit_signal";
	strbuf_puts(o, "KEVENT_");
	for (const char *p = key; *p; p++)
		strbuf_putc(o, *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p);
}

/* One record through the journal's native protocol: MESSAGE, PRIORITY,
 * SYSLOG_IDENTIFIER and a KEVENT_* field for each of the record's, so that
 * "journalctl KEVENT_RULE=cpu-overheat" finds its runs.  0, or a negative
 * errno when the journal cannot be reached (the caller writes the line). */
static int journal_send(int level, const struct klog_field *f, size_t n, const struct strbuf *msg)
{
	struct strbuf all = STRBUF_INIT;
	size_t off[n + 3], len[n + 3];
	size_t k = 0;
	off[k] = all.len;
	strbuf_puts(&all, "MESSAGE=");
	strbuf_add_escaped(&all, strbuf_str(msg), msg->len);
	len[k] = all.len - off[k];
	k++;
	off[k] = all.len;
	strbuf_printf(&all, "PRIORITY=%d", level & 7);
	len[k] = all.len - off[k];
	k++;
	off[k] = all.len;
	strbuf_puts(&all, "SYSLOG_IDENTIFIER=keventd");
	len[k] = all.len - off[k];
	k++;
	for (size_t i = 0; i < n; i++, k++) {
		off[k] = all.len;
		journal_name(&all, f[i].key);
		strbuf_putc(&all, '=');
		switch (f[i].type) {
		case KLOG_F_STR:
			strbuf_puts(&all, f[i].s ? f[i].s : "");
			break;
		case KLOG_F_INT:
			strbuf_printf(&all, "%" PRId64, f[i].i);
			break;
		case KLOG_F_UINT:
			strbuf_printf(&all, "%" PRIu64, f[i].u);
			break;
		case KLOG_F_BOOL:
			strbuf_puts(&all, f[i].b ? "true" : "false");
			break;
		}
		len[k] = all.len - off[k];
	}
	int r = -ENOMEM;
	if (!all.oom) {
		struct iovec iov[n + 3];
		for (size_t i = 0; i < k; i++)
			iov[i] = (struct iovec){.iov_base = all.buf + off[i], .iov_len = len[i]};
		r = sd_journal_sendv(iov, (int)k);
	}
	strbuf_release(&all);
	return r;
}
#endif

static void emit(int level, const struct klog_field *fields, size_t n, const char *fmt, va_list ap)
	_printf_(4, 0);
static void emit(int level, const struct klog_field *fields, size_t n, const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT, line = STRBUF_INIT;
	strbuf_vprintf(&msg, fmt, ap);
	if (log_format == KLOG_JSON) {
		strbuf_printf(&line, "{\"level\":\"%s\",\"message\":", level_names[level & 7]);
		strbuf_json(&line, strbuf_str(&msg));
		put_fields(&line, fields, n, true);
		strbuf_puts(&line, "}\n");
	} else {
#if KEVENT_DBUS
		/* a record with fields: through the native protocol, whose
		 * fields journalctl can match */
		if (to_journal && n && journal_send(level, fields, n, &msg) == 0) {
			strbuf_release(&msg);
			return;
		}
#endif
		if (to_journal)
			strbuf_printf(&line, "<%d>", level & 7);
		else
			strbuf_printf(&line, "keventd: %s%s",
				      level <= LOG_WARNING ? level_names[level & 7] : "",
				      level <= LOG_WARNING ? ": " : "");
		strbuf_add_escaped(&line, strbuf_str(&msg), msg.len);
		put_fields(&line, fields, n, false);
		strbuf_putc(&line, '\n');
	}
	/* One write per line, so lines from several processes never interleave. */
	if (!line.oom) {
		ssize_t _unused_ w = write(STDERR_FILENO, line.buf, line.len);
	}
	strbuf_release(&msg);
	strbuf_release(&line);
}

void klog(int level, const char *fmt, ...)
{
	if (level > max_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(level, NULL, 0, fmt, ap);
	va_end(ap);
}

static void throttled(struct klog_throttle *t, uint64_t now, int level,
		      const struct klog_field *fields, size_t n, const char *fmt, va_list ap)
	_printf_(6, 0);
static void throttled(struct klog_throttle *t, uint64_t now, int level,
		      const struct klog_field *fields, size_t n, const char *fmt, va_list ap)
{
	if (level > max_level)
		return;
	if (!t->since_ns || now - t->since_ns >= KLOG_THROTTLE_WINDOW_NS) {
		if (t->unlogged)
			klog(level, "%s: %" PRIu64 " more %s were not logged", t->name, t->unlogged,
			     t->what);
		t->since_ns = now;
		t->logged = 0;
		t->unlogged = 0;
	}
	if (t->logged == KLOG_THROTTLE_BURST) {
		t->unlogged++;
		return;
	}
	emit(level, fields, n, fmt, ap);
	if (++t->logged == KLOG_THROTTLE_BURST)
		klog(level, "%s: %d %s in %llus: the next ones are %snot logged, for now", t->name,
		     KLOG_THROTTLE_BURST, t->what, KLOG_THROTTLE_WINDOW_NS / 1000000000ull,
		     t->counted ? "counted in status but " : "");
}

void klog_throttled(struct klog_throttle *t, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	throttled(t, now_monotonic_ns(), level, NULL, 0, fmt, ap);
	va_end(ap);
}

void klog_throttled_at(struct klog_throttle *t, uint64_t now_ns, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	throttled(t, now_ns, level, NULL, 0, fmt, ap);
	va_end(ap);
}

void klog_throttled_fields(struct klog_throttle *t, int level, const struct klog_field *fields,
			   size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	throttled(t, now_monotonic_ns(), level, fields, n, fmt, ap);
	va_end(ap);
}

void klog_fields(int level, const struct klog_field *fields, size_t n, const char *fmt, ...)
{
	if (level > max_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(level, fields, n, fmt, ap);
	va_end(ap);
}

// SPDX-License-Identifier: GPL-2.0-or-later
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

void klog(int level, const char *fmt, ...)
{
	if (level > max_level)
		return;
	struct strbuf msg = STRBUF_INIT, line = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (log_format == KLOG_JSON) {
		strbuf_printf(&line, "{\"level\":\"%s\",\"message\":", level_names[level & 7]);
		strbuf_json(&line, strbuf_str(&msg));
		strbuf_puts(&line, "}\n");
	} else if (to_journal) {
		strbuf_printf(&line, "<%d>%s\n", level & 7, strbuf_str(&msg));
	} else {
		strbuf_printf(&line, "keventd: %s%s%s\n",
			      level <= LOG_WARNING ? level_names[level & 7] : "",
			      level <= LOG_WARNING ? ": " : "", strbuf_str(&msg));
	}
	/* One write per line, so lines from several processes never interleave. */
	if (!line.oom) {
		ssize_t _unused_ n = write(STDERR_FILENO, line.buf, line.len);
	}
	strbuf_release(&msg);
	strbuf_release(&line);
}

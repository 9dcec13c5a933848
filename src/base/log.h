/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's log: stderr, with "<N>" priority prefixes when stderr is the
 * journal (JOURNAL_STREAM names it), or one JSON object per line.
 */
#ifndef KEVENT_LOG_H
#define KEVENT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#include "util.h"

enum klog_format { KLOG_TEXT, KLOG_JSON };

void klog_setup(int max_level, enum klog_format format);
int klog_level_from_name(const char *name);
bool klog_enabled(int level);
void klog(int level, const char *fmt, ...) _printf_(2, 3);

/* A key/value field of a structured record (klog_fields). */
enum klog_ftype { KLOG_F_STR, KLOG_F_INT, KLOG_F_UINT, KLOG_F_BOOL };
struct klog_field {
	const char *key; /* [a-z0-9_]; never "level" or "message" */
	enum klog_ftype type;
	union {
		const char *s;
		int64_t i;
		uint64_t u;
		bool b;
	};
};
#define KLOG_STR(k, v)	((struct klog_field){.key = (k), .type = KLOG_F_STR, .s = (v)})
#define KLOG_INT(k, v)	((struct klog_field){.key = (k), .type = KLOG_F_INT, .i = (v)})
#define KLOG_UINT(k, v) ((struct klog_field){.key = (k), .type = KLOG_F_UINT, .u = (v)})
#define KLOG_BOOL(k, v) ((struct klog_field){.key = (k), .type = KLOG_F_BOOL, .b = (v)})

/*
 * One structured record: a message for people and fields for machines, on
 * one line.  Text: "MESSAGE key=value key=value...", a value in double
 * quotes (with \" \\ \n \t \xHH escapes) when it is empty or holds a space,
 * a quote, '=', a backslash or a control character; booleans are true or
 * false.  JSON: {"level":...,"message":...} with each field as its own key,
 * numbers and booleans as JSON numbers and booleans.
 */
void klog_fields(int level, const struct klog_field *fields, size_t n, const char *fmt, ...)
	_printf_(4, 5);

#define log_error(...)	 klog(LOG_ERR, __VA_ARGS__)
#define log_warning(...) klog(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	 klog(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	 klog(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	 klog(LOG_DEBUG, __VA_ARGS__)

#endif

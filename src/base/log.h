/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's log: stderr, with "<N>" priority prefixes when stderr is the
 * journal (JOURNAL_STREAM names it), or one JSON object per line.  A record
 * is always one line: in the text format every control character of the
 * message is escaped (strbuf_add_escaped() of util.h), whoever wrote it, so
 * text from outside that a message quotes (a rule file, an event, a
 * client, a handler's output) cannot start a line of its own or drive the
 * terminal; the JSON format escapes it as JSON does.
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

/*
 * A class of warnings that input from outside can trigger as often as it
 * likes (a bad control request, a refused peer, an overrun...), so that a
 * flood of it cannot flood the journal (whose rate limit would then drop
 * the daemon's other messages): of each class, at most KLOG_THROTTLE_BURST
 * lines are logged per KLOG_THROTTLE_WINDOW_NS, the last of them followed
 * by "NAME: 20 WHAT in 5s: the next ones are counted in status but not
 * logged, for now"; the first line of a later window is preceded by
 * "NAME: N more WHAT were not logged".  Zero-initialised but for its
 * description, e.g. {.name = "control", .what = "bad requests", .counted =
 * true}; one per class, which lives as long as the program.
 */
#define KLOG_THROTTLE_BURST	20
#define KLOG_THROTTLE_WINDOW_NS (5 * 1000000000ull)
struct klog_throttle {
	const char *name;  /* the summary lines' prefix: "socket", "control" */
	const char *what;  /* the class, plural: "rejected inputs" */
	bool counted;	   /* status counts every one: the summary says so */
	uint64_t since_ns; /* start of the current window; 0: none yet */
	unsigned logged;   /* lines logged in it */
	uint64_t unlogged; /* and not logged */
};

/* Logs one line of t's class, if its budget allows (a level that is not
 * logged at all is not counted either). */
void klog_throttled(struct klog_throttle *t, int level, const char *fmt, ...) _printf_(3, 4);
/* The same with the fields of a structured record (klog_fields()). */
void klog_throttled_fields(struct klog_throttle *t, int level, const struct klog_field *fields,
			   size_t n, const char *fmt, ...) _printf_(5, 6);
/* The same at a given time on the monotonic clock (tests). */
void klog_throttled_at(struct klog_throttle *t, uint64_t now_ns, int level, const char *fmt, ...)
	_printf_(4, 5);

#define log_error(...)	 klog(LOG_ERR, __VA_ARGS__)
#define log_warning(...) klog(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	 klog(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	 klog(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	 klog(LOG_DEBUG, __VA_ARGS__)

#endif

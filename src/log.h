/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's log: stderr, with "<N>" priority prefixes when stderr is the
 * journal (JOURNAL_STREAM names it), or one JSON object per line.
 */
#ifndef KEVENT_LOG_H
#define KEVENT_LOG_H

#include <stdbool.h>
#include <syslog.h>

#include "util.h"

enum klog_format { KLOG_TEXT, KLOG_JSON };

void klog_setup(int max_level, enum klog_format format);
int klog_level_from_name(const char *name);
bool klog_enabled(int level);
void klog(int level, const char *fmt, ...) _printf_(2, 3);

#define log_error(...)	 klog(LOG_ERR, __VA_ARGS__)
#define log_warning(...) klog(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	 klog(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	 klog(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	 klog(LOG_DEBUG, __VA_ARGS__)

#endif

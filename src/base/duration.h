/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Durations ("30s", "1m30s", "500ms", "90") and rates ("1/60s", "10/m"). */
#ifndef KEVENT_DURATION_H
#define KEVENT_DURATION_H

#include <stdint.h>

/* Longest accepted duration, in days and in milliseconds. */
#define KEVENT_DURATION_MAX_DAYS 30
#define KEVENT_DURATION_MAX_MS	 (KEVENT_DURATION_MAX_DAYS * 24ull * 3600 * 1000)
/* Largest N of a rate "N/PERIOD". */
#define KEVENT_RATE_MAX 1000000

/* Parses a duration into milliseconds.  Units: ms, s, m, h, d; a bare
 * number is seconds.  Returns 0, or -EINVAL with *why. */
int duration_parse(const char *s, uint64_t *ms, const char **why);
/* Parses "N/PERIOD" (PERIOD a duration; "s" alone means "1s").  N is 1..KEVENT_RATE_MAX. */
int rate_parse(const char *s, uint32_t *count, uint64_t *period_ms, const char **why);
/* Formats milliseconds as the shortest duration string ("90s" -> "1m30s"). */
void duration_format(uint64_t ms, char *buf, unsigned long len);

#endif

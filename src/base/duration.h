/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Durations ("30s", "1m30s", "500ms", "90") and rates ("1/60s", "10/m"). */
#ifndef KEVENT_DURATION_H
#define KEVENT_DURATION_H

#include <stdint.h>

/* Longest accepted duration: 30 days, in milliseconds. */
#define KEVENT_DURATION_MAX_MS (30ull * 24 * 3600 * 1000)

/* Parses a duration into milliseconds.  Units: ms, s, m, h, d; a bare
 * number is seconds.  Returns 0, or -EINVAL with *why. */
int duration_parse(const char *s, uint64_t *ms, const char **why);
/* Parses "N/PERIOD" (PERIOD a duration; "s" alone means "1s").  N is 1..1000000. */
int rate_parse(const char *s, uint32_t *count, uint64_t *period_ms, const char **why);
/* Formats milliseconds as the shortest duration string ("90s" -> "1m30s"). */
void duration_format(uint64_t ms, char *buf, unsigned long len);

#endif

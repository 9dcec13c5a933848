// SPDX-License-Identifier: GPL-2.0-or-later
/* Times as people read them: local time unless --utc (ctl.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "duration.h"
#include "util.h"

void ctl_format_time(uint64_t ns, bool utc, char *buf, size_t size)
{
	time_t t = (time_t)(ns / 1000000000ull);
	unsigned ms = (unsigned)(ns / 1000000ull % 1000);
	struct tm tm;
	char day[40], zone[16];
	if (!(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)) ||
	    !strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm) ||
	    !strftime(zone, sizeof(zone), utc ? "UTC" : "%Z", &tm)) {
		snprintf(buf, size, "?");
		return;
	}
	snprintf(buf, size, "%s.%03u %s", day, ms, zone);
}

/* "2026-12-03T15:20:01.123Z" at s (keventd's UTC): its time in ns, or
 * false. */
static bool read_utc(const char *s, uint64_t *ns)
{
	struct tm tm = {0};
	unsigned ms;
	int used = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3uZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &used) != 7 ||
	    used != 24)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	*ns = (uint64_t)t * 1000000000ull + ms * 1000000ull;
	return true;
}

void ctl_put_times(FILE *f, const char *text, bool utc)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text + 1) : strlen(text);
		/* an events line starts with its time; explain's has "time: " */
		size_t at = strncmp(text, "time: ", 6) == 0 ? 6 : 0;
		uint64_t ns;
		if (!utc && len > at + 24 && read_utc(text + at, &ns)) {
			char buf[64];
			ctl_format_time(ns, false, buf, sizeof(buf));
			fwrite(text, 1, at, f);
			fputs(buf, f);
			fwrite(text + at + 24, 1, len - at - 24, f);
		} else {
			fwrite(text, 1, len, f);
		}
		text += len;
	}
}

int ctl_timeout_arg(const char *opt, const char *arg, uint64_t *ms)
{
	const char *why = NULL;
	int64_t secs;
	if (parse_int64(arg, &secs) == 0 && secs > 0 && secs < 86400 * 365)
		*ms = (uint64_t)secs * 1000;
	else if (duration_parse(arg, ms, &why) < 0 || !*ms)
		return ctl_usage_error("%s wants seconds or a duration such as 500ms, not '%s'",
				       opt, arg);
	return 0;
}

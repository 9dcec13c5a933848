// SPDX-License-Identifier: GPL-2.0-or-later
#include "duration.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static const struct {
	const char *name;
	uint64_t ms;
} units[] = {
	{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000},
};

int duration_parse(const char *s, uint64_t *out, const char **why)
{
	uint64_t total = 0;
	const char *p = s;
	if (!*p) {
		*why = "empty duration";
		return -EINVAL;
	}
	while (*p) {
		if (*p < '0' || *p > '9') {
			*why = "duration must be a number with a unit: ms, s, m, h or d";
			return -EINVAL;
		}
		uint64_t n = 0;
		while (*p >= '0' && *p <= '9') {
			n = n * 10 + (uint64_t)(*p++ - '0');
			if (n > KEVENT_DURATION_MAX_MS) {
				*why = "duration is longer than " STRINGIFY(
					KEVENT_DURATION_MAX_DAYS) " days";
				return -EINVAL;
			}
		}
		uint64_t mult = 0;
		if (!*p && p == s + strspn(s, "0123456789")) {
			mult = 1000; /* a bare number: seconds */
		} else {
			size_t len = strcspn(p, "0123456789");
			for (size_t i = 0; i < ARRAY_SIZE(units); i++)
				if (strlen(units[i].name) == len &&
				    strncmp(p, units[i].name, len) == 0)
					mult = units[i].ms;
			if (!mult) {
				*why = "unknown duration unit (use ms, s, m, h or d)";
				return -EINVAL;
			}
			p += len;
		}
		total += n * mult;
		if (total > KEVENT_DURATION_MAX_MS) {
			*why = "duration is longer than " STRINGIFY(
				KEVENT_DURATION_MAX_DAYS) " days";
			return -EINVAL;
		}
	}
	if (total == 0) {
		*why = "duration must be greater than zero";
		return -EINVAL;
	}
	*out = total;
	return 0;
}

int rate_parse(const char *s, uint32_t *count, uint64_t *period_ms, const char **why)
{
	const char *slash = strchr(s, '/');
	if (!slash || slash == s) {
		*why = "rate must be N/PERIOD, e.g. 1/60s";
		return -EINVAL;
	}
	uint64_t n = 0;
	for (const char *p = s; p < slash; p++) {
		if (*p < '0' || *p > '9') {
			*why = "rate must be N/PERIOD, e.g. 1/60s";
			return -EINVAL;
		}
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > KEVENT_RATE_MAX) {
			*why = "rate count must be at most " STRINGIFY(KEVENT_RATE_MAX);
			return -EINVAL;
		}
	}
	if (n == 0) {
		*why = "rate count must be at least 1";
		return -EINVAL;
	}
	char period[64];
	const char *ps = slash + 1;
	if (*ps >= 'a' && *ps <= 'z' && strlen(ps) < sizeof(period) - 1) {
		snprintf(period, sizeof(period), "1%s", ps);
		ps = period;
	}
	int r = duration_parse(ps, period_ms, why);
	if (r < 0)
		return r;
	*count = (uint32_t)n;
	return 0;
}

void duration_format(uint64_t ms, char *buf, unsigned long len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = ARRAY_SIZE(units); i-- > 0 && ms;) {
		uint64_t n = ms / units[i].ms;
		if (!n)
			continue;
		ms -= n * units[i].ms;
		int w = snprintf(buf + off, len - off, "%llu%s", (unsigned long long)n,
				 units[i].name);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += (size_t)w;
	}
	if (!buf[0])
		snprintf(buf, len, "0s");
}

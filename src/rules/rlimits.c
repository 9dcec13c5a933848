// SPDX-License-Identifier: GPL-2.0-or-later
#include "rlimits.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "duration.h"
#include "util.h"

enum unit { COUNT, SIZE, SECONDS };

static const struct {
	const char *name;
	int resource;
	enum unit unit;
} table[] = {
	{"as", RLIMIT_AS, SIZE},	  {"core", RLIMIT_CORE, SIZE},
	{"cpu", RLIMIT_CPU, SECONDS},	  {"data", RLIMIT_DATA, SIZE},
	{"fsize", RLIMIT_FSIZE, SIZE},	  {"memlock", RLIMIT_MEMLOCK, SIZE},
	{"nofile", RLIMIT_NOFILE, COUNT}, {"nproc", RLIMIT_NPROC, COUNT},
	{"stack", RLIMIT_STACK, SIZE},
};

const char *krlimit_name(int resource)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (table[i].resource == resource)
			return table[i].name;
	return "?";
}

static int parse_size(const char *s, uint64_t *out)
{
	int64_t n;
	size_t len = strlen(s);
	uint64_t mult = 1;
	char buf[32];
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	const char *units = "KMGT";
	const char *u = strchr(units, buf[len - 1]);
	if (u && buf[len - 1]) {
		for (const char *p = units; p <= u; p++)
			mult *= 1024;
		buf[len - 1] = '\0';
	}
	if (parse_int64(buf, &n) < 0 || n < 0 || (uint64_t)n > UINT64_MAX / mult / 2)
		return -EINVAL;
	*out = (uint64_t)n * mult;
	return 0;
}

int krlimit_parse(const char *name, const char *value, struct krlimit *out, const char **why)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		if (strcmp(name, table[i].name) != 0)
			continue;
		out->resource = table[i].resource;
		if (strcmp(value, "infinity") == 0) {
			out->value = UINT64_MAX;
			return 0;
		}
		int64_t n;
		uint64_t ms;
		switch (table[i].unit) {
		case COUNT:
			if (parse_int64(value, &n) < 0 || n < 0) {
				*why = "wants a whole number or infinity";
				return -EINVAL;
			}
			out->value = (uint64_t)n;
			return 0;
		case SECONDS:
			if (duration_parse(value, &ms, why) < 0)
				return -EINVAL;
			out->value = (ms + 999) / 1000;
			return 0;
		case SIZE:
			if (parse_size(value, &out->value) < 0) {
				*why = "wants a size (a number with an optional K, M, G or T) or "
				       "infinity";
				return -EINVAL;
			}
			return 0;
		}
	}
	*why = "unknown limit (as, core, cpu, data, fsize, memlock, nofile, nproc, stack)";
	return -EINVAL;
}

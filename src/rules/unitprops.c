// SPDX-License-Identifier: GPL-2.0-or-later
/* unit_properties (unitprops.h). */
#include "unitprops.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "util.h"

enum kind { STR, ABSPATH, SLICE, ENUM, BOOL, SIZE, COUNT, WEIGHT, USEC, QUOTA, NICE, OOMADJ };

static const struct {
	const char *key, *dbus;
	enum kind kind;
	const char *choices; /* ENUM: "a|b|c" */
} table[] = {
	/* clang-format off */
	{"Description", "Description", STR, NULL},
	{"Slice", "Slice", SLICE, NULL},
	{"WorkingDirectory", "WorkingDirectory", ABSPATH, NULL},
	{"KillMode", "KillMode", ENUM, "control-group|mixed|process|none"},
	{"ProtectSystem", "ProtectSystem", ENUM, "no|yes|full|strict"},
	{"ProtectHome", "ProtectHome", ENUM, "no|yes|read-only|tmpfs"},
	{"NoNewPrivileges", "NoNewPrivileges", BOOL, NULL},
	{"PrivateTmp", "PrivateTmp", BOOL, NULL},
	{"PrivateDevices", "PrivateDevices", BOOL, NULL},
	{"PrivateNetwork", "PrivateNetwork", BOOL, NULL},
	{"ProtectKernelTunables", "ProtectKernelTunables", BOOL, NULL},
	{"ProtectControlGroups", "ProtectControlGroups", BOOL, NULL},
	{"MemoryMax", "MemoryMax", SIZE, NULL},
	{"MemoryHigh", "MemoryHigh", SIZE, NULL},
	{"MemorySwapMax", "MemorySwapMax", SIZE, NULL},
	{"TasksMax", "TasksMax", COUNT, NULL},
	{"CPUWeight", "CPUWeight", WEIGHT, NULL},
	{"IOWeight", "IOWeight", WEIGHT, NULL},
	{"CPUQuota", "CPUQuotaPerSecUSec", QUOTA, NULL},
	{"TimeoutStopSec", "TimeoutStopUSec", USEC, NULL},
	{"Nice", "Nice", NICE, NULL},
	{"OOMScoreAdjust", "OOMScoreAdjust", OOMADJ, NULL},
	/* clang-format on */
};

/* What the rule itself gives the unit: not a property of unit_properties. */
static const struct {
	const char *key, *why;
} from_rule[] = {
	{"ExecStart", "the unit runs the rule's 'run'"},
	{"Environment", "the unit gets the handler's environment"},
	{"User", "the unit runs as the rule's 'user'"},
	{"RuntimeMaxSec", "the rule's 'timeout' is the unit's RuntimeMaxSec"},
};

int kunitprop_parse_size(const char *s, uint64_t *out, const char **why)
{
	static const char suffixes[] = "KMGTPE";
	if (strcmp(s, "infinity") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	*why = "not a size (bytes, with K, M, G, T, P or E for powers of 1024, or infinity)";
	if (*s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		const char *x = strchr(suffixes, *end);
		if (!x || end[1])
			return -EINVAL;
		for (ptrdiff_t i = 0; i <= x - suffixes; i++) {
			if (v > UINT64_MAX / 1024) {
				*why = "too large";
				return -ERANGE;
			}
			v *= 1024;
		}
	}
	if (v == 0 || v == UINT64_MAX) {
		*why = v ? "too large" : "must be more than 0";
		return -ERANGE;
	}
	*out = v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static bool in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);
	for (const char *p = choices; *p;) {
		size_t l = strcspn(p, "|");
		if (l == n && memcmp(p, v, n) == 0)
			return true;
		p += l + (p[l] == '|');
	}
	return false;
}

static int parse_ranged(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t n;
	if (parse_int64(v, &n) < 0 || n < lo || n > hi)
		return -ERANGE;
	*out = n;
	return 0;
}

int kunitprop_parse(const char *key, const char *v, struct kunitprop *out, const char **why)
{
	*out = (struct kunitprop){0};
	for (size_t i = 0; i < ARRAY_SIZE(from_rule); i++)
		if (strcmp(key, from_rule[i].key) == 0) {
			*why = from_rule[i].why;
			return -ENOENT;
		}
	size_t k = 0;
	while (k < ARRAY_SIZE(table) && strcmp(table[k].key, key) != 0)
		k++;
	if (k == ARRAY_SIZE(table)) {
		*why = "not a property keventd knows (keventd.rules(5) lists them)";
		return -ENOENT;
	}
	out->name = table[k].dbus;
	int64_t n;
	uint64_t ms;
	switch (table[k].kind) {
	case ABSPATH:
		if (v[0] != '/') {
			*why = "not an absolute path";
			return -EINVAL;
		}
		/* fallthrough */
	case STR:
	case SLICE:
	case ENUM:
		if (table[k].kind == SLICE && !str_has_suffix(v, ".slice")) {
			*why = "not a slice (NAME.slice)";
			return -EINVAL;
		}
		if (table[k].kind == ENUM && !in_choices(table[k].choices, v)) {
			*why = table[k].choices;
			return -EINVAL;
		}
		out->type = 's';
		out->s = strdup(v);
		return out->s ? 0 : -ENOMEM;
	case BOOL:
		out->type = 'b';
		if (parse_bool(v, &out->b) < 0) {
			*why = "not true or false";
			return -EINVAL;
		}
		return 0;
	case SIZE:
		out->type = 't';
		return kunitprop_parse_size(v, &out->u, why);
	case COUNT:
		out->type = 't';
		if (strcmp(v, "infinity") == 0) {
			out->u = UINT64_MAX;
			return 0;
		}
		*why = "a count, 1 or more, or infinity";
		if (parse_ranged(v, 1, INT64_MAX, &n) < 0)
			return -ERANGE;
		out->u = (uint64_t)n;
		return 0;
	case WEIGHT:
		out->type = 't';
		*why = "a weight from 1 to 10000";
		if (parse_ranged(v, 1, 10000, &n) < 0)
			return -ERANGE;
		out->u = (uint64_t)n;
		return 0;
	case USEC:
		out->type = 't';
		if (duration_parse(v, &ms, why) < 0)
			return -EINVAL;
		out->u = ms * 1000;
		return 0;
	case QUOTA: {
		/* "50%": half a CPU, as CPU time per second of real time */
		size_t len = strlen(v);
		char num[24];
		out->type = 't';
		*why = "a percentage of one CPU, such as 50% or 200%";
		if (len < 2 || len >= sizeof(num) || v[len - 1] != '%')
			return -EINVAL;
		memcpy(num, v, len - 1);
		num[len - 1] = '\0';
		if (parse_ranged(num, 1, 100000, &n) < 0)
			return -ERANGE;
		out->u = (uint64_t)n * 10000;
		return 0;
	}
	case NICE:
		out->type = 'i';
		*why = "a nice level from -20 to 19";
		return parse_ranged(v, -20, 19, &out->i);
	case OOMADJ:
		out->type = 'i';
		*why = "a score adjustment from -1000 to 1000";
		return parse_ranged(v, -1000, 1000, &out->i);
	}
	return -EINVAL;
}

void kunitprop_release(struct kunitprop *p)
{
	free(p->s);
	p->s = NULL;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* Filters of monitor and events (filter.h). */
#include "filter.h"

#include <errno.h>
#include <string.h>

void kfilter_init(struct kfilter *f)
{
	*f = (struct kfilter){.source = -1, .type = -1};
}

static bool starts(const char *s, const char *prefix, const char **rest)
{
	size_t n = strlen(prefix);
	if (strncmp(s, prefix, n) != 0)
		return false;
	*rest = s + n;
	return true;
}

int kfilter_add(struct kfilter *f, const char *field, const char **why)
{
	const char *v;
	if (strcmp(field, "failed") == 0) {
		f->failed = true;
	} else if (starts(field, "source=", &v)) {
		if ((f->source = kevent_source_from_name(v)) < 0) {
			*why = "unknown source";
			return -EINVAL;
		}
	} else if (starts(field, "type=", &v)) {
		if ((f->type = kevent_type_from_name(v)) < 0) {
			*why = "unknown type";
			return -EINVAL;
		}
	} else if (starts(field, "rule=", &v)) {
		size_t len = strlen(v);
		if (!len || len > KFILTER_RULE_MAX) {
			*why = "a rule name is 1-128 bytes";
			return -EINVAL;
		}
		memcpy(f->rule, v, len + 1);
	} else {
		*why = "a filter is source=NAME, type=NAME, rule=NAME or failed";
		return -EINVAL;
	}
	return 0;
}

bool kfilter_any(const struct kfilter *f)
{
	return f->source >= 0 || f->type >= 0 || f->rule[0] || f->failed;
}

bool kfilter_event(const struct kfilter *f, enum kevent_source source, enum kevent_type type)
{
	return (f->source < 0 || f->source == (int)source) && (f->type < 0 || f->type == (int)type);
}

bool kfilter_rules(const struct kfilter *f, const char *const *names, size_t n)
{
	if (!f->rule[0])
		return true;
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], f->rule) == 0)
			return true;
	return false;
}

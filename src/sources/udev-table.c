// SPDX-License-Identifier: GPL-2.0-or-later
#include "udev-table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kudevtab_release(struct kudevtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	*t = (struct kudevtab){0};
}

/* devpath's place: its index, or where it goes (*found false). */
static size_t find(const struct kudevtab *t, const char *devpath, size_t len, bool *found)
{
	size_t lo = 0, hi = t->n;
	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(t->v[mid], devpath, len);
		if (c == 0)
			c = t->v[mid][len] == ' ' ? 0 : 1;
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int kudevtab_set(struct kudevtab *t, const char *devpath, const char *subsystem)
{
	/* Devices only: the uevents of modules (/module/...), drivers and
	 * subsystems (/bus/..., /class/...) name no device, and libudev's
	 * enumeration, which the table is compared with, never lists them. */
	if (strncmp(devpath, "/devices/", strlen("/devices/")) != 0)
		return 0;
	size_t len = strlen(devpath);
	bool found;
	size_t i = find(t, devpath, len, &found);
	if (!subsystem) {
		if (!found)
			return 0;
		free(t->v[i]);
		memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
		t->n--;
		return 1;
	}
	if (found && strcmp(t->v[i] + len + 1, subsystem) == 0)
		return 0;
	char *line = NULL;
	if (asprintf(&line, "%s %s", devpath, subsystem) < 0)
		return -ENOMEM;
	if (found) {
		free(t->v[i]);
		t->v[i] = line;
		return 1;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		char **v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			free(line);
			return -ENOMEM;
		}
		t->v = v;
		t->cap = cap;
	}
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->v[i] = line;
	t->n++;
	return 1;
}

int kudevtab_parse(struct kudevtab *t, const char *text, size_t len)
{
	const char *end = text + len;
	while (text < end) {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		const char *eol = nl ? nl : end;
		const char *sp = memchr(text, ' ', (size_t)(eol - text));
		if (sp && sp > text && *text == '/' && sp + 1 < eol &&
		    !memchr(sp + 1, ' ', (size_t)(eol - sp - 1))) {
			char *devpath = strndup(text, (size_t)(sp - text));
			char *subsystem = strndup(sp + 1, (size_t)(eol - sp - 1));
			int rc = devpath && subsystem ? kudevtab_set(t, devpath, subsystem)
						      : -ENOMEM;
			free(devpath);
			free(subsystem);
			if (rc < 0)
				return rc;
		}
		text = nl ? nl + 1 : end;
	}
	return 0;
}

void kudevtab_render(const struct kudevtab *t, struct strbuf *sb)
{
	for (size_t i = 0; i < t->n; i++) {
		strbuf_puts(sb, t->v[i]);
		strbuf_puts(sb, "\n");
	}
}

static size_t devpath_len(const char *line)
{
	return strcspn(line, " ");
}

void kudevtab_diff(const struct kudevtab *was, const struct kudevtab *now,
		   void (*fn)(void *userdata, const char *action, const char *devpath,
			      const char *subsystem),
		   void *userdata)
{
	size_t i = 0, k = 0;
	char path[4096];
	while (i < was->n || k < now->n) {
		const char *a = i < was->n ? was->v[i] : NULL, *b = k < now->n ? now->v[k] : NULL;
		size_t la = a ? devpath_len(a) : 0, lb = b ? devpath_len(b) : 0;
		int c = !a ? 1 : !b ? -1 : 0;
		if (a && b) {
			c = strncmp(a, b, la < lb ? la : lb);
			if (c == 0)
				c = la < lb ? -1 : la > lb;
		}
		const char *line = c < 0 ? a : b;
		size_t len = c < 0 ? la : lb;
		if (c != 0 && len < sizeof(path)) {
			memcpy(path, line, len);
			path[len] = '\0';
			fn(userdata, c < 0 ? "remove" : "add", path, line + len + 1);
		}
		i += c <= 0;
		k += c >= 0;
	}
}

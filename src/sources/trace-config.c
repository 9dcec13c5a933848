// SPDX-License-Identifier: GPL-2.0-or-later
#include "trace-config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "util.h"
#include "yamltree.h"

void ktrace_config_release(struct ktrace_config *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].system);
		free(c->v[i].event);
		free(c->v[i].filter);
	}
	free(c->v);
	free(c->path);
	*c = (struct ktrace_config){0};
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* "system/event", each [A-Za-z0-9_]+ of at most KTRACE_NAME_MAX bytes. */
static bool split_event(const char *s, char **system, char **event)
{
	const char *slash = strchr(s, '/');
	if (!slash || slash == s || !slash[1])
		return false;
	for (const char *q = s; *q; q++)
		if (q != slash && !name_char(*q))
			return false;
	if ((size_t)(slash - s) > KTRACE_NAME_MAX || strlen(slash + 1) > KTRACE_NAME_MAX)
		return false;
	*system = strndup(s, (size_t)(slash - s));
	*event = strdup(slash + 1);
	return true;
}

static const struct ynode *scalar(struct kdiag_file *p, const char *key, const struct ynode *v)
{
	if (v->kind != YNODE_SCALAR || ynode_is_null(v) || !v->value[0]) {
		kdiag_at(p, v, "trace: '%s' wants a value, not %s", key,
			 v->kind == YNODE_SCALAR && !v->value[0] && !v->plain ? "an empty string"
									      : ynode_kind_name(v));
		return NULL;
	}
	return v;
}

/* One item of the list; 0 or -ENOMEM. */
static int entry(struct kdiag_file *p, const struct ynode *item, struct ktrace_entry *e)
{
	*e = (struct ktrace_entry){.type = KEVENT_GENERAL};
	size_t before = p->errors;
	if (item->kind != YNODE_MAP) {
		kdiag_at(p, item,
			 "trace: an entry is a mapping with 'event' (and 'filter', 'type'), not %s",
			 ynode_kind_name(item));
		return 0;
	}
	const struct ynode *ev = NULL;
	for (size_t i = 0; i + 1 < item->n_kids; i += 2) {
		const struct ynode *k = item->kids[i], *v = item->kids[i + 1];
		const char *key = k->kind == YNODE_SCALAR ? k->value : "";
		for (size_t j = 0; j < i; j += 2)
			if (item->kids[j]->kind == YNODE_SCALAR &&
			    strcmp(item->kids[j]->value, key) == 0) {
				kdiag_at(p, k, "trace: '%s' given twice", key);
				key = "";
				break;
			}
		if (!key[0])
			continue;
		if (strcmp(key, "event") == 0) {
			ev = scalar(p, key, v);
			if (ev && !split_event(ev->value, &e->system, &e->event))
				kdiag_at(p, v,
					 "trace: event \"%s\" is not SYSTEM/EVENT (as tracefs "
					 "names it: "
					 "sched/sched_process_exec)",
					 ev->value);
			else if (ev && (!e->system || !e->event))
				return -ENOMEM;
			e->line = v->line;
			e->col = v->col;
		} else if (strcmp(key, "filter") == 0) {
			if (!scalar(p, key, v))
				continue;
			if (strlen(v->value) > KTRACE_FILTER_MAX) {
				kdiag_at(p, v, "trace: a filter is at most %d bytes",
					 KTRACE_FILTER_MAX);
				continue;
			}
			e->filter = strdup(v->value);
			if (!e->filter)
				return -ENOMEM;
			e->filter_line = v->line;
			e->filter_col = v->col;
		} else if (strcmp(key, "type") == 0) {
			int t = scalar(p, key, v) ? kevent_type_from_name(v->value) : 0;
			if (t < 0)
				kdiag_at(p, v, "trace: unknown event type '%s'", v->value);
			else
				e->type = t;
		} else {
			kdiag_at(p, k, "trace: unknown key '%s' (event, filter, type)", key);
		}
	}
	if (!ev && p->errors == before)
		kdiag_at(p, item, "trace: an entry names its tracepoint: 'event: SYSTEM/EVENT'");
	return 0;
}

static void entry_release(struct ktrace_entry *e)
{
	free(e->system);
	free(e->event);
	free(e->filter);
}

int ktrace_config_parse(struct ktrace_config *c, const struct ynode *v, const char *path,
			struct kdiags *diags)
{
	struct kdiag_file p = {.path = path, .diags = diags};
	ktrace_config_release(c);
	if (ynode_is_null(v))
		return 0; /* "trace:" with nothing: no entry */
	if (v->kind != YNODE_SEQ) {
		kdiag_at(&p, v, "trace: wants a list of entries ('- event: SYSTEM/EVENT'), not %s",
			 ynode_kind_name(v));
		return 0;
	}
	if (v->n_kids > KTRACE_MAX_ENTRIES) {
		kdiag_at(&p, v, "trace: at most %d entries", KTRACE_MAX_ENTRIES);
		return 0;
	}
	struct ktrace_config out = {.path = strdup(path)};
	out.v = calloc(v->n_kids ? v->n_kids : 1, sizeof(*out.v));
	if (!out.v || !out.path) {
		ktrace_config_release(&out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n_kids; i++) {
		size_t before = p.errors;
		struct ktrace_entry *e = &out.v[out.n];
		int rc = entry(&p, v->kids[i], e);
		if (rc < 0) {
			entry_release(e);
			ktrace_config_release(&out);
			return rc;
		}
		for (size_t j = 0; p.errors == before && j < out.n; j++) {
			if (strcmp(out.v[j].system, e->system) != 0 ||
			    strcmp(out.v[j].event, e->event) != 0)
				continue;
			kdiags_add(diags, path, e->line, e->col,
				   "trace: %s/%s is listed twice (one entry per tracepoint: join "
				   "the filters with ||)",
				   e->system, e->event);
			p.errors++;
		}
		if (p.errors == before)
			out.n++;
		else
			entry_release(e);
	}
	if (p.errors) {
		ktrace_config_release(&out);
		return 0;
	}
	*c = out;
	return 0;
}

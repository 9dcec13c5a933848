/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `keventctl monitor` and `events` filter on (keventctl(8)): an
 * event's source and type, a rule it matched, and (events) whether a run
 * of it failed.  A filter is sent as request fields, one each:
 * "source=NAME", "type=NAME", "rule=NAME", "failed"; each given must hold.
 * Pure.
 */
#ifndef KEVENT_FILTER_H
#define KEVENT_FILTER_H

#include <stdbool.h>

#include "event.h"

#define KFILTER_RULE_MAX 128 /* a rule name's bytes (rules(5)) */

struct kfilter {
	int source;			 /* -1: any */
	int type;			 /* -1: any */
	char rule[KFILTER_RULE_MAX + 1]; /* "": any */
	bool failed;
};

/* A filter that lets everything through. */
void kfilter_init(struct kfilter *f);
/* Adds one request field to f: 0, or -EINVAL with *why (an unknown
 * source or type, a rule name too long, a field of no such kind). */
int kfilter_add(struct kfilter *f, const char *field, const char **why);
/* Whether f asks for anything. */
bool kfilter_any(const struct kfilter *f);
/* Whether an event of source and type passes f's source and type. */
bool kfilter_event(const struct kfilter *f, enum kevent_source source, enum kevent_type type);
/* Whether one of the n rule names passes f's rule (true when f names
 * none). */
bool kfilter_rules(const struct kfilter *f, const char *const *names, size_t n);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rate limits of rules, per rule and object: at most N runs in each
 * window of PERIOD, counted from the first run of the window.  Windows
 * that have ended are forgotten, so memory follows the active objects.
 *
 * At most KRATELIMIT_MAX_WINDOWS windows are kept, so that events naming
 * ever new objects cannot grow keventd for as long as a period lasts (up
 * to 30 days).  When that many are live, an object that has no window
 * gets none: it shares one window per rule with every other such object,
 * so the rule still runs at most N times per PERIOD for all of them
 * together.  No window is forgotten before its end (forgetting one would
 * let an object run again before its time), and nothing runs unlimited.
 */
#ifndef KEVENT_RATELIMIT_H
#define KEVENT_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

#define KRATELIMIT_MAX_WINDOWS 16384
/* With the table full, ended windows are looked for at most this often. */
#define KRATELIMIT_FULL_SWEEP_NS (100ull * 1000000ull)

enum kratelimit_verdict {
	KRATELIMIT_RUN,		   /* within the limit (counted) */
	KRATELIMIT_SUPPRESS,	   /* over the object's limit */
	KRATELIMIT_RUN_SHARED,	   /* the table is full: within the rule's shared window */
	KRATELIMIT_SUPPRESS_SHARED /* the table is full: over the rule's shared window */
};

struct kratelimit;

int kratelimit_new(struct kratelimit **out);
void kratelimit_free(struct kratelimit *rl);
/* Whether rule r may run for object now (and counts the run if so); a rule
 * without a rate limit always may. */
enum kratelimit_verdict kratelimit_check(struct kratelimit *rl, const struct krule *r,
					 const char *object, uint64_t now_ns);
static inline bool kratelimit_runs(enum kratelimit_verdict v)
{
	return v == KRATELIMIT_RUN || v == KRATELIMIT_RUN_SHARED;
}
/* Windows kept for objects (at most KRATELIMIT_MAX_WINDOWS), and shared ones. */
size_t kratelimit_size(const struct kratelimit *rl);
size_t kratelimit_shared(const struct kratelimit *rl);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rate limits of rules, per rule and object: at most N runs in each
 * window of PERIOD, counted from the first run of the window.  Windows
 * that have ended are forgotten, so memory follows the active objects.
 */
#ifndef KEVENT_RATELIMIT_H
#define KEVENT_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "rules.h"

struct kratelimit;

int kratelimit_new(struct kratelimit **out);
void kratelimit_free(struct kratelimit *rl);
/* Whether rule r may run for object now (and counts the run if so). */
bool kratelimit_allow(struct kratelimit *rl, const struct krule *r, const char *object,
		      uint64_t now_ns);
size_t kratelimit_size(const struct kratelimit *rl);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `keventctl explain` prints of a past event (keventctl(8)): every
 * rule in order, matched or not and why not, with the words of
 * `keventctl test`, against the rules in force when it was handled, and
 * whether today's rules decide differently (then those too).  Pure.
 */
#ifndef KEVENT_EXPLAIN_H
#define KEVENT_EXPLAIN_H

#include <stdbool.h>

#include "event.h"
#include "ruleset.h"
#include "util.h"

/* then is NULL when the rules of then are no longer kept. */
void kexplain_render(const struct kevent *ev, const struct kruleset *then,
		     const struct kruleset *now, bool json, struct strbuf *out);

#endif

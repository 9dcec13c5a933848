/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `keventctl explain` prints of a past event (keventctl(8)): every
 * rule in order, matched or not and why not, with the words of
 * `keventctl test`, against the rules in force when it was handled, and
 * whether today's rules decide differently (then those too).  Rendered a
 * rule at a time, for a reply sent as it is read: what it holds is the
 * event and references on the files of then, never a rendering of the
 * whole rule set.  Pure.
 */
#ifndef KEVENT_EXPLAIN_H
#define KEVENT_EXPLAIN_H

#include <stdbool.h>

#include "event.h"
#include "ruleset.h"
#include "util.h"

struct kexplain;

/* ev (taken) against the files in force then, in order (references taken;
 * NULL: no longer kept) and now, today's rules.  0 or -ENOMEM. */
int kexplain_new(struct kevent *ev, struct kfile *const *then, size_t n_then,
		 const struct kruleset *now, bool json, struct kexplain **out);
void kexplain_free(struct kexplain *x);
/* Appends the next part (a heading, a rule's line) to out; false,
 * appending nothing, once all is.  now must be the rule set given to
 * kexplain_new(). */
bool kexplain_next(struct kexplain *x, const struct kruleset *now, struct strbuf *out);

#endif

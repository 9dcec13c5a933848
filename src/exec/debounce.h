/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Debounce (keventd.rules(5), debounce:): a rule's run waits until its
 * DURATION has passed with no further matching event of the same key
 * (krule_limit_key()), and then runs once, with the last event.  The events
 * it replaced are said to the caller (debounced).  At most
 * KDEBOUNCE_MAX_PENDING keys wait at once; past that an event runs at once,
 * never lost.  The waiting event holds a reference on its rule's file.
 */
#ifndef KEVENT_DEBOUNCE_H
#define KEVENT_DEBOUNCE_H

#include <stdint.h>

#include "event.h"
#include "loop.h"
#include "rules.h"

#define KDEBOUNCE_MAX_PENDING 16384

/* The quiet time is over: run r for ev (taken), the event number serial. */
typedef void (*kdebounce_fire_fn)(void *userdata, const struct krule *r, struct kevent *ev,
				  uint64_t serial);

struct kdebounce;

int kdebounce_new(struct kloop *loop, kdebounce_fire_fn fire, void *userdata,
		  struct kdebounce **out);
/* Frees it and the events still waiting (dropped).  NULL is fine. */
void kdebounce_free(struct kdebounce *db);
/* ev (copied), event number serial, for rule r: returns 1 when it replaced
 * an event that was waiting (that one is debounced), 0 when it waits alone,
 * 2 when it was fired at once (the table is full), or -ENOMEM. */
int kdebounce_push(struct kdebounce *db, const struct krule *r, const struct kevent *ev,
		   uint64_t serial, uint64_t now_ns);
size_t kdebounce_pending(const struct kdebounce *db);

#endif

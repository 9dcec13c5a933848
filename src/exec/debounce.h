/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Debounce (keventd.rules(5), debounce:): a rule's run waits until its
 * DURATION has passed with no further matching event of the same key
 * (krule_limit_key()), and then runs once, with the last event.  The events
 * it replaced are said to the caller (debounced).  At most
 * KDEBOUNCE_MAX_PENDING keys wait at once; past that an event runs at once,
 * never lost.  The waiting event holds a reference on its rule's file.
 * Each waiting event carries the caller's tag, handed back when it fires,
 * when a later event replaces it, or when it is dropped unfired.
 */
#ifndef KEVENT_DEBOUNCE_H
#define KEVENT_DEBOUNCE_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "loop.h"
#include "rules.h"

#define KDEBOUNCE_MAX_PENDING 16384

struct kdebounce_ops {
	/* The quiet time is over (or the table was full): run r for ev
	 * (taken), the event number serial, pushed with tag. */
	void (*fire)(void *userdata, const struct krule *r, struct kevent *ev, uint64_t serial,
		     void *tag);
	/* The event pushed with tag will not fire: a later one replaced it
	 * (replaced), or it was waiting when the table was freed. */
	void (*gone)(void *userdata, void *tag, bool replaced);
};

struct kdebounce;

/* ops is not copied: it must outlive db. */
int kdebounce_new(struct kloop *loop, const struct kdebounce_ops *ops, void *userdata,
		  struct kdebounce **out);
/* Frees it and the events still waiting (dropped, gone()).  NULL is fine. */
void kdebounce_free(struct kdebounce *db);
/* Hands every waiting event to fn (ev taken) with its rule and tag, and
 * forgets it, unfired: a stop that keeps them for the next start. */
void kdebounce_drain(struct kdebounce *db,
		     void (*fn)(void *userdata, const struct krule *r, struct kevent *ev,
				void *tag),
		     void *userdata);
/* ev (copied), event number serial, for rule r, with the caller's tag:
 * returns 1 when it replaced an event that was waiting (that one is
 * debounced, and gone() was told), 0 when it waits alone, 2 when it was
 * fired at once (the table is full), or -ENOMEM (nothing was kept, and
 * nothing told of tag). */
int kdebounce_push(struct kdebounce *db, const struct krule *r, const struct kevent *ev,
		   uint64_t serial, void *tag, uint64_t now_ns);
size_t kdebounce_pending(const struct kdebounce *db);

#endif

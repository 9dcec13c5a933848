/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The names of user and group ids, looked up off the loop: the system's
 * databases (NSS) may ask a directory server (LDAP, sssd) that does not
 * answer, and keventd's loop never waits on a peer.  One thread makes the
 * look-ups, one at a time, in order, and answers through a pipe that the
 * loop watches; while it is stuck on one, kidname_ask() says so at once.
 */
#ifndef KEVENT_IDNAME_H
#define KEVENT_IDNAME_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"

#define KIDNAME_MAX	    256 /* a longer name is not given */
#define KIDNAME_OUTSTANDING 64	/* look-ups asked and not answered, at most */

struct kidname;

/* The answer to the look-up token: the name, or NULL (none, or an error). */
typedef void (*kidname_fn)(void *userdata, uint64_t token, const char *name);

/* The thread, answering through fn.  0 or -errno. */
int kidname_new(struct kloop *loop, kidname_fn fn, void *userdata, struct kidname **out);
/* Asks for the name of a user (group false) or group id, answered later
 * with token.  0; -EBUSY when KIDNAME_OUTSTANDING are not answered (the
 * thread is stuck: go on without); -errno. */
int kidname_ask(struct kidname *r, bool group, uint32_t id, uint64_t token);
/* How many asked are not answered yet. */
unsigned kidname_outstanding(const struct kidname *r);
/* Stops listening; the thread ends once its look-up returns. */
void kidname_free(struct kidname *r);

#endif

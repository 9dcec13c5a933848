/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a user instance (keventd --user) may see of the system instance's
 * events: the forwarding policy of keventd.rules(5), WHAT USERS SEE, in
 * one pure function.  It reads the event and the rules it matched; what
 * only the system can say (the user's session, the user's mount
 * namespace) it asks through callbacks.  No I/O, no log.
 */
#ifndef KEVENT_USERS_POLICY_H
#define KEVENT_USERS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "event.h"
#include "rules.h"

/* The user instance at the other end of the socket. */
struct kusers_peer {
	uid_t uid;
	pid_t pid;		   /* the user instance's (its mount namespace) */
	const char *name;	   /* the user's name, "" if none */
	const char *const *groups; /* the names of the user's groups (primary first) */
	size_t n_groups;
	const gid_t *gids; /* the same groups' ids */
};

/* What only the system can say.  A NULL callback answers no. */
struct kusers_facts {
	/* whether uid has the active session of a seat now (logind) */
	bool (*active_session)(void *ud, uid_t uid);
	/* whether mountpoint is mounted in pid's mount namespace.  Asked for
	 * every fs event of a mount, its umount included (the mount is gone
	 * by then: an answer of "pid shares the system instance's mount
	 * namespace" lets the user see it go).  mountpoint is the payload's
	 * Mountpoint:, unescaped (docs/sources.md, "Escaped names"). */
	bool (*mount_visible)(void *ud, pid_t pid, const char *mountpoint);
	void *ud;
};

enum kusers_why { /* why forwarded or not, for counters and logs */
		  KUSERS_PUBLIC,
		  KUSERS_SESSION,
		  KUSERS_CONDITION,
		  KUSERS_MOUNT,
		  KUSERS_QUOTA,
		  KUSERS_SHARED,
		  KUSERS_NOT_SESSION,
		  KUSERS_NOT_MOUNT,
		  KUSERS_NOT_QUOTA,
		  KUSERS_PRIVATE,
};
#define KUSERS_WHY_MAX (KUSERS_PRIVATE + 1)

/*
 * Whether peer p may see ev, which matched the system rules rules[0..n)
 * (their share: keys count).  *why (may be NULL) says which line of the
 * policy decided.  An event the policy keeps from p is forwarded all the
 * same when one of the rules shares it with p (KUSERS_SHARED).  Events of
 * another host (ev->host, MQTT) are kept from every user unless shared;
 * a test event (ev->test) is judged as its source's.  NULL p, f or ev:
 * false.
 */
bool kusers_may_see(const struct kusers_peer *p, const struct kusers_facts *f,
		    const struct kevent *ev, const struct krule *const *rules, size_t n,
		    enum kusers_why *why);

/* "public", "session", ... "not-session", ... "private": a word for
 * status and logs; "?" for a value out of range. */
const char *kusers_why_name(enum kusers_why why);

/* Whether rule r's share: names p: share: users, p's name, or "@" and
 * one of p's groups. */
bool kusers_shared_with(const struct krule *r, const struct kusers_peer *p);

#endif

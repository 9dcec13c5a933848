/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The system instance's side of the users socket (keventd(8), USER
 * INSTANCE): any local user's keventd --user connects; its uid (and pid,
 * and groups) are the kernel's word (SO_PEERCRED, SO_PEERGROUPS); each
 * event the system instance handled is offered to every connection and
 * sent only where the forwarding policy (policy.h) lets that user see it.
 * Each connection has a bounded queue: when it is full the oldest event
 * goes, counted here and told to the user instance, so a user instance
 * that stops reading costs at most that bound.  Nothing is read from a
 * user instance but its hang-up: nothing flows from a user to the system.
 *
 * Each message is one event as a journal record (journal-rec.h), or a
 * drop notice: KUSERS_DROP_MAGIC and the count (u64) of events dropped
 * since the last notice.
 */
#ifndef KEVENT_USERS_SERVER_H
#define KEVENT_USERS_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"
#include "policy.h"

struct kloop;
struct krule;
struct kusers_server;

/* Events queued for one user instance, at most, and their bytes. */
#define KUSERS_QUEUE_MAX       256
#define KUSERS_QUEUE_BYTES_MAX (512 * 1024)
/* Connections at once, in all and for one user. */
#define KUSERS_MAX_PEERS	 256
#define KUSERS_MAX_PEERS_PER_UID 4
#define KUSERS_DROP_MAGIC	 "KUDROP01"

struct kusers_counts {
	size_t peers;
	uint64_t sent, withheld, dropped, refused;
};

/* Listens on path (mode 0666: any local user; a stale socket replaced, a
 * live one refused), the facts of the policy asked through facts (copied).
 * 0 or -errno. */
int kusers_server_new(struct kloop *loop, const char *path, const struct kusers_facts *facts,
		      struct kusers_server **out);
/* Closes every connection and the socket, unlinking it. NULL is fine. */
void kusers_server_free(struct kusers_server *s);

/* ev, handled by the system's rules rules[0..n), for every user instance
 * that may see it. */
void kusers_server_offer(struct kusers_server *s, const struct kevent *ev,
			 const struct krule *const *rules, size_t n);
void kusers_server_counts(const struct kusers_server *s, struct kusers_counts *out);

#endif

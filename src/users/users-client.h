/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user instance's side of the users socket (users-server.h): it
 * connects to the system instance, takes each event it is sent (flagged
 * injected: its own sources did not number it) and hands it to its own
 * rules through its sink, with the source the system gave it; counts
 * the events the system dropped for it (its notices).  When the system
 * instance is not there, or goes, it connects again, waiting 0.5 s, then
 * twice as long each time up to 30 s; what the system handled meanwhile
 * is not sent again.
 */
#ifndef KEVENT_USERS_CLIENT_H
#define KEVENT_USERS_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "source.h"

struct kusers_client;

struct kusers_client_counts {
	bool connected;
	uint64_t received, dropped_at_system, bad, connects;
};

/* Connects to path (now, or later: see above); events to sink (copied).
 * 0 or -ENOMEM. */
int kusers_client_new(const struct ksink *sink, const char *path, struct kusers_client **out);
void kusers_client_free(struct kusers_client *c);
void kusers_client_counts(const struct kusers_client *c, struct kusers_client_counts *out);

#endif

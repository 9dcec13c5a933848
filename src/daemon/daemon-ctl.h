/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's side of the control socket: what each request does (send,
 * post, sync, status, reload, monitor; docs/control-protocol.md), the
 * "socket" event source, and the monitor clients as an observer.  The
 * transport is ctl-server.c; requests reach the handlers through a peer,
 * whose replies go where its ops say, so the handlers can be tested
 * without a socket.
 */
#ifndef KEVENT_DAEMON_CTL_H
#define KEVENT_DAEMON_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl-server.h"
#include "filter.h"
#include "proto.h"
#include "source.h"

struct kdaemon;
struct kdaemon_ctl;
struct kctl_peer;
struct kjob;
struct kudev_trigger;

struct kctl_peer_ops {
	void (*reply)(struct kctl_peer *p, const char *kind, const char *text);
	void (*reply_data)(struct kctl_peer *p, const char *text);
	/* whether lines sent unasked would be over its queue's bound */
	bool (*full)(const struct kctl_peer *p);
	void (*flush)(struct kctl_peer *p);
	/* it asked for what it is sent unasked (monitor) */
	void (*subscribe)(struct kctl_peer *p);
	/* a reply sent as it reads (kctl_client_stream()), s taken; NULL:
	 * the whole text at once through reply_data, then the last reply */
	void (*stream)(struct kctl_peer *p, struct kctl_stream *s);
};

/* One client as the handlers see it. */
struct kctl_peer {
	const struct kctl_peer_ops *ops;
	void *userdata; /* the ops' (the transport's client) */
	pid_t pid;
	uid_t uid;	  /* who acknowledges (ack) */
	uint64_t posts;	  /* post requests read, to name the one an error is about */
	uint64_t dropped; /* monitor lines dropped since the last notice */
	bool monitor, json;
	bool record;	       /* monitor record: whole events (kmonitor_record()), no rules */
	struct kfilter filter; /* a monitor's: the events it is sent */
	/* its trigger, while the devices wait for room in the queue */
	struct kudev_trigger *trigger;
	char trigger_action[16];
	struct kctl_peer *prev, *next; /* in the list of monitors */
};

/* Listens on path for d (path NULL: no socket, requests come only through
 * kdaemon_ctl_request(), for tests).  0 or -errno. */
int kdaemon_ctl_new(struct kdaemon *d, const char *path, gid_t gid, struct kdaemon_ctl **out);
void kdaemon_ctl_free(struct kdaemon_ctl *ctl);
/* Stops listening and drops every client (shutdown). */
void kdaemon_ctl_stop(struct kdaemon_ctl *ctl);
/* job was taken off the queue by a stop: its send --wait is answered. */
void kdaemon_ctl_dropped(struct kdaemon_ctl *ctl, const struct kjob *job);
/* The "socket" event source of the daemon's list (owned by ctl). */
struct ksource *kdaemon_ctl_source(struct kdaemon_ctl *ctl);

/* One request from p: -EAGAIN (only with may_park) when it must wait
 * for room in the daemon's queue, else 0. */
int kdaemon_ctl_request(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m,
			bool may_park);
/* A message from p that is not a request: counted, logged and answered. */
void kdaemon_ctl_bad(struct kdaemon_ctl *ctl, struct kctl_peer *p, enum kctl_bad why,
		     const char *buf, size_t len);
/* p is going away: it is no longer told of events. */
void kdaemon_ctl_forget(struct kdaemon_ctl *ctl, struct kctl_peer *p);

#endif

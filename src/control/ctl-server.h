/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket as a transport (docs/control-protocol.md): listening,
 * admission by credentials and by the slots left, framing, reading
 * requests in batches, "parking" a request that cannot be taken yet, and a
 * bound on the bytes queued to each client.  It knows nothing of what a
 * request means: it calls its owner back with each one, as systemd's
 * udev-ctrl does for the udev manager.
 */
#ifndef KEVENT_CTL_SERVER_H
#define KEVENT_CTL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loop.h"
#include "proto.h"

/* Connections at once; the last one only for root and keventd's own user. */
#define KCTL_MAX_CLIENTS 64
/* Connections of one user other than root and keventd's own. */
#define KCTL_MAX_PER_UID 16
/* A connection keventd read nothing from for this long (a client not read
 * for its unread replies included), not a monitor, is closed when a new
 * one needs its slot. */
#define KCTL_IDLE_NS (60 * 1000000000ull)
/* Bytes of replies queued to one client past which it is not read until it
 * has read some: each message counts its length and KCTL_MSG_COST.  The
 * replies to the request that crossed it are queued whole. */
#define KCTL_OUTQ_BYTES (256 * 1024)
#define KCTL_MSG_COST	32 /* keventd's bookkeeping of a queued message */
/* The most text one data reply carries (kctl_client_reply_data()). */
#define KCTL_DATA_CHUNK (KCTL_MSG_MAX - 64)

struct kctl_server;
struct kctl_client;

/* Why a message was not passed on as a request. */
enum kctl_bad { KCTL_BAD_MALFORMED, KCTL_BAD_TOO_LONG, KCTL_BAD_EMPTY };

/* Why a peer was refused. */
enum kctl_refusal {
	KCTL_REFUSED_PEER,     /* not root, keventd's own user nor in the group */
	KCTL_REFUSED_FULL,     /* every slot taken, none by an idle connection */
	KCTL_REFUSED_RESERVED, /* not root: only the slot kept for root was left */
	KCTL_REFUSED_USER,     /* its user has KCTL_MAX_PER_UID connections */
};

struct kctl_server_ops {
	/* A client connected (0) or refusing it (-errno); its state goes in
	 * kctl_client_set_userdata().  closed() comes for every opened(). */
	int (*opened)(void *userdata, struct kctl_client *c);
	void (*closed)(void *userdata, struct kctl_client *c);
	/*
	 * One request.  With may_park, returning -EAGAIN parks it: the client
	 * is not read until kctl_server_resume(), and the request comes back
	 * then with may_park false, when it must be taken.  It also comes
	 * back, must be taken, before the client's next message is handled, so
	 * a client's requests are handled in order.  Any other return: done.
	 */
	int (*request)(void *userdata, struct kctl_client *c, const struct kctl_msg *m,
		       bool may_park);
	/* A message that is not a request (buf, len: what was received). */
	void (*bad)(void *userdata, struct kctl_client *c, enum kctl_bad why, const char *buf,
		    size_t len);
	/* A peer refused, and why. */
	void (*refused)(void *userdata, pid_t pid, uid_t uid, enum kctl_refusal why);
	/* c, silent for idle_ns, is closed to make room for a new peer
	 * (closed() follows). */
	void (*dropped)(void *userdata, struct kctl_client *c, uint64_t idle_ns);
	/* How many requests may be read now (0: read one, which may park). */
	size_t (*room)(void *userdata);
	/* CLOCK_MONOTONIC in ns, for idleness; NULL: the real one (tests
	 * bring their own). */
	uint64_t (*now)(void *userdata);
	/* Replies are about to go out to a client: what they acknowledge must
	 * be done by then (the journal written).  NULL: nothing to do. */
	void (*before_send)(void *userdata);
	/* A client's batch of requests was taken, and its replies go out
	 * next (before a client that hung up is let go): what the owner put
	 * off answering is answered now.  NULL: nothing to do. */
	void (*taken)(void *userdata);
};

/* The mode of the control socket's directory when keventd makes it: its
 * user's, and searchable by all, so that the group of --control-group
 * reaches the socket, whose own mode says who may connect (keventd(8),
 * --control; docs/SECURITY.md). */
#define KCTL_DIR_MODE 0755

/* Makes the directory of the socket path when it is missing, mode mode
 * (KCTL_DIR_MODE; the user instance's, 0700) whatever the umask; one that
 * is there is left as it is.  0 or -errno. */
int kctl_server_make_dir(const char *path, mode_t mode);

/* A SOCK_SEQPACKET socket listening on path (non-blocking, close-on-exec),
 * as kctl_server_new() makes it: only a stale socket there is replaced;
 * made mode mode, and group gid unless (gid_t)-1, without following a
 * symlink; *dev and *ino say which it is (unlink only that one).  The
 * descriptor, or -errno. */
int kctl_listen(const char *path, mode_t mode, gid_t gid, dev_t *dev, ino_t *ino);
/* Unlinks path if it is still the socket kctl_listen() made there (dev,
 * ino), never one put there since.  NULL path: nothing. */
void kctl_unlink_own(const char *path, dev_t dev, ino_t ino);

/*
 * Listens on path, its parent made if missing (kctl_server_make_dir(); a
 * parent that keeps the group gid out is logged).  Only a stale socket there
 * is replaced: a live one is refused with -EADDRINUSE, anything else (a
 * file, a symlink, a directory) with -EEXIST, logged.  The socket is made
 * mode 0600, or 0660 and group gid unless gid is (gid_t)-1, without
 * following a symlink.  Root, keventd's own user and members of gid are
 * admitted (at most KCTL_MAX_PER_UID connections for each user but root
 * and keventd's own).
 */
int kctl_server_new(struct kloop *loop, const char *path, gid_t gid,
		    const struct kctl_server_ops *ops, void *userdata, struct kctl_server **out);
/* Closes the socket (unlinking its path) and every client.  NULL is fine. */
void kctl_server_free(struct kctl_server *s);
/* Stops listening and drops every client, for shutdown; stays allocated. */
void kctl_server_stop(struct kctl_server *s);
/* Lets parked requests in again, from the loop (not from the caller). */
void kctl_server_resume(struct kctl_server *s);
size_t kctl_server_clients(const struct kctl_server *s);

void kctl_client_set_userdata(struct kctl_client *c, void *userdata);
void *kctl_client_userdata(const struct kctl_client *c);
pid_t kctl_client_pid(const struct kctl_client *c);
uid_t kctl_client_uid(const struct kctl_client *c);
/* A subscriber (a monitor) is sent lines unasked, which its owner drops
 * while kctl_client_full(); it is never closed for being idle. */
void kctl_client_set_subscriber(struct kctl_client *c, bool subscriber);
/* Whether c's queued replies are over KCTL_OUTQ_BYTES (it is not read), or
 * a stream is being sent to it. */
bool kctl_client_full(const struct kctl_client *c);
/* The bytes queued to c, as KCTL_OUTQ_BYTES counts them. */
size_t kctl_client_queued(const struct kctl_client *c);

/* Queues one message of fields to c.  Silently nothing when c cannot be
 * written to any more, or the message would be over KCTL_MSG_MAX. */
void kctl_client_send(struct kctl_client *c, const char *const *fields, size_t n);
/* kind, and text unless NULL: "ok", "err" or "data" replies. */
void kctl_client_reply(struct kctl_client *c, const char *kind, const char *text);
/* text as data replies cut at line ends where it must be cut. */
void kctl_client_reply_data(struct kctl_client *c, const char *text);
/* Sends what the socket takes now; the rest when it is writable. */
void kctl_client_flush(struct kctl_client *c);

/*
 * A reply made as the client reads it, so that what keventd holds for it
 * stays within KCTL_OUTQ_BYTES whatever it asks: its text, a part at a
 * time (a cursor into what it shows), then its last message.
 */
struct kctl_stream {
	/* Appends the next part of the text to out (an entry, a rule: a few
	 * KiB at most); false, appending nothing, once all of it is out. */
	bool (*next)(struct kctl_stream *s, struct strbuf *out);
	/* Once next() said false: the last reply, kind "ok" or "err" and
	 * its text (NULL: none), valid until free(). */
	void (*end)(struct kctl_stream *s, const char **kind, const char **text);
	void (*free)(struct kctl_stream *s);
};

/*
 * Sends s's text as data replies, cut where kctl_client_reply_data() cuts
 * it, each part rendered only while c's queued replies are under
 * KCTL_OUTQ_BYTES, then its last reply; s is taken (and freed once done,
 * or with c).  Until then nothing more is read from c, kctl_client_full()
 * is true (a monitor's lines are dropped), and other replies sent to c
 * wait to follow it.
 */
void kctl_client_stream(struct kctl_client *c, struct kctl_stream *s);

#endif

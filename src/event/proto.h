/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control protocol (see docs/control-protocol.md).  The socket is
 * SOCK_SEQPACKET, so every message arrives whole or not at all; a message
 * is up to KCTL_MSG_MAX bytes of NUL-terminated fields:
 *   request:  COMMAND\0ARG\0...
 *   replies:  data\0TEXT\0 (any number), then ok\0[TEXT\0] or err\0TEXT\0
 */
#ifndef KEVENT_PROTO_H
#define KEVENT_PROTO_H

#include <stddef.h>

#include "event.h"
#include "util.h"

#define KCTL_MSG_MAX	8192
#define KCTL_FIELDS_MAX 8
/* The last reply of a send-wait whose event a stop left in the journal
 * (instead of the count of failed runs): its next start runs it again. */
#define KCTL_WAIT_REDELIVERED "redelivered"

struct kctl_msg {
	const char *f[KCTL_FIELDS_MAX];
	size_t n;
};

/* Splits buf (len bytes, the last one NUL) into fields pointing into buf.
 * Returns 0, or -EBADMSG (empty, unterminated, or too many fields). */
int kctl_decode(const char *buf, size_t len, struct kctl_msg *m);
/*
 * The event of a send or post request, COMMAND TYPE OBJECT SIGNAL [PAYLOAD],
 * as a "socket" event numbered seqnum.  Returns 0 and *out; -EBADMSG when
 * the request has too few or too many fields; -EINVAL with *why when the
 * fields are not a valid event (limits in docs/keventd.8); -ENOMEM.
 */
int kctl_event_from_msg(const struct kctl_msg *m, uint64_t seqnum, uint64_t timestamp,
			struct kevent **out, const char **why);
/*
 * The same for COMMAND SOURCE TYPE OBJECT SIGNAL [PAYLOAD] (test-run,
 * post-as): an event of SOURCE (a name of KEVENT_SOURCE_LIST), marked
 * injected.  -EINVAL with *why for an unknown source too.
 */
int kctl_event_from_msg_as(const struct kctl_msg *m, uint64_t seqnum, uint64_t timestamp,
			   struct kevent **out, const char **why);
/*
 * A trigger request, trigger ACTION [SUBSYSTEMS]: ACTION add or change,
 * SUBSYSTEMS a comma-separated list of subsystem names ([A-Za-z0-9_.:-],
 * at most KCTL_TRIGGER_MAX of them; none or "": every subsystem).  Returns
 * 0 with *action and the names copied into list (each up to
 * KCTL_SUBSYSTEM_MAX bytes with its NUL) and *n; -EBADMSG with *why.
 */
#define KCTL_TRIGGER_MAX   32
#define KCTL_SUBSYSTEM_MAX 64
int kctl_trigger_from_msg(const struct kctl_msg *m, const char **action,
			  char list[KCTL_TRIGGER_MAX][KCTL_SUBSYSTEM_MAX], size_t *n,
			  const char **why);
/* Appends one message of n fields to sb (which it resets first). */
int kctl_encode(struct strbuf *sb, const char *const *fields, size_t n);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a notification says (keventd.rules(5), NOTIFICATIONS): made once,
 * when the event comes, from the rule's title: and message: templates or
 * the defaults, into a record of the queue (notify-rec.h); and how each
 * kind of target is sent it: a mail, an ntfy publication, a Gotify message,
 * a web hook's JSON.  Pure.
 */
#ifndef KEVENT_NOTIFY_MSG_H
#define KEVENT_NOTIFY_MSG_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "notify-rec.h"
#include "rules.h"
#include "util.h"

/* The delivery's id: the same for the same event (its instance, source,
 * sequence number and time), rule and target, so that an event handled
 * again after a restart finds its delivery still queued. */
uint64_t knotify_msg_id(const struct kevent *ev, const struct krule *r, const char *target);

/* Fills *out (knotify_rec_release()) with the notification of ev for
 * rule r to target: id, created (now_s), severity (the payload's
 * Severity:), the title and message (r's templates, or the defaults: the
 * title says host, the condition or the signal, and the object; the
 * message the payload and the event), the event's JSON object (with
 * host); retry when ev was handled before (redelivered).  host: the
 * machine the event is of (ev->host, else this one's).  0 or -ENOMEM. */
int knotify_msg_make(const struct krule *r, const struct kevent *ev, const char *target,
		     const char *host, uint64_t now_s, struct knotify_rec *out);

/* The mail of rec (CRLF lines, RFC 5322): Date, From, To, Subject (the
 * title, after "[critical] " or "[warning] " or "[info] " for a severity;
 * RFC 2047 words where it is not ASCII), Message-ID (of the id: the same
 * for every try), X-Keventd-Id and, retry, X-Keventd-Retry: yes. */
void knotify_mail(const struct knotify_rec *rec, bool retry, const char *from, char *const *to,
		  size_t n_to, const char *host, struct strbuf *out);
/* The header lines ("Name: value\n") of an ntfy publication of rec: Title,
 * Priority (knotify_ntfy_priority()), Tags, X-Keventd-Id, and retry's;
 * its body is the message. */
void knotify_ntfy_headers(const struct knotify_rec *rec, bool retry, struct strbuf *out);
int knotify_ntfy_priority(enum knotify_severity s);
/* The JSON body of Gotify's POST /message. */
void knotify_gotify_body(const struct knotify_rec *rec, bool retry, struct strbuf *out);
int knotify_gotify_priority(enum knotify_severity s);
/* A web hook's body: the event's JSON object with "notification": {id,
 * target, rule, title, message, severity, retry, test}. */
void knotify_webhook_body(const struct knotify_rec *rec, bool retry, struct strbuf *out);
/* s as one header value: control characters as spaces, and the whole as
 * RFC 2047 encoded words ("=?UTF-8?B?...?=") when it is not ASCII. */
void knotify_header_text(const char *s, struct strbuf *out);

#endif

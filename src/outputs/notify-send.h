/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One try of one notification: a libcurl handle made for its target (the
 * mail over SMTP with STARTTLS or TLS and AUTH; an HTTPS POST for a web
 * hook, ntfy or Gotify) from a record of the queue, and what became of it.
 * The notifier (notifier.h) drives the handles of keventd's loop; keventctl
 * notify test performs one and waits.  kcurl_load() must have succeeded.
 */
#ifndef KEVENT_NOTIFY_SEND_H
#define KEVENT_NOTIFY_SEND_H

#include <stdbool.h>
#include <stddef.h>

#include "notify-config.h"
#include "notify-rec.h"
#include "util.h"

#define KNOTIFY_CONNECT_TIMEOUT_MS 10000
#define KNOTIFY_TIMEOUT_MS	   60000
#define KNOTIFY_ANSWER_MAX	   512 /* bytes of the server's answer kept */
#define KNOTIFY_SECRET_MAX	   4096

/* A target's secrets, read once at start. */
struct knotify_secrets {
	char *password; /* the first line of password_file */
	char *token;	/* the first line of token_file */
	char *secret;	/* secret_file, less a last newline */
	size_t secret_len;
};

/* Reads t's secret files, each a regular file that group and others cannot
 * read (as the MQTT broker's password).  0, or -errno with *why (static)
 * and *file (the path). */
int knotify_secrets_load(const struct knotify_target *t, struct knotify_secrets *out,
			 const char **why, const char **file);
void knotify_secrets_release(struct knotify_secrets *s);
/* One secret file, path: a regular file that group and others cannot
 * read, of at most KNOTIFY_SECRET_MAX bytes, not empty.  Its first line
 * (first_line) or its text less a last newline into *out (and *len, if
 * not NULL).  0, or -errno with *why (static). */
int knotify_secret_read(const char *path, char **out, size_t *len, bool first_line,
			const char **why);

/* What a try came to. */
enum knotify_outcome {
	KNOTIFY_SENT,	    /* the server took it */
	KNOTIFY_NOT_SENT,   /* it never reached the server (no connection): try again */
	KNOTIFY_MAYBE_SENT, /* it may have reached the server: try again, flagged a retry */
	KNOTIFY_REFUSED,    /* the server refused this one for good: dropped */
};

struct knotify_xfer;

/* A handle for one try of rec to t (retry: flagged so), or -ENOMEM. */
int knotify_xfer_new(const struct knotify_target *t, const struct knotify_secrets *s,
		     const struct knotify_rec *rec, bool retry, const char *host,
		     struct knotify_xfer **out);
/* Its CURL handle, for a multi handle. */
void *knotify_xfer_easy(struct knotify_xfer *x);
/* What it came to, given libcurl's result (a CURLcode); answer gets the
 * server's words (the HTTP status and the start of the body; SMTP's last
 * reply) or libcurl's. */
enum knotify_outcome knotify_xfer_done(struct knotify_xfer *x, int code, struct strbuf *answer);
/* NULL is fine. */
void knotify_xfer_free(struct knotify_xfer *x);

/* Sends rec to t now and waits (keventctl notify test): its outcome, the
 * answer in answer. */
enum knotify_outcome knotify_send_now(const struct knotify_target *t,
				      const struct knotify_secrets *s,
				      const struct knotify_rec *rec, const char *host,
				      struct strbuf *answer);

#endif

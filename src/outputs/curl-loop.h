/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcurl's multi interface driven by keventd's loop (loop.h): each socket
 * libcurl wants watched is a watch of the loop, its timeout one timer, so
 * that no transfer ever blocks the loop or another transfer.  The
 * notifications (notifier.h) use one; so may any output that speaks HTTP.
 * kcurl_load() must have succeeded.
 */
#ifndef KEVENT_CURL_LOOP_H
#define KEVENT_CURL_LOOP_H

#include <stddef.h>

#include "loop.h"

struct kcurl_loop;

/* done(priv, code, userdata): a transfer ended, with libcurl's result (a
 * CURLcode) and its CURLOPT_PRIVATE; it is out of the multi handle, and
 * the caller's to free or add again. */
typedef void (*kcurl_done_fn)(void *priv, int code, void *userdata);

int kcurl_loop_new(struct kloop *loop, kcurl_done_fn done, void *userdata, struct kcurl_loop **out);
/* Starts the transfer of easy (a CURL handle with CURLOPT_PRIVATE set). */
int kcurl_loop_add(struct kcurl_loop *c, void *easy);
/* Stops it, if it runs; done() is not called for it. */
void kcurl_loop_remove(struct kcurl_loop *c, void *easy);
/* Transfers still running. */
int kcurl_loop_running(const struct kcurl_loop *c);
/* Frees the multi handle, its watches and timer; the transfers added must
 * have been removed first.  NULL is fine. */
void kcurl_loop_free(struct kcurl_loop *c);

struct strbuf;
/* A transfer's write callback's work: of the len bytes the server sent,
 * what fits in answer's first max bytes is kept (for status and the log);
 * returns len, so that libcurl reads on. */
size_t kcurl_keep_answer(struct strbuf *answer, size_t max, const char *buf, size_t len);

#endif

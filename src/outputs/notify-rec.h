/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A record of the notifications' queue (notify-queue.h): one delivery to
 * one target, written whole in a file of its own, and its reader, a pure
 * function over the file's bytes that a fuzzer drives.
 *
 * The file is text: a first line "keventd-notify 1 SUM LEN", SUM the
 * FNV-1a hash (16 hex digits) of the LEN bytes that follow, which are
 * fields in a fixed order, each "NAME LEN\n" and LEN bytes and "\n":
 * id (16 hex digits), created (seconds since the epoch), flags ("-", or
 * "r" for a delivery that may have been made before, "t" for a test),
 * severity (none, info, warning, critical), target, rule, title, message
 * and json (the event's JSON object for a web hook).  Anything else,
 * a byte more or less, or a sum that does not hold, is a damaged record.
 */
#ifndef KEVENT_NOTIFY_REC_H
#define KEVENT_NOTIFY_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define KNOTIFY_REC_MAX	      (1024 * 1024) /* a record's bytes at most */
#define KNOTIFY_REC_TITLE_MAX 1024
#define KNOTIFY_REC_TEXT_MAX  (64 * 1024) /* the message's bytes at most */
#define KNOTIFY_REC_JSON_MAX  (512 * 1024)

enum knotify_severity {
	KNOTIFY_SEV_NONE,
	KNOTIFY_SEV_INFO,
	KNOTIFY_SEV_WARNING,
	KNOTIFY_SEV_CRITICAL,
};

struct knotify_rec {
	uint64_t id;	  /* the delivery's: the same for the same event, rule and target */
	uint64_t created; /* seconds since the epoch */
	bool retry;	  /* it may have reached the target before */
	bool test;	  /* keventctl notify test */
	enum knotify_severity severity;
	char *target, *rule, *title, *message, *json;
};

const char *knotify_severity_name(enum knotify_severity s);
/* "info", "warning", "critical" (any case); NONE for anything else. */
enum knotify_severity knotify_severity_from(const char *s);

/* Appends r's file to out (strbuf's oom says whether it fit in memory). */
void knotify_rec_encode(const struct knotify_rec *r, struct strbuf *out);
/* Reads a record's file: 0 with *out (knotify_rec_release()), -EINVAL
 * with *why (static) for bytes that are not a whole valid record, or
 * -ENOMEM. */
int knotify_rec_decode(const char *buf, size_t len, struct knotify_rec *out, const char **why);
void knotify_rec_release(struct knotify_rec *r);

/* FNV-1a, 64 bits, of len bytes from p, on from h (start with
 * KNOTIFY_FNV_INIT). */
#define KNOTIFY_FNV_INIT 0xcbf29ce484222325ull
uint64_t knotify_fnv(uint64_t h, const void *p, size_t len);

#endif

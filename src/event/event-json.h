/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The JSON object of an event: one encoder for `keventctl monitor --json`,
 * `keventctl record` and whatever else shows an event as JSON, and the
 * reader of `keventctl replay` (json-c).  Keys: seqnum, timestamp, source,
 * type, object, signal, payload, properties (keventctl(8)); a record adds
 * payload_base64 when the payload is not valid UTF-8, so that its bytes
 * come back as they were.  Pure.
 */
#ifndef KEVENT_EVENT_JSON_H
#define KEVENT_EVENT_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"
#include "util.h"

/* Appends '{' and the keys that say which event it was (seqnum,
 * timestamp, source, type, object, signal), leaving the object open: the
 * head of every event's JSON, also of one kept without its payload
 * (keventctl events --json). */
void kevent_json_head(struct strbuf *sb, uint64_t seqnum, uint64_t timestamp,
		      enum kevent_source source, enum kevent_type type, const char *object,
		      const char *signal);
/* Appends '{' and ev's keys, payload standing for ev's own (brief: it was
 * cut, and says so with "truncated":true, and no properties), leaving the
 * object open for the caller's keys and its '}'. */
void kevent_json_open(struct strbuf *sb, const struct kevent *ev, const char *payload, bool brief);
/* Appends the whole event as one JSON line (with its '\n'): the record. */
void kevent_json_record(struct strbuf *sb, const struct kevent *ev);

/*
 * Reads one record: an object with at least type, object and signal, and
 * payload (or payload_base64), source, seqnum and timestamp when given
 * (else "", socket, 0 and 0).  Other keys are ignored.  Returns 0 with
 * *out (kevent_free()), -EINVAL with *why (a static text) for input that
 * is not a valid record, or -ENOMEM.
 */
int kevent_json_read(const char *line, size_t len, struct kevent **out, const char **why);

#endif

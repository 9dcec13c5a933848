/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table of mqtt-dedupe.h across a restart: the file mqtt-seen in the
 * state directory, written whole (a new file renamed over the old one) a
 * round of the loop after the messages it names were journaled, so that a
 * message it names is one the journal holds or has run.  A file that is
 * not whole and well formed is not read at all: keventd starts without
 * it, and a redelivery then runs twice rather than never.  Nor is one of
 * an older keventd, whose hosts were the messages' word, not the topics'.
 */
#ifndef KEVENT_MQTT_DEDUPE_FILE_H
#define KEVENT_MQTT_DEDUPE_FILE_H

#include <stddef.h>

#include "mqtt-dedupe.h"
#include "util.h"

#define KMQTT_DEDUPE_FILE "mqtt-seen"

/* The file's bytes for d's streams, least recently used first. */
void kmqtt_dedupe_encode(const struct kmqtt_dedupe *d, struct strbuf *out);
/* Restores the streams of buf into d.  The number of streams, -EINVAL
 * with *why (static; d is then as it was, or holds some of them), or
 * -ENOMEM.  Pure: a fuzzer drives it. */
int kmqtt_dedupe_decode(struct kmqtt_dedupe *d, const void *buf, size_t len, const char **why);
/* Reads mqtt-seen of the state directory dirfd (statedir.h) into d: the
 * streams restored, 0 without a file, -errno (with *why when it is the
 * file's content; else kstatedir_strerror()). */
int kmqtt_dedupe_load(struct kmqtt_dedupe *d, int dirfd, const char **why);
/* Writes d to mqtt-seen in dirfd and marks it clean.  0 or -errno. */
int kmqtt_dedupe_save(struct kmqtt_dedupe *d, int dirfd);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An event source: something that turns outside input into bounded,
 * checked events and hands them to the daemon with kdaemon_submit().
 * Each source lives in its own file (source-*.c) behind this interface.
 */
#ifndef KEVENT_SOURCE_H
#define KEVENT_SOURCE_H

#include <stdbool.h>

#include "event.h"

struct kdaemon;

struct ksource {
	const char *name;
	enum kevent_source kind;
	/* Stop (true) or resume (false) reading: the daemon's queue is full. */
	void (*pause)(struct ksource *s, bool pause);
	/* Stop reading for good (shutdown); the source stays allocated. */
	void (*stop)(struct ksource *s);
	void (*free)(struct ksource *s);
};

#endif

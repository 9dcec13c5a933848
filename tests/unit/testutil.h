/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the unit tests: parsing, events and scratch trees. */
#ifndef KEVENT_TESTUTIL_H
#define KEVENT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "event.h"
#include "rules.h"
#include "ruleset.h"

/* Parses yaml as file path (default "t.yaml"); fails the test, printing the
 * diagnostics, if it does not parse. */
struct kfile *tu_parse(const char *yaml, const char *path);
/* Parses yaml expecting failure; returns the diagnostics and checks that
 * the output stayed NULL. */
struct kdiags tu_parse_fail(const char *yaml, const char *path);
/* A checked event from the socket source, seqnum 1, timestamp 2. */
struct kevent *tu_event(int type, const char *object, const char *signal, const char *payload);
/* Formats a diagnostic as "FILE:LINE:COLUMN: error: MESSAGE" (malloc'd). */
char *tu_diag(const struct kdiag *d);
char *tu_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Makes a fresh directory under TMPDIR (or /tmp), mode 0755. */
char *tu_mkdtemp(void);
/* Makes dir/sub, mode 0755, and returns its path. */
char *tu_subdir(const char *dir, const char *sub);
/* Writes a file with the given contents and mode. */
void tu_write(const char *dir, const char *name, const char *content, mode_t mode);
void tu_rm_rf(const char *path);

#endif

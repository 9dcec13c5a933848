/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The condition table's file, "conditions" in --lib-dir (keventd(8)):
 * pure encode and decode, the writing is store.c's.  Text, a line each:
 *
 *   keventd-conditions 1
 *   seq N                         the condition source's last seqnum
 *   mark socket BOOT SEQ          the last socket event weighed, its boot
 *   mark kernel INSTANCE SEQ      the last kernel event weighed
 *   row F1 F2 ... F20             a row (table.h), tab-separated
 *   end ROWS SUM                  the row count, FNV-1a of all before
 *
 * Every text field is written as strbuf_add_name() escapes it (no tab,
 * no newline, injective), numbers in decimal.  A file that is not whole
 * or not this (a wrong sum, a bad field, a line cut) is refused whole:
 * the decoder says the line and why, and never leaves half a table.
 */
#ifndef KEVENT_COND_FILE_H
#define KEVENT_COND_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"
#include "util.h"

#define KCOND_FILE_NAME	   "conditions"
#define KCOND_FILE_VERSION 1
/* the largest file read: the rows' bound at their largest */
#define KCOND_FILE_MAX (256u << 20)

/* What the table keeps besides its rows (cond.h): the numbering of the
 * condition events, and the last events of the sources that are handed
 * again after a kill (the journal's socket events, the kernel's ring)
 * whose change the table already has. */
struct kcond_marks {
	uint64_t seq; /* the last condition event's seqnum */
	char boot[40];
	uint64_t socket_seq;
	uint64_t kernel_instance, kernel_seq;
};

/* The whole file of t and m into out (reset first).  0, or -ENOMEM. */
int kcond_file_encode(const struct kcond_table *t, const struct kcond_marks *m, struct strbuf *out);
/* Reads buf (len bytes) into t (initialized, empty) and m.  0; -EINVAL
 * with *line (1-based, 0: the whole file) and *why (static) when it is
 * not a whole table file, t then emptied; -ENOMEM. */
int kcond_file_decode(const char *buf, size_t len, struct kcond_table *t, struct kcond_marks *m,
		      unsigned *line, const char **why);

#endif

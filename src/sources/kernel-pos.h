/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel source's position file (keventd(8), FILES): the instance of
 * kevent.ko and the last sequence number handled, and optionally the
 * numbers at or below it that were not handled (dropped from the queue at
 * a stop) and that the next start fetches again:
 *
 *	INSTANCE LAST
 *	redo SEQ SEQ...
 *
 * INSTANCE is not 0; the SEQs are ascending, each from 1 to LAST; each
 * line ends with a newline (the last one may lack it).  A file of the
 * first line alone, as older keventd wrote it, is a position with
 * nothing to redo.  Pure: no I/O.
 */
#ifndef KEVENT_KERNEL_POS_H
#define KEVENT_KERNEL_POS_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct kkernel_pos {
	uint64_t instance;
	uint64_t last;
	uint64_t *redo; /* malloc'd, n_redo of them; NULL when none */
	size_t n_redo;
};

/* Parses len bytes of text.  0 with *pos (free its redo with
 * kkernel_pos_release()); -EINVAL: not a position; -ENOMEM. */
int kkernel_pos_parse(const char *text, size_t len, struct kkernel_pos *pos);
void kkernel_pos_release(struct kkernel_pos *pos);

/* Appends the file's text for pos to sb (no redo line when n_redo is 0;
 * the redo numbers as given: ascending, each from 1 to last). */
void kkernel_pos_format(const struct kkernel_pos *pos, struct strbuf *sb);

#endif

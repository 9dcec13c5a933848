/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The socket source's event numbers across restarts (keventd(8), THE
 * JOURNAL): "socket-seqnum" in the state directory holds a number no
 * event has been given yet.  A keventd reserves a block of
 * KSEQFILE_STRIDE numbers at a time, writing the file only when it takes
 * the next block, and writes the last number given at a clean stop; so a
 * killed keventd's successor starts past every number the dead one could
 * have given, and a stopped one's continues where it left off.
 */
#ifndef KEVENT_SEQFILE_H
#define KEVENT_SEQFILE_H

#include <stdint.h>

struct kstatedir;

#define KSEQFILE_NAME	"socket-seqnum"
#define KSEQFILE_STRIDE 4096

struct kseqfile {
	int fd;		   /* -1: no state directory, or it cannot be written */
	uint64_t last;	   /* the last number given */
	uint64_t reserved; /* numbers up to this one are the file's */
};

/* Opens (creates) the file in the state directory dir (statedir.h) and
 * reads where numbering goes on.  dir NULL, or a file that cannot be
 * opened or is refused: numbering starts at 1 and is not kept (0 is
 * returned either way, with what went wrong logged). */
int kseqfile_open(struct kseqfile *s, const struct kstatedir *dir);
/* The next number (never 0): the block it is in is reserved first. */
uint64_t kseqfile_next(struct kseqfile *s);
/* Numbers at or below n are taken (an event read back from the journal). */
void kseqfile_seen(struct kseqfile *s, uint64_t n);
/* Writes the last number given and closes the file. */
void kseqfile_close(struct kseqfile *s);

#endif

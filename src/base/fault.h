/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fault points, a test hook (keventd(8), ENVIRONMENT): with
 * KEVENTD_FAULT=POINT:N[:segv] in its environment, keventd kills itself
 * with SIGKILL (or SIGSEGV) the Nth time it passes POINT, so that a test
 * can stop it at a moment of its choosing, after writing "fault point
 * reached: injected crash at POINT (SIGNAL)" to stderr.  With the variable
 * set (KEVENTD_FAULT=none arms no point), a SIGSEGV that another process
 * sends is marked as well ("fault: injected crash: SIGSEGV sent by another
 * process"), and a real one is not: a test tells the two apart.  Without
 * the variable a point costs one test of a pointer.  The points:
 *
 *   accepted   an event handed over, not yet in the journal
 *   journaled  the journal written, its events not yet acknowledged
 *   positioned a source's position file written (kmsg.pos)
 *   replied    replies sent to a client of the control socket
 *   spawned    a handler started
 *   exited     a job's runs over, its event not yet retired
 */
#ifndef KEVENT_FAULT_H
#define KEVENT_FAULT_H

extern const char *kfault_point;

/* Reads KEVENTD_FAULT; a value it cannot read arms nothing (and says so
 * through the return value: -EINVAL, else 0, or -errno when the SIGSEGV
 * marking cannot be set up). */
int kfault_init(void);

void kfault_pass(const char *point);

static inline void kfault(const char *point)
{
	if (kfault_point)
		kfault_pass(point);
}

#endif

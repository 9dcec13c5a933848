/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Spawning one handler: direct exec of the plan's argv with its exact
 * environment, stdin from /dev/null, stdout and stderr into pipes, every
 * other descriptor closed, cwd "/", umask 022, default signal dispositions
 * and an empty mask, in a session (and process group) of its own so that
 * the whole group can be signalled.
 */
#ifndef KEVENT_EXEC_H
#define KEVENT_EXEC_H

#include <stdbool.h>
#include <sys/types.h>

#include "plan.h"
#include "rules.h"

struct kproc {
	pid_t pid;
	int pidfd;  /* readable when the process has exited */
	int out_fd; /* read ends, non-blocking */
	int err_fd;
};

/*
 * Finds a program as execve() would, searching PATH (the handler's) when
 * it has no '/'.  Returns 0 and a malloc'd path, or -ENOENT / -EACCES.
 */
int kexec_resolve(const char *prog, char **out);

/* Spawns the plan for rule r (its user, if any).  0 with *p filled, or -errno
 * with *what naming the step that failed. */
int kexec_spawn(const struct kplan *plan, const struct krule *r, struct kproc *p,
		const char **what);

/*
 * Closes every descriptor from lowfd up: close_range() (when
 * try_close_range and the kernel has it), else each one /proc/self/fd
 * lists, else each number below the descriptor limit.  Async-signal-safe
 * and malloc-free, for a child between fork and exec.  0, or -errno.
 */
int kexec_close_from(int lowfd, bool try_close_range);

/* Closes the descriptors of p. */
void kproc_close(struct kproc *p);

#endif

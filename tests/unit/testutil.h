/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the unit tests: parsing, events and scratch trees. */
#ifndef KEVENT_TESTUTIL_H
#define KEVENT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "event.h"
#include "exec.h"
#include "loop.h"
#include "rules.h"
#include "ruleset.h"
#include "yamltree.h"

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
/* stderr into a file for the length of a step: tu_capture_begin(), then
 * tu_capture_end() restores it and returns what was written (malloc'd). */
struct tu_capture {
	int saved, fd;
};
void tu_capture_begin(struct tu_capture *c);
char *tu_capture_end(struct tu_capture *c);
/* Makes a fresh directory under TMPDIR (or /tmp), mode 0755. */
/* The YAML tree of text, which must parse (the test fails otherwise). */
struct ynode *tu_yaml(const char *text);
char *tu_mkdtemp(void);
/* dir opened as a directory (O_DIRECTORY): a state directory's
 * descriptor for the functions that take one; close() it. */
int tu_dirfd(const char *dir);
/* dir as keventd's state directory (statedir.h: checked, its state.lock
 * taken); kstatedir_free() it. */
struct kstatedir *tu_statedir(const char *dir);
/* Makes dir/sub, mode 0755, and returns its path. */
char *tu_subdir(const char *dir, const char *sub);
/* Writes a file with the given contents and mode. */
void tu_write(const char *dir, const char *name, const char *content, mode_t mode);
void tu_rm_rf(const char *path);
/* A scratch tree of the three rule directories, highest first:
 * ROOT/etc, ROOT/run, ROOT/lib; tu_tree_free() removes it. */
struct tu_tree {
	char *root, *etc, *run, *lib;
	const char *dirs[3];
};
void tu_tree_make(struct tu_tree *t);
void tu_tree_free(struct tu_tree *t);
/* A malloc'd copy of a NULL-terminated string vector (strv_free() it). */
char **tu_strv_dup(char *const *v);

/* Skips the running test, printing why.  cmocka counts a skip as a pass, so
 * the program's exit status would not show it: the skip is counted for
 * tu_result(). */
#define tu_skip(...)                     \
	do {                             \
		tu_skipped(__VA_ARGS__); \
		skip();                  \
	} while (0)
void tu_skipped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* main()'s exit status from cmocka_run_group_tests()'s FAILED: the failures
 * if any, else 77 (ctest: skipped) when a test skipped, else 0. */
int tu_result(int failed);

/* What SIGTERM does to a child of tu_spawn(). */
enum tu_term {
	TU_TERM_DIE,	/* the default: it is killed by it */
	TU_TERM_IGNORE, /* nothing: only SIGKILL ends it */
	TU_TERM_EXIT,	/* it exits with its status */
};

/* How a child of tu_spawn() behaves. */
struct tu_child {
	int status;	   /* what it exits with */
	bool hang;	   /* it waits for a signal instead of exiting at once */
	enum tu_term term; /* set before any SIGTERM can reach it */
};

/* Starts a child and fills *p as kexec_spawn() does: its pid, a pidfd,
 * and the read ends (non-blocking, close-on-exec) of the pipes that are
 * its stdout and stderr, in a process group of its own.  0 or -errno. */
int tu_spawn(const struct tu_child *how, struct kproc *p);
/* Kills and reaps pid if it is a child not reaped yet: what a test that
 * failed half-way leaves behind. */
void tu_reap(pid_t pid);

/* A bound on how long a test runs its loop. */
struct tu_deadline {
	struct kloop *loop;
	struct ktimer *timer;
	bool expired;
};

/* After ms milliseconds, kloop_exit(l, -ETIME) and expired. */
void tu_deadline_arm(struct tu_deadline *dl, struct kloop *l, uint64_t ms);
/* Runs the loop until kloop_exit().  Returns false if the deadline ended
 * it; otherwise disarms the deadline and checks the loop's return of 0. */
bool tu_deadline_run(struct tu_deadline *dl);

/* Calls then(userdata) from the loop once cond(userdata) holds, asking
 * every millisecond: for a state only the code under test knows (its
 * queue is empty, say).  Put a deadline on the loop too. */
struct tu_poll {
	struct kloop *loop;
	struct ktimer *timer;
	bool (*cond)(void *userdata);
	void (*then)(void *userdata);
	void *userdata;
};
void tu_poll_arm(struct tu_poll *p, struct kloop *l, bool (*cond)(void *), void (*then)(void *),
		 void *userdata);
/* Stops asking (when the deadline came first). */
void tu_poll_cancel(struct tu_poll *p);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rule directories: which .yaml files of them make the rules, after
 * layering (a name in a higher directory hides it below), masking (an empty
 * file or a symlink to /dev/null) and the trust checks.
 */
#ifndef KEVENT_RULEDIRS_H
#define KEVENT_RULEDIRS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h" /* KEVENT_RULES_DIR_ETC, _RUN, _LIB */
#include "diag.h"

extern const char *const kevent_default_rule_dirs[3];

/* One drop-in of a rule file, after layering. */
struct kentry_dropin {
	char *name;
	char *path;
	bool masked, refused; /* as a rule file's */
};

/* One candidate rule file after layering, with its drop-ins: the *.yaml of
 * NAME.d/ in every directory, a name in a higher directory hiding the same
 * name below, ordered by name (keventd.rules(5), DROP-INS). */
struct kentry {
	char *name;
	char *path;
	bool masked;  /* empty file or symlink to /dev/null */
	bool refused; /* failed the trust or type checks; a diag says why */
	struct kentry_dropin *dropins;
	size_t n_dropins;
	bool dropin_refused; /* a drop-in (or its directory) was: the file is broken */
};

struct kentries {
	struct kentry *v;
	size_t n;
};

/*
 * Lists the .yaml files of dirs (highest precedence first): a name in a
 * higher directory hides the same name below; the result is ordered by
 * name.  Missing directories are skipped.  With trust, a directory or file
 * owned by neither root nor keventd's user (geteuid(): root itself for
 * the system instance) or writable by group or others is refused.  Symlinks
 * are followed only to /dev/null (a mask) or into one of dirs.
 */
int kentries_scan(const char *const *dirs, size_t n_dirs, bool trust, struct kentries *out,
		  struct kdiags *diags);
void kentries_free(struct kentries *e);

/* Finds en's drop-ins in NAME.d/ of each of dirs (highest first), as
 * kentries_scan() does for the files it lists: for one file alone. */
int kentry_scan_dropins(struct kentry *en, const char *const *dirs, size_t n_dirs, bool trust,
			struct kdiags *diags);
void kentry_release(struct kentry *en);

/* Checks an open rule file: a regular file, and with trust, owned by root (or
 * keventd's user) and
 * not writable by group or others.  NULL, or a static reason. */
const char *kentry_check_fd(int fd, bool trust);

#endif

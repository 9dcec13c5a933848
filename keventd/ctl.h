/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keventctl's commands, one file each. */
#ifndef KEVENTCTL_H
#define KEVENTCTL_H

#include <stdbool.h>

/* Exit statuses shared by every command. */
#define EXIT_USAGE 2

struct ctl {
	const char *control; /* control socket path */
};

int ctl_verify(struct ctl *c, int argc, char **argv);
int ctl_test(struct ctl *c, int argc, char **argv);

/* Prints "keventctl: " and a message to stderr, returns EXIT_USAGE. */
int ctl_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Rule files are trust-checked exactly when keventd would: running as root. */
bool ctl_trust(void);

#endif

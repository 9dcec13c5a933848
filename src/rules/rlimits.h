/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A rule's resource limits for its handler ("limits:" in a rule). */
#ifndef KEVENT_RLIMITS_H
#define KEVENT_RLIMITS_H

#include <stdint.h>

#define KRLIMITS_MAX 10

struct krlimit {
	int resource;	/* RLIMIT_* */
	uint64_t value; /* soft and hard; UINT64_MAX for infinity */
};

/*
 * Parses one limit: name one of as, core, cpu, data, fsize, memlock, nofile,
 * nproc, stack; value "infinity", a count (nofile, nproc), a duration (cpu,
 * whole seconds, rounded up) or a size with an optional K, M, G or T suffix
 * (powers of 1024) for the others.  0, or -EINVAL with *why.
 */
int krlimit_parse(const char *name, const char *value, struct krlimit *out, const char **why);
const char *krlimit_name(int resource);

#endif

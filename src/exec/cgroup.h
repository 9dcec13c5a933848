/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A cgroup per handler run (keventd(8), CONTAINMENT): when keventd has a
 * cgroup v2 subtree delegated to it, it moves itself into a leaf of its
 * own, "keventd", and makes each run a sibling of that leaf, with the
 * rule's limits; when the run is over, cgroup.kill ends whatever is left
 * in it and the cgroup is removed.  These functions do the file system
 * work and never log: the runner and the daemon say what happened.
 */
#ifndef KEVENT_CGROUP_H
#define KEVENT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

#define KCGROUP_LEAF	 "keventd"
#define KCGROUP_NAME_MAX 112 /* a run's cgroup name, with its NUL */

/* The controllers the limits need, as a mask. */
enum {
	KCGROUP_MEMORY = 1 << 0,
	KCGROUP_PIDS = 1 << 1,
	KCGROUP_CPU = 1 << 2,
};

struct kcgroup;

/* "0::/system.slice/keventd.service\n" (among v1 lines) -> the v2 path.
 * -ENOENT when there is no "0::" line. */
int kcgroup_parse_self(const char *proc_self_cgroup, char **path);
/* The first cgroup2 mount point in /proc/self/mountinfo's text; -ENOENT. */
int kcgroup_parse_mountinfo(const char *mountinfo, char **mount);
/* The controllers of a cgroup.controllers line ("cpu io memory pids"). */
unsigned kcgroup_parse_controllers(const char *text);

/*
 * Where keventd's delegated subtree is: override when given (for tests),
 * else its own cgroup v2 path under the cgroup2 mount.  -EPERM with *why
 * when it is not delegated: the root cgroup, not writable, or, under
 * systemd, a cgroup without the delegate attribute (no Delegate=yes).
 */
int kcgroup_find(const char *override, char **dir, const char **why);

/*
 * Takes the subtree dir: makes the leaf "keventd" and moves process pid
 * into it (so that runs may be its siblings), then enables in dir's
 * cgroup.subtree_control the controllers of KCGROUP_* that dir has.
 * 0, or -errno with *why.
 */
int kcgroup_open(const char *dir, int pid, struct kcgroup **out, const char **why);
void kcgroup_free(struct kcgroup *cg);
const char *kcgroup_dir(const struct kcgroup *cg);
/* The controllers runs get (KCGROUP_*). */
unsigned kcgroup_controllers(const struct kcgroup *cg);

/* A run's cgroup name: "<rule>-<seq>-<n>", the rule's name with every
 * character outside [A-Za-z0-9_-] made '_', and cut to fit. */
void kcgroup_run_name(const char *rule, uint64_t seq, uint64_t n, char buf[KCGROUP_NAME_MAX]);

/* The controllers lim needs (KCGROUP_*); 0 for NULL. */
unsigned kcgroup_limits_need(const struct kcg_limits *lim);
/* Writes memory.max, pids.max and cpu.weight in the cgroup dirfd for what
 * lim sets, among the controllers of have.  0, or -errno with *file. */
int kcgroup_write_limits(int dirfd, const struct kcg_limits *lim, unsigned have, const char **file);

/* Makes the run's cgroup name under cg with lim written; *dirfd is the
 * cgroup, open (O_DIRECTORY, close-on-exec), for CLONE_INTO_CGROUP.
 * 0, or -errno with *why. */
int kcgroup_run_create(struct kcgroup *cg, const char *name, const struct kcg_limits *lim,
		       int *dirfd, const char **why);
/* Kills every process in the run's cgroup: cgroup.kill, or where the
 * kernel lacks it (before 5.14), SIGKILL to each process cgroup.procs
 * lists.  0, or -errno. */
int kcgroup_run_kill(int dirfd);
/* 1 while a process is in the cgroup (cgroup.events), 0 when none, -errno. */
int kcgroup_run_populated(int dirfd);
/* "oom_kill" of memory.events: processes killed by the memory limit; 0
 * when the file is not there. */
uint64_t kcgroup_run_oom_kills(int dirfd);
/* Removes the run's cgroup (empty by then).  0, or -errno (-EBUSY while
 * processes are in it). */
int kcgroup_run_remove(struct kcgroup *cg, const char *name);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keventd.yaml's section "trace:" (keventd.yaml(5)): a list of
 * tracepoints, each with the kernel filter it is read through and the
 * event type it is given.
 *
 *	trace:
 *	  - event: sched/sched_process_exec
 *	    filter: 'filename ~ "*\/backup"'
 *	    type: general
 *
 * Pure: each mistake is one diagnostic at its FILE:LINE:COLUMN; whether
 * the kernel has the tracepoint and takes the filter is the source's
 * check (source-trace.h: ktrace_config_check()).
 */
#ifndef KEVENT_TRACE_CONFIG_H
#define KEVENT_TRACE_CONFIG_H

#include <stddef.h>

#include "diag.h"

struct ynode;

#define KTRACE_MAX_ENTRIES 64
#define KTRACE_FILTER_MAX  4096
#define KTRACE_NAME_MAX	   64 /* a system's or an event's name */

struct ktrace_entry {
	char *system, *event; /* "sched", "sched_process_exec" */
	char *filter;	      /* NULL: every hit */
	int type;	      /* enum kevent_type */
	unsigned line, col;   /* the event: value, where errors about it point */
	unsigned filter_line, filter_col;
};

struct ktrace_config {
	char *path; /* the file the entries come from */
	struct ktrace_entry *v;
	size_t n;
};

void ktrace_config_release(struct ktrace_config *c);

/* Parses the section's value v of the file path into c (replacing what
 * it had).  Returns 0 (each mistake one diagnostic in diags, and then no
 * entry is kept) or -ENOMEM. */
int ktrace_config_parse(struct ktrace_config *c, const struct ynode *v, const char *path,
			struct kdiags *diags);

#endif

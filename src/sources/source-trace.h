/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "trace" source: the stock kernel's tracepoints that keventd.yaml's
 * "trace:" names (trace-config.h), read through perf_event_open() with
 * the entry's filter installed in the kernel, one ring per CPU, each
 * sample decoded from the tracepoint's format (trace-msg.h).  No entry,
 * no perf descriptor.
 */
#ifndef KEVENT_SOURCE_TRACE_H
#define KEVENT_SOURCE_TRACE_H

#include "diag.h"
#include "source.h"
#include "trace-config.h"

/* tracefs where the kernel documents it; mounted there when it is not */
#define KTRACE_TRACEFS	     "/sys/kernel/tracing"
#define KTRACE_TRACEFS_DEBUG "/sys/kernel/debug/tracing"
#define KTRACE_RING_PAGES    16 /* each CPU's ring, 64 KiB with 4 KiB pages */

/* Checks that the kernel has each entry's tracepoint and takes its
 * filter, opening (and closing) one perf descriptor per entry; each
 * refusal is a diagnostic at the entry's FILE:LINE:COLUMN.  0 or -ENOMEM. */
int ktrace_config_check(const struct ktrace_config *c, struct kdiags *diags);

/* The source for c's entries (which must outlive it).  0 with *out, or
 * -errno (logged). */
int ksource_trace_new(const struct ksink *sink, const struct ktrace_config *c,
		      struct ksource **out);

#endif

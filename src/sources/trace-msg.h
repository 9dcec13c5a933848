/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace source's pure parts: a tracepoint's format file (tracefs
 * events/<system>/<event>/format), a record of its perf ring, and the event
 * made of a sample (docs/sources.md):
 *   object  /org/kernel/trace/<system>
 *   signal  <event>
 *   payload one "name: value" line per field of the tracepoint (not the
 *           common_* header), as the format names it: integers in decimal,
 *           strings (__data_loc char[], char[N]) as text with control
 *           characters escaped, other arrays as hex; then Cpu: and
 *           Task-Pid: of the task that hit it.  No name of that task: a
 *           sample does not hold it, and by the time keventd reads the
 *           sample the pid may be another task's (docs/sources.md).
 * Nothing here reads a file or logs: the format's text and the record's
 * bytes come in, bounded, and what is wrong comes back as a static *why.
 */
#ifndef KEVENT_TRACE_MSG_H
#define KEVENT_TRACE_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KTRACE_OBJECT_PREFIX "/org/kernel/trace/"
#define KTRACE_MAX_FIELDS    64
#define KTRACE_FIELD_NAME    64
#define KTRACE_FORMAT_MAX    (64 * 1024)

enum ktrace_field_kind {
	KTRACE_INT,	 /* size 1, 2, 4 or 8: decimal */
	KTRACE_STR,	 /* char[N]: text up to the first NUL */
	KTRACE_DATA_LOC, /* __data_loc char[]: text elsewhere in the record */
	KTRACE_REL_LOC,	 /* __rel_loc char[]: the same, relative to the field's end */
	KTRACE_BYTES,	 /* any other array, or an odd size: hex */
	KTRACE_LOC_BYTES /* __data_loc/__rel_loc of anything else: hex */
};

struct ktrace_field {
	char name[KTRACE_FIELD_NAME];
	enum ktrace_field_kind kind;
	uint32_t offset, size;
	bool is_signed;
	bool rel; /* the location is relative (__rel_loc) */
};

struct ktrace_format {
	uint32_t id; /* the tracepoint's ID: line */
	size_t n_fields;
	struct ktrace_field fields[KTRACE_MAX_FIELDS]; /* the tracepoint's own */
};

/* Parses a format file's text (len bytes, need not be NUL-terminated).
 * 0, or -EINVAL with *why: a field line that cannot be read, a field
 * outside 64 KiB, more than KTRACE_MAX_FIELDS fields, no ID. */
int ktrace_format_parse(const char *text, size_t len, struct ktrace_format *f, const char **why);

/* What the ring's records say (PERF_SAMPLE_TID | TIME | CPU | RAW). */
enum ktrace_record_kind { KTRACE_REC_SAMPLE, KTRACE_REC_LOST, KTRACE_REC_OTHER };

struct ktrace_record {
	enum ktrace_record_kind kind;
	uint32_t pid, tid, cpu;
	uint64_t time;	    /* the sample's clock (the event's timestamp), ns */
	const uint8_t *raw; /* the tracepoint's record, in the input */
	uint32_t raw_size;
	uint64_t lost; /* KTRACE_REC_LOST: records the kernel dropped */
};

/* Reads one perf record (header included, len its bytes).  0, or
 * -EBADMSG with *why when it is shorter than it says. */
int ktrace_record_parse(const void *buf, size_t len, struct ktrace_record *r, const char **why);

/* The names an event is made under: the entry's type, the tracepoint. */
struct ktrace_name {
	int type;
	const char *system, *event;
};

/* The event of a sample r of tracepoint f, named n: what the record
 * holds, and nothing looked up elsewhere.  0 (*truncated when the payload
 * had to be cut to its limit, at a line's end), -EINVAL with *why when
 * the record does not fit the format, -ENOMEM. */
int ktrace_event(const struct ktrace_format *f, const struct ktrace_name *n,
		 const struct ktrace_record *r, uint64_t seqnum, struct kevent **ev,
		 bool *truncated, const char **why);

#endif

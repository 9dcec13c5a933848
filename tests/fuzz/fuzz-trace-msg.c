// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The trace source's decoder: a tracepoint's format file, then the perf
 * records of a ring.  Each record is read with ktrace_record_parse(); a
 * sample becomes an event with ktrace_event(), which must be within the
 * event limits, have one property per field it kept (a field's text
 * cannot forge a line) and end with Cpu: and Task-Pid:.
 * Input: the format's text, a NUL byte, the records.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "fuzz.h"
#include "trace-msg.h"
#include "util.h"

#define MAX_INPUT   (96 * 1024)
#define MAX_RECORDS 64

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void check_event(const struct ktrace_format *f, const struct ktrace_record *r,
			const struct kevent *ev, bool truncated)
{
	const char *why;
	FUZZ_CHECK(kevent_check((int)ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	FUZZ_CHECK(ev->type == KEVENT_POWER && ev->source == KEVENT_SOURCE_TRACE);
	FUZZ_CHECK(strcmp(ev->object, "/org/kernel/trace/fuzz") == 0);
	FUZZ_CHECK(strcmp(ev->signal, "point") == 0);
	size_t lines = count_lines(ev->payload);
	FUZZ_CHECK(lines >= 2);
	/* every field, unless cut; never more lines than fields + 2 */
	FUZZ_CHECK(truncated ? lines - 2 < f->n_fields : lines - 2 == f->n_fields);
	char num[16];
	snprintf(num, sizeof(num), "%u", (unsigned)r->cpu);
	/* the last two lines: the trailer, whatever the fields' text */
	size_t len = strlen(ev->payload), seen = 0;
	const char *tail = ev->payload;
	FUZZ_CHECK(len && ev->payload[len - 1] == '\n');
	for (size_t i = len - 1; i-- > 0;)
		if (ev->payload[i] == '\n' && ++seen == 2) {
			tail = ev->payload + i + 1;
			break;
		}
	FUZZ_CHECK(count_lines(tail) == 2 && strncmp(tail, "Cpu: ", 5) == 0);
	FUZZ_CHECK(strncmp(tail + 5, num, strlen(num)) == 0 && tail[5 + strlen(num)] == '\n');
	char pid[32];
	snprintf(pid, sizeof(pid), "\nTask-Pid: %u\n", (unsigned)r->tid);
	FUZZ_CHECK(strstr(tail, pid) && strcmp(strstr(tail, pid), pid) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	const uint8_t *nul = memchr(data, '\0', size);
	size_t flen = nul ? (size_t)(nul - data) : size;
	struct ktrace_format f;
	const char *why = NULL;
	int rc = ktrace_format_parse((const char *)data, flen, &f, &why);
	FUZZ_CHECK(rc == 0 || (rc == -EINVAL && why));
	if (rc < 0 || !nul)
		return 0;
	FUZZ_CHECK(f.n_fields <= KTRACE_MAX_FIELDS);
	for (size_t i = 0; i < f.n_fields; i++) {
		FUZZ_CHECK(f.fields[i].size && f.fields[i].offset + f.fields[i].size <= 65536);
		FUZZ_CHECK(strncmp(f.fields[i].name, "common_", 7) != 0);
	}
	/* the records, copied so that each is aligned as in a ring */
	size_t left = size - flen - 1;
	uint8_t *buf = malloc(left ? left : 1);
	if (!buf)
		return 0;
	memcpy(buf, nul + 1, left);
	static const struct ktrace_name name = {KEVENT_POWER, "fuzz", "point"};
	size_t off = 0;
	for (unsigned i = 0; i < MAX_RECORDS && off < left; i++) {
		struct ktrace_record r;
		rc = ktrace_record_parse(buf + off, left - off, &r, &why);
		if (rc < 0) {
			FUZZ_CHECK(rc == -EBADMSG && why);
			break;
		}
		struct perf_event_header h;
		memcpy(&h, buf + off, sizeof(h));
		FUZZ_CHECK(h.size >= sizeof(h) && h.size <= left - off);
		if (r.kind == KTRACE_REC_SAMPLE) {
			FUZZ_CHECK(r.raw >= buf + off && r.raw + r.raw_size <= buf + off + h.size);
			struct kevent *ev = NULL;
			bool truncated = false;
			rc = ktrace_event(&f, &name, &r, i + 1, &ev, &truncated, &why);
			FUZZ_CHECK(rc == 0 || rc == -ENOMEM || (rc == -EINVAL && why));
			FUZZ_CHECK((rc == 0) == (ev != NULL));
			if (ev)
				check_event(&f, &r, ev, truncated);
			kevent_free(ev);
		}
		off += h.size;
	}
	free(buf);
	return 0;
}

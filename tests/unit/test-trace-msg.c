// SPDX-License-Identifier: GPL-2.0-or-later
/* The trace source's pure parts: a tracepoint's format file, a perf
 * record, and the event made of a sample; and the section trace: of
 * keventd.yaml. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "options.h"
#include "testutil.h"
#include "trace-config.h"
#include "trace-msg.h"

/* As this machine's kernel writes sched/sched_process_exec's format. */
static const char exec_format[] =
	"name: sched_process_exec\n"
	"ID: 365\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
	"REC->old_pid\n";

/* Every kind of field the decoder knows. */
static const char kinds_format[] =
	"ID: 7\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:s8 s8v;\toffset:2;\tsize:1;\tsigned:1;\n"
	"\tfield:u8 u8v;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:short s16;\toffset:4;\tsize:2;\tsigned:1;\n"
	"\tfield:u16 u16;\toffset:6;\tsize:2;\tsigned:0;\n"
	"\tfield:int s32;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned int u32;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:long s64;\toffset:16;\tsize:8;\tsigned:1;\n"
	"\tfield:u64 u64;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:char comm[8];\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u8 mac[3];\toffset:40;\tsize:3;\tsigned:0;\n"
	"\tfield:__data_loc u8[] blob;\toffset:44;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rel;\toffset:48;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] evil;\toffset:52;\tsize:4;\tsigned:0;\n";

static void test_format(void **state)
{
	(void)state;
	struct ktrace_format f;
	const char *why = NULL;
	assert_int_equal(ktrace_format_parse(exec_format, strlen(exec_format), &f, &why), 0);
	assert_int_equal(f.id, 365);
	assert_int_equal(f.n_fields, 3); /* the common_ header is not the tracepoint's */
	assert_string_equal(f.fields[0].name, "filename");
	assert_int_equal(f.fields[0].kind, KTRACE_DATA_LOC);
	assert_int_equal(f.fields[0].offset, 8);
	assert_string_equal(f.fields[1].name, "pid");
	assert_int_equal(f.fields[1].kind, KTRACE_INT);
	assert_true(f.fields[1].is_signed);
	assert_int_equal(f.fields[2].offset, 16);

	assert_int_equal(ktrace_format_parse(kinds_format, strlen(kinds_format), &f, &why), 0);
	static const enum ktrace_field_kind kinds[] = {
		KTRACE_INT,	  KTRACE_INT,	  KTRACE_INT,	   KTRACE_INT, KTRACE_INT,
		KTRACE_INT,	  KTRACE_INT,	  KTRACE_INT,	   KTRACE_STR, KTRACE_BYTES,
		KTRACE_LOC_BYTES, KTRACE_REL_LOC, KTRACE_DATA_LOC,
	};
	assert_int_equal(f.n_fields, ARRAY_SIZE(kinds));
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		assert_int_equal(f.fields[i].kind, kinds[i]);
	assert_string_equal(f.fields[8].name, "comm");

	/* clang-format off */
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"name: x\nformat:\n", "tracepoint format has no ID"},
		{"ID: twelve\n", "tracepoint format has an ID that is not a number"},
		{"ID: 4294967296\n", "tracepoint format has an ID that is not a number"},
		{"ID: 1\n\tfield:int x;\toffset:0;\tsize:4;\n", "tracepoint format has a field line it cannot read"},
		{"ID: 1\n\tfield:int x;\toffset:0;\tsize:0;\tsigned:0;\n", "tracepoint format has a field line it cannot read"},
		{"ID: 1\n\tfield:int x;\toffset:65535;\tsize:4;\tsigned:0;\n", "tracepoint format has a field line it cannot read"},
		{"ID: 1\n\tfield:int x;\toffset:0;\tsize:4;\tsigned:2;\n", "tracepoint format has a field line it cannot read"},
		{"ID: 1\n\tfield:x;\toffset:0;\tsize:4;\tsigned:0;\n", "tracepoint format has a field line it cannot read"},
		{"ID: 1\n\tfield:int x y;\toffset:0;\tsize:4;\tsigned:0;\n", NULL}, /* "int x" the type, y the name */
		{"ID: 1\n\tfield:__data_loc char[] s;\toffset:0;\tsize:8;\tsigned:0;\n", "tracepoint format has a field line it cannot read"},
		{"ID: 1\n\tfield:int x:3;\toffset:0;\tsize:4;\tsigned:0;\n", "tracepoint format has a field line it cannot read"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		why = NULL;
		int rc = ktrace_format_parse(bad[i].text, strlen(bad[i].text), &f, &why);
		if (!bad[i].why) {
			assert_int_equal(rc, 0);
			continue;
		}
		if (rc != -EINVAL || strcmp(why, bad[i].why) != 0)
			fail_msg("case %zu: %d %s", i, rc, why ? why : "(none)");
	}
	/* 65 fields of its own: one too many */
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, "ID: 1\n");
	for (int i = 0; i <= KTRACE_MAX_FIELDS; i++)
		strbuf_printf(&sb, "\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n", i, 4 * i);
	assert_int_equal(ktrace_format_parse(sb.buf, sb.len, &f, &why), -EINVAL);
	assert_string_equal(why, "tracepoint has more than 64 fields");
	strbuf_release(&sb);
}

struct rec {
	uint8_t buf[512];
	size_t len;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->buf + r->len, p, n);
	r->len += n;
}

/* A PERF_RECORD_SAMPLE of raw (n bytes) as the source asks for it. */
static void sample(struct rec *r, uint32_t pid, uint32_t cpu, const void *raw, uint32_t n)
{
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE};
	uint64_t time = 1700000000000000000ull;
	uint32_t zero = 0;
	r->len = sizeof(h);
	put(r, &pid, 4);
	put(r, &pid, 4);
	put(r, &time, 8);
	put(r, &cpu, 4);
	put(r, &zero, 4);
	put(r, &n, 4);
	put(r, raw, n);
	h.size = (uint16_t)r->len;
	memcpy(r->buf, &h, sizeof(h));
}

static void exec_raw(uint8_t raw[40], const char *file, uint32_t loc_len)
{
	memset(raw, 0, 40);
	uint16_t type = 365;
	uint32_t loc = (loc_len << 16) | 20, pid = 4242, old = 4242;
	memcpy(raw, &type, 2);
	memcpy(raw + 8, &loc, 4);
	memcpy(raw + 12, &pid, 4);
	memcpy(raw + 16, &old, 4);
	memcpy(raw + 20, file, strlen(file) + 1);
}

static const struct ktrace_name exec_name = {KEVENT_HOTPLUG, "sched", "sched_process_exec"};

static void test_event(void **state)
{
	(void)state;
	struct ktrace_format f;
	struct ktrace_record r;
	struct rec rec;
	uint8_t raw[40];
	const char *why = NULL;
	bool truncated;
	struct kevent *ev = NULL;
	assert_int_equal(ktrace_format_parse(exec_format, strlen(exec_format), &f, &why), 0);

	exec_raw(raw, "/usr/bin/true", 14);
	sample(&rec, 4242, 3, raw, sizeof(raw));
	assert_int_equal(ktrace_record_parse(rec.buf, rec.len, &r, &why), 0);
	assert_int_equal(r.kind, KTRACE_REC_SAMPLE);
	assert_int_equal(r.cpu, 3);
	assert_int_equal(r.raw_size, sizeof(raw));
	assert_int_equal(ktrace_event(&f, &exec_name, &r, 9, &ev, &truncated, &why), 0);
	assert_false(truncated);
	assert_int_equal(ev->type, KEVENT_HOTPLUG);
	assert_int_equal(ev->source, KEVENT_SOURCE_TRACE);
	assert_int_equal(ev->seqnum, 9);
	assert_string_equal(ev->object, "/org/kernel/trace/sched");
	assert_string_equal(ev->signal, "sched_process_exec");
	assert_string_equal(ev->payload, "filename: /usr/bin/true\npid: 4242\nold_pid: 4242\n"
					 "Cpu: 3\nTask-Pid: 4242\n");
	kevent_free(ev);

	/* text is escaped: a file name cannot forge a line */
	exec_raw(raw, "/tmp/x\nType: evil", 18);
	sample(&rec, 1, 0, raw, sizeof(raw));
	assert_int_equal(ktrace_record_parse(rec.buf, rec.len, &r, &why), 0);
	assert_int_equal(ktrace_event(&f, &exec_name, &r, 1, &ev, &truncated, &why), 0);
	assert_string_equal(kevent_prop(ev, "filename"), "/tmp/x\\nType: evil");
	assert_null(kevent_prop(ev, "Type"));
	kevent_free(ev);
	/* and a backslash: the escape written out is another name */
	exec_raw(raw, "/tmp/x\\nType: evil", 19);
	sample(&rec, 1, 0, raw, sizeof(raw));
	assert_int_equal(ktrace_record_parse(rec.buf, rec.len, &r, &why), 0);
	assert_int_equal(ktrace_event(&f, &exec_name, &r, 1, &ev, &truncated, &why), 0);
	assert_string_equal(kevent_prop(ev, "filename"), "/tmp/x\\\\nType: evil");
	kevent_free(ev);

	/* clang-format off */
	static const struct {
		uint32_t loc, raw_size;
		const char *why;
	} bad[] = {
		{(14u << 16) | 30, 40, "trace record shorter than its tracepoint's format"}, /* past the end */
		{(0xffffu << 16) | 20, 40, "trace record shorter than its tracepoint's format"},
		{(14u << 16) | 20, 18, "trace record shorter than its tracepoint's format"}, /* old_pid cut */
		{(0u << 16) | 40, 40, NULL}, /* empty, at the very end: fine */
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		exec_raw(raw, "/bin/x", 7);
		memcpy(raw + 8, &bad[i].loc, 4);
		sample(&rec, 1, 0, raw, bad[i].raw_size);
		assert_int_equal(ktrace_record_parse(rec.buf, rec.len, &r, &why), 0);
		int rc = ktrace_event(&f, &exec_name, &r, 1, &ev, &truncated, &why);
		if (!bad[i].why) {
			assert_int_equal(rc, 0);
			assert_string_equal(
				kevent_prop(ev, "filename") ? kevent_prop(ev, "filename") : "", "");
			kevent_free(ev);
			continue;
		}
		if (rc != -EINVAL || strcmp(why, bad[i].why) != 0)
			fail_msg("case %zu: %d %s", i, rc, why);
		assert_null(ev);
	}
}

/* A sample names its task by pid alone.  The task's name is not in the
 * record, and by the time keventd reads it that pid may be another task's
 * (here: this test's own, whose name /proc would tell): nothing is looked
 * up, so no other task's name is ever put on the event. */
static void test_task_by_pid_only(void **state)
{
	(void)state;
	struct ktrace_format f;
	struct ktrace_record r;
	struct rec rec;
	uint8_t raw[40];
	const char *why = NULL;
	bool truncated;
	struct kevent *ev = NULL;
	assert_int_equal(ktrace_format_parse(exec_format, strlen(exec_format), &f, &why), 0);
	exec_raw(raw, "/usr/bin/true", 14);
	uint32_t now_another = (uint32_t)getpid();
	sample(&rec, now_another, 0, raw, sizeof(raw));
	assert_int_equal(ktrace_record_parse(rec.buf, rec.len, &r, &why), 0);
	assert_int_equal(ktrace_event(&f, &exec_name, &r, 1, &ev, &truncated, &why), 0);
	char pid[32];
	snprintf(pid, sizeof(pid), "%u", now_another);
	assert_string_equal(kevent_prop(ev, "Task-Pid"), pid);
	assert_null(kevent_prop(ev, "Task-Comm"));
	assert_null(strstr(ev->payload, "test-trace-msg"));
	/* the trailer is the last two lines */
	const char *tail = strstr(ev->payload, "Cpu: 0\nTask-Pid: ");
	assert_non_null(tail);
	assert_string_equal(tail + strlen("Cpu: 0\nTask-Pid: "), strcat(pid, "\n"));
	kevent_free(ev);
}

static void test_kinds(void **state)
{
	(void)state;
	struct ktrace_format f;
	struct ktrace_record r;
	struct rec rec;
	const char *why = NULL;
	bool truncated;
	struct kevent *ev = NULL;
	assert_int_equal(ktrace_format_parse(kinds_format, strlen(kinds_format), &f, &why), 0);
	uint8_t raw[80] = {0};
	int8_t s8 = -5;
	uint8_t u8 = 250;
	int16_t s16 = -300;
	uint16_t u16 = 65000;
	int32_t s32 = -70000;
	uint32_t u32 = 4000000000u;
	int64_t s64 = -5000000000ll;
	uint64_t u64 = 18000000000000000000ull;
	uint32_t blob = (2u << 16) | 60, rel = (3u << 16) | 10, evil = (3u << 16) | 66;
	memcpy(raw + 2, &s8, 1);
	memcpy(raw + 3, &u8, 1);
	memcpy(raw + 4, &s16, 2);
	memcpy(raw + 6, &u16, 2);
	memcpy(raw + 8, &s32, 4);
	memcpy(raw + 12, &u32, 4);
	memcpy(raw + 16, &s64, 8);
	memcpy(raw + 24, &u64, 8);
	memcpy(raw + 32, "kworker/", 8); /* no NUL: all 8 */
	memcpy(raw + 40, "\x00\xab\xff", 3);
	memcpy(raw + 44, &blob, 4);
	memcpy(raw + 48, &rel, 4); /* 52 + 10 */
	memcpy(raw + 52, &evil, 4);
	memcpy(raw + 60, "\x01\x02", 2);
	memcpy(raw + 62, "rel", 3);
	memcpy(raw + 66, "\x1b[2", 3);
	sample(&rec, 7, 1, raw, sizeof(raw));
	assert_int_equal(ktrace_record_parse(rec.buf, rec.len, &r, &why), 0);
	assert_int_equal(ktrace_event(&f, &exec_name, &r, 1, &ev, &truncated, &why), 0);
	assert_string_equal(ev->payload, "s8v: -5\nu8v: 250\ns16: -300\nu16: 65000\ns32: -70000\n"
					 "u32: 4000000000\ns64: -5000000000\n"
					 "u64: 18000000000000000000\ncomm: kworker/\nmac: 00abff\n"
					 "blob: 0102\nrel: rel\nevil: \\x1b[2\n"
					 "Cpu: 1\nTask-Pid: 7\n");
	kevent_free(ev);
}

static void test_records(void **state)
{
	(void)state;
	struct ktrace_record r;
	const char *why = NULL;
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
	} lost = {{PERF_RECORD_LOST, 0, sizeof(lost)}, 1, 12345};
	assert_int_equal(ktrace_record_parse(&lost, sizeof(lost), &r, &why), 0);
	assert_int_equal(r.kind, KTRACE_REC_LOST);
	assert_int_equal(r.lost, 12345);
	/* clang-format off */
	static const struct {
		uint32_t type;
		uint16_t size;
		size_t len;
		int rc;
		enum ktrace_record_kind kind;
	} cases[] = {
		{PERF_RECORD_LOST, 24, 24, 0, KTRACE_REC_LOST},
		{PERF_RECORD_LOST, 16, 24, -EBADMSG, KTRACE_REC_OTHER}, /* too short for its count */
		{PERF_RECORD_LOST, 32, 24, -EBADMSG, KTRACE_REC_OTHER}, /* says more than there is */
		{PERF_RECORD_LOST, 4, 24, -EBADMSG, KTRACE_REC_OTHER},	/* less than a header */
		{PERF_RECORD_THROTTLE, 24, 24, 0, KTRACE_REC_OTHER},
		{PERF_RECORD_SAMPLE, 24, 24, -EBADMSG, KTRACE_REC_OTHER},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		lost.h.type = cases[i].type;
		lost.h.size = cases[i].size;
		int rc = ktrace_record_parse(&lost, cases[i].len, &r, &why);
		if (rc != cases[i].rc || r.kind != cases[i].kind)
			fail_msg("case %zu: %d %d", i, rc, r.kind);
	}
	assert_int_equal(ktrace_record_parse(&lost, 3, &r, &why), -EBADMSG);
	/* a sample whose raw size says more than the record holds */
	struct rec rec;
	uint8_t raw[8] = {0};
	sample(&rec, 1, 0, raw, sizeof(raw));
	uint32_t big = 9;
	memcpy(rec.buf + sizeof(struct perf_event_header) + 24, &big, 4);
	assert_int_equal(ktrace_record_parse(rec.buf, rec.len, &r, &why), -EBADMSG);
	assert_string_equal(why, "perf record shorter than its contents");
}

/* A payload cut at a line's end, the trailer always there. */
static void test_truncated(void **state)
{
	(void)state;
	struct strbuf fmt = STRBUF_INIT;
	strbuf_puts(&fmt, "ID: 2\n");
	for (int i = 0; i < 4; i++)
		strbuf_printf(&fmt, "\tfield:u8 a%d[1500];\toffset:%d;\tsize:1500;\tsigned:0;\n", i,
			      8 + 1500 * i);
	struct ktrace_format f;
	const char *why = NULL;
	assert_int_equal(ktrace_format_parse(fmt.buf, fmt.len, &f, &why), 0);
	strbuf_release(&fmt);
	static uint8_t raw[8 + 6000];
	struct ktrace_record r = {.kind = KTRACE_REC_SAMPLE, .raw = raw, .raw_size = sizeof(raw)};
	struct kevent *ev = NULL;
	bool truncated = false;
	assert_int_equal(ktrace_event(&f, &exec_name, &r, 1, &ev, &truncated, &why), 0);
	assert_true(truncated);
	assert_non_null(kevent_prop(ev, "a0"));
	assert_null(kevent_prop(ev, "a1")); /* 3000 hex digits: no room for a second */
	assert_null(kevent_prop(ev, "a3"));
	assert_string_equal(kevent_prop(ev, "Task-Pid"), "0");
	assert_true(strlen(ev->payload) <= KEVENT_PAYLOAD_MAX);
	kevent_free(ev);
}

/* keventd.yaml's trace: section read (its mistakes: test-source-type.c);
 * trace is among the sources only with an entry. */
static void test_config(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"trace:\n  - event: sched/sched_process_exec\n    filter: 'pid > 1'\n    type: "
		"power\n",
		"trace:\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct koptions o;
		struct kdiags d = {0};
		koptions_init(&o);
		assert_int_equal(koptions_parse_file(&o, cases[i], strlen(cases[i]), "k.yaml", &d),
				 0);
		if (d.n)
			fail_msg("case %zu: %s", i, d.v[0].msg);
		koptions_finish(&o);
		const struct ktrace_config *tc = ksource_section(&o.sections, KEVENT_SOURCE_TRACE);
		bool entries = i == 0;
		assert_int_equal(tc->n, entries ? 1 : 0);
		assert_int_equal(!!(o.cfg.sources & (1u << KEVENT_SOURCE_TRACE)), entries);
		if (entries) {
			assert_string_equal(tc->v[0].system, "sched");
			assert_string_equal(tc->v[0].filter, "pid > 1");
			assert_int_equal(tc->v[0].type, KEVENT_POWER);
			assert_int_equal(tc->v[0].line, 2);
		}
		kdiags_free(&d);
		koptions_release(&o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_task_by_pid_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

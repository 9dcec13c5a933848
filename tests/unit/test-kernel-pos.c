// SPDX-License-Identifier: GPL-2.0-or-later
/* The kernel source's position file (kernel-pos.h): its two forms read and
 * written, anything else refused; and the kernel source with it: what a
 * stop hands back is listed, what a damaged file says is not believed. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel-pos.h"
#include "log.h"
#include "../nlbuild.h"
#include "source-genl.h"
#include "testutil.h"

#define MAX_REDO 8

/* What a text parses to. */
static void test_parse(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *text;
		int rc;
		uint64_t instance, last;
		uint64_t redo[MAX_REDO]; /* 0 ends the list */
	} cases[] = {
		{"4660 10\n", 0, 4660, 10, {0}},
		{"4660 10", 0, 4660, 10, {0}},
		{"4660 0\n", 0, 4660, 0, {0}},
		{"4660\t 10\n", 0, 4660, 10, {0}},
		{"18446744073709551615 18446744073709551615\n", 0, UINT64_MAX, UINT64_MAX, {0}},
		{"4660 10\nredo 3 7 10\n", 0, 4660, 10, {3, 7, 10}},
		{"4660 10\nredo 3 7 10", 0, 4660, 10, {3, 7, 10}},
		{"4660 10\nredo 1\n", 0, 4660, 10, {1}},
		{"4660 10\nredo  3\t7\n", 0, 4660, 10, {3, 7}},
		{"", -EINVAL, 0, 0, {0}},
		{"\n", -EINVAL, 0, 0, {0}},
		{"0 10\n", -EINVAL, 0, 0, {0}},
		{"4660\n", -EINVAL, 0, 0, {0}},
		{"4660 \n", -EINVAL, 0, 0, {0}},
		{" 4660 10\n", -EINVAL, 0, 0, {0}},
		{"4660 10 \n", -EINVAL, 0, 0, {0}},
		{"4660 10 11\n", -EINVAL, 0, 0, {0}},
		{"4660 x\n", -EINVAL, 0, 0, {0}},
		{"-1 10\n", -EINVAL, 0, 0, {0}},
		{"+1 10\n", -EINVAL, 0, 0, {0}},
		{"18446744073709551616 10\n", -EINVAL, 0, 0, {0}},
		{"4660 10\n\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo \n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo3\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nrdo 3\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nREDO 3\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 3x\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 3 \n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 0\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 11\n", -EINVAL, 0, 0, {0}},
		{"4660 0\nredo 1\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 3 3\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 7 3\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 3\nredo 4\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 3\n\n", -EINVAL, 0, 0, {0}},
		{"4660 10\nredo 18446744073709551616\n", -EINVAL, 0, 0, {0}},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *text = cases[i].text;
		struct kkernel_pos pos = {.instance = 99};
		int rc = kkernel_pos_parse(text, strlen(text), &pos);
		if (rc != cases[i].rc)
			fail_msg("\"%s\": %d, not %d", text, rc, cases[i].rc);
		if (rc < 0) {
			assert_int_equal(pos.instance, 99); /* untouched */
			continue;
		}
		size_t n = 0;
		while (n < MAX_REDO && cases[i].redo[n])
			n++;
		assert_true(pos.instance == cases[i].instance);
		assert_true(pos.last == cases[i].last);
		if (pos.n_redo != n)
			fail_msg("\"%s\": %zu to redo, not %zu", text, pos.n_redo, n);
		for (size_t k = 0; k < n; k++)
			assert_true(pos.redo[k] == cases[i].redo[k]);
		kkernel_pos_release(&pos);
		assert_null(pos.redo);
	}
}

/* What a position is written as, and that it reads back the same. */
static void test_format(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		uint64_t instance, last;
		uint64_t redo[MAX_REDO];
		const char *text;
	} cases[] = {
		{4660, 10, {0}, "4660 10\n"},
		{4660, 0, {0}, "4660 0\n"},
		{4660, 10, {3, 7, 10}, "4660 10\nredo 3 7 10\n"},
		{UINT64_MAX, UINT64_MAX, {UINT64_MAX}, "18446744073709551615 18446744073709551615\nredo 18446744073709551615\n"},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kkernel_pos pos = {.instance = cases[i].instance,
					  .last = cases[i].last,
					  .redo = (uint64_t *)cases[i].redo};
		while (pos.n_redo < MAX_REDO && cases[i].redo[pos.n_redo])
			pos.n_redo++;
		struct strbuf sb = STRBUF_INIT;
		kkernel_pos_format(&pos, &sb);
		assert_string_equal(strbuf_str(&sb), cases[i].text);
		struct kkernel_pos back;
		assert_int_equal(kkernel_pos_parse(sb.buf, sb.len, &back), 0);
		assert_true(back.instance == pos.instance && back.last == pos.last);
		assert_int_equal(back.n_redo, pos.n_redo);
		for (size_t k = 0; k < pos.n_redo; k++)
			assert_true(back.redo[k] == pos.redo[k]);
		kkernel_pos_release(&back);
		strbuf_release(&sb);
	}
}

/* ---- the kernel source with its position file ---- */

static int sink_submit(void *userdata, struct kevent *ev)
{
	(void)userdata;
	kevent_free(ev);
	fail_msg("nothing is read: nothing may be submitted");
	return 0;
}

static void sink_reject(void *userdata, enum kevent_source src, const char *why)
{
	(void)userdata;
	(void)src;
	fail_msg("rejected: %s", why);
}

static void sink_overrun(void *userdata, enum kevent_source src)
{
	(void)userdata;
	(void)src;
}

static void sink_lost(void *userdata, enum kevent_source src, uint64_t n)
{
	(void)userdata;
	(void)src;
	fail_msg("%" PRIu64 " lost", n);
}

static size_t sink_room(void *userdata, enum kevent_source src)
{
	(void)userdata;
	(void)src;
	return SIZE_MAX;
}

static const struct ksink_ops sink_ops = {
	.submit = sink_submit,
	.reject = sink_reject,
	.overrun = sink_overrun,
	.lost = sink_lost,
	.room = sink_room,
};

#define I1	       4660
#define I2	       4661
#define NOT_A_POSITION "is not a position; starting from the current event"

/* A file as the last stop left it; events handed back at this stop (of
 * instance I1 unless told); what the file says then, and the log. */
static void test_source(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *what;
		const char *before; /* NULL: no file */
		uint64_t back[MAX_REDO]; /* handed back, 0 ends the list */
		uint64_t back_instance;  /* 0: I1 */
		int rc;			 /* of each */
		const char *after;	 /* NULL: no file */
		const char *log;	 /* in the log, or NULL */
	} cases[] = {
		{"the old form: the stop adds a list", "4660 10\n", {7, 3}, 0, 0, "4660 10\nredo 3 7\n", NULL},
		{"the old form, nothing handed back: unchanged", "4660 10\n", {0}, 0, 0, "4660 10\n", NULL},
		{"a list kept, one more added", "4660 10\nredo 2 9\n", {5}, 0, 0, "4660 10\nredo 2 5 9\n", "2 events the last run did not handle are fetched again"},
		{"a list kept as it is", "4660 10\nredo 2 9\n", {0}, 0, 0, "4660 10\nredo 2 9\n", NULL},
		{"another instance's event is not listed", "4660 10\n", {5}, I2, -ESTALE, "4660 10\n", NULL},
		{"a number above the last handled is not listed", "4660 10\n", {11}, 0, -EINVAL, "4660 10\n", NULL},
		{"no file: no instance followed yet", NULL, {5}, 0, -ESTALE, NULL, NULL},
		{"instance 0", "0 10\n", {5}, 0, -ESTALE, "0 10\n", NOT_A_POSITION},
		{"one number", "4660\n", {5}, 0, -ESTALE, "4660\n", NOT_A_POSITION},
		{"words after the position", "4660 10 x\n", {5}, 0, -ESTALE, "4660 10 x\n", NOT_A_POSITION},
		{"an empty list", "4660 10\nredo\n", {5}, 0, -ESTALE, "4660 10\nredo\n", NOT_A_POSITION},
		{"a list not in order", "4660 10\nredo 3 3\n", {5}, 0, -ESTALE, "4660 10\nredo 3 3\n", NOT_A_POSITION},
		{"a list above the last", "4660 10\nredo 11\n", {5}, 0, -ESTALE, "4660 10\nredo 11\n", NOT_A_POSITION},
		{"another line", "4660 10\nnext 11\n", {5}, 0, -ESTALE, "4660 10\nnext 11\n", NOT_A_POSITION},
	};
	/* clang-format on */
	klog_setup(LOG_INFO, KLOG_TEXT);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir = tu_mkdtemp();
		char *path = tu_printf("%s/kernel.pos", dir);
		if (cases[i].before)
			tu_write(dir, "kernel.pos", cases[i].before, 0644);
		assert_int_equal(setenv("KEVENTD_KERNEL_POS", path, 1), 0);
		struct ksink sink = {.loop = NULL, .ops = &sink_ops, .userdata = NULL};
		struct ksource *s = NULL;
		struct tu_capture c;
		int bad = 0; /* what unhandled() said, if not the case's rc */
		tu_capture_begin(&c);
		/* the sink as arg: a source that fetches and keeps a position */
		assert_int_equal(
			ksource_genl_new_detached(&ksource_kernel_desc, &sink, &sink, 0x1d, &s), 0);
		assert_non_null(s->unhandled);
		for (size_t k = 0; k < MAX_REDO && cases[i].back[k]; k++) {
			struct kevent *ev = tu_event(KEVENT_GENERAL, "/org/kernel/x", "y", "");
			ev->source = KEVENT_SOURCE_KERNEL;
			ev->seqnum = cases[i].back[k];
			ev->instance = cases[i].back_instance ? cases[i].back_instance : I1;
			int rc = s->unhandled(s, ev);
			if (rc != cases[i].rc)
				bad = rc;
			kevent_free(ev);
		}
		s->stop(s);
		char *log = tu_capture_end(&c);
		if (bad)
			fail_msg("%s: %d, not %d", cases[i].what, bad, cases[i].rc);
		if (cases[i].log && !strstr(log, cases[i].log))
			fail_msg("%s: the log has no \"%s\": %s", cases[i].what, cases[i].log, log);
		if (!cases[i].log && strstr(log, NOT_A_POSITION))
			fail_msg("%s: %s", cases[i].what, log);
		/* after its stop, nothing more is listed: its position is saved */
		struct kevent *ev = tu_event(KEVENT_GENERAL, "/org/kernel/x", "y", "");
		ev->source = KEVENT_SOURCE_KERNEL;
		ev->seqnum = 1;
		ev->instance = I1;
		assert_int_equal(s->unhandled(s, ev), -ESHUTDOWN);
		kevent_free(ev);
		s->free(s);
		char *text = NULL;
		size_t len = 0;
		int rc = read_file(path, 1 << 20, &text, &len);
		if (!cases[i].after) {
			assert_int_equal(rc, -ENOENT);
		} else {
			assert_int_equal(rc, 0);
			if (strcmp(text, cases[i].after) != 0)
				fail_msg("%s: the file says \"%s\", not \"%s\"", cases[i].what,
					 text, cases[i].after);
		}
		free(text);
		free(log);
		tu_rm_rf(dir);
		free(dir);
		free(path);
	}
	assert_int_equal(unsetenv("KEVENTD_KERNEL_POS"), 0);
}

/* ---- events in flight: what a crash would leave, and a stop ---- */

#define FAMILY	  0x1d
#define MAX_TAKEN 16

struct taken {
	uint64_t seq[MAX_TAKEN];
	bool recovered[MAX_TAKEN];
	size_t n;
};

static int taken_submit(void *userdata, struct kevent *ev)
{
	struct taken *t = userdata;
	assert_true(t->n < MAX_TAKEN);
	t->recovered[t->n] = ev->recovered;
	t->seq[t->n++] = ev->seqnum;
	kevent_free(ev);
	return 0;
}

static const struct ksink_ops taken_ops = {
	.submit = taken_submit,
	.reject = sink_reject,
	.overrun = sink_overrun,
	.lost = sink_lost,
	.room = sink_room,
};

/* A datagram of live events first .. last of instance I1, as kevent.ko
 * multicasts them. */
static void live_events(struct ksource *s, uint64_t first, uint64_t last)
{
	static char buf[16384] __attribute__((aligned(4)));
	size_t len = 0;
	for (uint64_t seq = first; seq <= last; seq++) {
		struct msg m;
		nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
		nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_GENERAL);
		nl_put_str(&m, KEVENT_A_OBJECT, "/org/kernel/x");
		nl_put_str(&m, KEVENT_A_SIGNAL, "y");
		nl_put_str(&m, KEVENT_A_PAYLOAD, "");
		nl_put_u64(&m, KEVENT_A_SEQNUM, seq);
		nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1700000000000000000ull);
		nl_put_u64(&m, KEVENT_A_INSTANCE, I1);
		assert_true(len + m.len <= sizeof(buf));
		memcpy(buf + len, m.buf, m.len);
		len += NLMSG_ALIGN(m.len);
	}
	assert_true(ksource_genl_handle(s, KGENL_DATAGRAM, buf, len, 0));
}

static void tell(struct ksource *s, const uint64_t *seqs, uint64_t instance,
		 int (*unhandled)(struct ksource *, const struct kevent *))
{
	for (size_t k = 0; k < MAX_REDO && seqs[k]; k++) {
		struct kevent *ev = tu_event(KEVENT_GENERAL, "/org/kernel/x", "y", "");
		ev->source = KEVENT_SOURCE_KERNEL;
		ev->seqnum = seqs[k];
		ev->instance = instance;
		if (unhandled)
			assert_int_equal(unhandled(s, ev), 0);
		else
			s->handled(s, ev);
		kevent_free(ev);
	}
}

/* Live events handed on; some handled before the stop, some dropped at
 * it (unhandled()), some handled after it (a handler that ran on); what
 * is not handled when the source is freed is in the position, whatever
 * unhandled() was told, so a keventd killed at any point leaves no event
 * it took unlisted. */
static void test_in_flight(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *what;
		const char *before;
		uint64_t first, last;	   /* live events handed on */
		uint64_t handled[MAX_REDO]; /* before the stop */
		uint64_t dropped[MAX_REDO]; /* unhandled() at the stop */
		uint64_t after[MAX_REDO];   /* handled after the stop */
		uint64_t other[MAX_REDO];   /* handled, of another instance */
		const char *file;
	} cases[] = {
		{"none handled: all listed", "4660 10\n", 11, 15, {0}, {0}, {0}, {0}, "4660 15\nredo 11 12 13 14 15\n"},
		{"all handled: none", "4660 10\n", 11, 13, {12, 11, 13}, {0}, {0}, {0}, "4660 13\n"},
		{"some handled", "4660 10\n", 11, 15, {12, 14}, {0}, {0}, {0}, "4660 15\nredo 11 13 15\n"},
		{"dropped at the stop: listed once", "4660 10\n", 11, 14, {11}, {13, 14}, {0}, {0}, "4660 14\nredo 12 13 14\n"},
		{"a handler that ran on after the stop", "4660 10\n", 11, 14, {0}, {14}, {11, 12}, {0}, "4660 14\nredo 13 14\n"},
		{"another instance's number is not this one's", "4660 10\n", 11, 12, {0}, {0}, {0}, {11}, "4660 12\nredo 11 12\n"},
		{"beside a list from the last stop", "4660 10\nredo 4 9\n", 11, 13, {12}, {0}, {0}, {0}, "4660 13\nredo 4 9 11 13\n"},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir = tu_mkdtemp();
		char *path = tu_printf("%s/kernel.pos", dir);
		tu_write(dir, "kernel.pos", cases[i].before, 0644);
		assert_int_equal(setenv("KEVENTD_KERNEL_POS", path, 1), 0);
		struct taken t = {0};
		struct ksink sink = {.loop = NULL, .ops = &taken_ops, .userdata = &t};
		struct ksource *s = NULL;
		assert_int_equal(
			ksource_genl_new_detached(&ksource_kernel_desc, &sink, &sink, FAMILY, &s),
			0);
		assert_non_null(s->handled);
		live_events(s, cases[i].first, cases[i].last);
		assert_int_equal(t.n, cases[i].last - cases[i].first + 1);
		for (size_t k = 0; k < t.n; k++)
			assert_true(t.seq[k] == cases[i].first + k && !t.recovered[k]);
		tell(s, cases[i].handled, I1, NULL);
		tell(s, cases[i].other, I2, NULL);
		tell(s, cases[i].dropped, I1, s->unhandled);
		s->stop(s);
		tell(s, cases[i].after, I1, NULL);
		s->free(s);
		char *text = NULL;
		size_t len = 0;
		assert_int_equal(read_file(path, 1 << 20, &text, &len), 0);
		if (strcmp(text, cases[i].file) != 0)
			fail_msg("%s: the file says \"%s\", not \"%s\"", cases[i].what, text,
				 cases[i].file);
		free(text);
		tu_rm_rf(dir);
		free(dir);
		free(path);
	}
	assert_int_equal(unsetenv("KEVENTD_KERNEL_POS"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_source),
		cmocka_unit_test(test_in_flight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

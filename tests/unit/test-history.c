// SPDX-License-Identifier: GPL-2.0-or-later
/* The event history: a bounded ring, oldest first, each rule's outcome as
 * the runner reported it, and reports for events gone from the ring
 * ignored. */
#include <inttypes.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "testutil.h"
#include "util.h"

static struct kfile *rules(void)
{
	return tu_parse("rules:\n"
			"  - name: a\n    run: [/bin/true]\n"
			"  - name: b\n    run: [/bin/true]\n"
			"  - name: quiet\n",
			"/etc/keventd/rules.d/10-h.yaml");
}

static size_t strcount(const char *s, char c)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

static char *render(const struct khistory *h, size_t n, bool json)
{
	struct strbuf sb = STRBUF_INIT;
	khistory_render(h, n, json, &sb);
	assert_false(sb.oom);
	return sb.buf ? sb.buf : strdup("");
}

static void add(struct khistory *h, uint64_t serial, const char *signal,
		const struct krule *const *r, size_t n)
{
	struct kevent *ev = tu_event(0, "/o", signal, "");
	ev->seqnum = serial * 10;
	ev->timestamp = 1000000000ull * 86400 + 5000000; /* 1970-01-02T00:00:00.005Z */
	assert_int_equal(khistory_add(h, serial, ev, r, n, false, NULL, 0), 0);
	kevent_free(ev);
}

/* Only the last cap events are kept, oldest first; -n takes the newest. */
static void test_ring(void **state)
{
	(void)state;
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(3, &h), 0);
	char *s = render(h, 0, false);
	assert_string_equal(s, "");
	free(s);
	for (uint64_t i = 1; i <= 5; i++)
		add(h, i, "s", NULL, 0);
	assert_int_equal(khistory_len(h), 3);
	assert_int_equal(khistory_capacity(h), 3);
	s = render(h, 0, false);
	assert_string_equal(s, "1970-01-02T00:00:00.005Z socket seq=30 general /o s\n"
			       "  (no rule matched)\n"
			       "1970-01-02T00:00:00.005Z socket seq=40 general /o s\n"
			       "  (no rule matched)\n"
			       "1970-01-02T00:00:00.005Z socket seq=50 general /o s\n"
			       "  (no rule matched)\n");
	free(s);
	s = render(h, 1, true);
	assert_string_equal(s, "{\"seqnum\":50,\"timestamp\":86400005000000,\"source\":\"socket\","
			       "\"type\":\"general\",\"object\":\"/o\",\"signal\":\"s\","
			       "\"rules\":[],\"matched\":0}\n");
	free(s);
	khistory_free(h);
}

/* An event handled while a rule file was broken says so, and keeps the
 * file's name and error for explain, with the rule set of then; the
 * next rule set, with none broken, says nothing. */
static void test_broken_files(void **state)
{
	(void)state;
	struct khistory *h = NULL;
	struct kruleset *rs = NULL, *fixed = NULL;
	struct kfile *f = rules();
	assert_int_equal(khistory_new(4, &h), 0);
	assert_int_equal(kruleset_from_files(&f, 1, &rs), 0);
	assert_int_equal(kruleset_from_files(&f, 1, &fixed), 0);
	rs->broken = calloc(1, sizeof(*rs->broken));
	assert_non_null(rs->broken);
	rs->broken[0] =
		(struct kbroken){strdup("20-b.yaml"), strdup("20-b.yaml:4:5: error: x"), false};
	rs->n_broken = 1;
	struct kevent *ev = tu_event(0, "/o", "s", "");
	ev->seqnum = 7;
	ev->timestamp = 1000000000ull * 86400 + 5000000;
	assert_int_equal(khistory_add(h, 1, ev, NULL, 0, false, rs, 1), 0);
	ev->seqnum = 8;
	assert_int_equal(khistory_add(h, 2, ev, NULL, 0, false, fixed, 2), 0);
	kevent_free(ev);
	kruleset_free(rs); /* the history keeps what it needs */
	char *s = render(h, 0, false);
	assert_string_equal(s,
			    "1970-01-02T00:00:00.005Z socket seq=7 general /o s\n"
			    "  (no rule matched)\n"
			    "  note: 1 rule file was broken at the time (keventctl explain 7 says "
			    "which)\n"
			    "1970-01-02T00:00:00.005Z socket seq=8 general /o s\n"
			    "  (no rule matched)\n");
	free(s);
	s = render(h, 0, true);
	assert_non_null(strstr(s, "\"seqnum\":7,"));
	assert_non_null(strstr(s, "\"matched\":0,\"broken_files\":1}\n"));
	assert_non_null(strstr(s, "\"seqnum\":8,"));
	assert_null(strstr(strstr(s, "\"seqnum\":8,"), "broken_files"));
	free(s);
	size_t n;
	const struct kbroken *b = khistory_entry_broken(khistory_find(h, -1, 7, false), &n);
	assert_int_equal(n, 1);
	assert_string_equal(b[0].name, "20-b.yaml");
	assert_string_equal(b[0].why, "20-b.yaml:4:5: error: x");
	assert_false(b[0].kept);
	b = khistory_entry_broken(khistory_find(h, -1, 8, false), &n);
	assert_int_equal(n, 0);
	khistory_free(h);
	kruleset_free(fixed);
	kfile_unref(f);
}

/* A run's stderr tail is kept with its rule, shown under it in text and
 * as "stderr" in JSON, counted in the history's bytes, within its bound
 * (without room, not kept), and given back with its entry. */
static void test_stderr_tail(void **state)
{
	(void)state;
	struct kfile *f = rules();
	const struct krule *r[] = {&f->rules[0], &f->rules[1]};
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(2, &h), 0);
	add(h, 1, "x", r, 2);
	size_t before = khistory_bytes(h);
	khistory_report(h, 1,
			&(struct krun_report){.rule = r[0],
					      .outcome = KRUN_EXITED,
					      .status = 3,
					      .duration_ms = 4,
					      .stderr_tail = "disk \x1b[2J gone\nsecond\n"});
	khistory_report(
		h, 1,
		&(struct krun_report){.rule = r[1], .outcome = KRUN_EXITED, .duration_ms = 1});
	assert_true(khistory_bytes(h) > before);
	size_t tails = khistory_bytes(h) - before;
	char *s = render(h, 0, false);
	assert_string_equal(s, "1970-01-02T00:00:00.005Z socket seq=10 general /o x\n"
			       "  a: exited 3 after 4 ms\n"
			       "    stderr: disk \\x1b[2J gone\n"
			       "    stderr: second\n"
			       "  b: exited 0 after 1 ms\n");
	free(s);
	s = render(h, 0, true);
	assert_non_null(strstr(s, "\"status\":3,\"duration_ms\":4,\"timed_out\":false,"
				  "\"stderr\":\"disk \\u001b[2J gone\\nsecond\\n\"}"));
	assert_null(strstr(strstr(s, "\"name\":\"b\""), "stderr"));
	free(s);
	struct strbuf sb = STRBUF_INIT;
	khistory_entry_put_runs(khistory_find(h, -1, 10, false), false, &sb);
	assert_string_equal(strbuf_str(&sb), "what became of its runs:\n"
					     "  a: exited 3 after 4 ms\n"
					     "    stderr: disk \\x1b[2J gone\n"
					     "    stderr: second\n"
					     "  b: exited 0 after 1 ms\n");
	strbuf_release(&sb);
	/* the entry's slot comes round: its tail goes with it */
	add(h, 2, "y", r, 2);
	size_t two = khistory_bytes(h);
	add(h, 3, "z", r, 2); /* in entry 1's slot, and its buffer */
	assert_int_equal(khistory_bytes(h), two - tails);
	/* no room under the bound: the outcome kept, the tail not */
	add(h, 4, "w", r, 2);
	struct khistory *empty = NULL;
	assert_int_equal(khistory_new(2, &empty), 0);
	khistory_set_max_bytes(h, khistory_bytes(h) - khistory_bytes(empty));
	khistory_free(empty);
	size_t full = khistory_bytes(h);
	khistory_report(h, 4,
			&(struct krun_report){.rule = r[0],
					      .outcome = KRUN_EXITED,
					      .status = 1,
					      .stderr_tail = "too long for the bound\n"});
	assert_int_equal(khistory_bytes(h), full);
	s = render(h, 1, false);
	assert_non_null(strstr(s, "  a: exited 1"));
	assert_null(strstr(s, "stderr"));
	free(s);
	khistory_free(h);
	kfile_unref(f);
}

/* events' filters: the last n of the entries that pass, each tested at
 * its turn. */
static void test_filtered(void **state)
{
	(void)state;
	struct kfile *f = rules();
	const struct krule *r[] = {&f->rules[0], &f->rules[1]};
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(8, &h), 0);
	add(h, 1, "x", r, 1);	  /* a */
	add(h, 2, "y", r + 1, 1); /* b */
	add(h, 3, "z", r, 2);	  /* a, b */
	add(h, 4, "w", NULL, 0);
	khistory_report(h, 2,
			&(struct krun_report){.rule = r[1], .outcome = KRUN_EXITED, .status = 1});
	struct kfilter flt;
	const char *why;
	kfilter_init(&flt);
	assert_int_equal(kfilter_add(&flt, "rule=b", &why), 0);
	struct khistory_cursor cur;
	struct strbuf sb = STRBUF_INIT;
	khistory_cursor_init_filtered(h, 0, false, &flt, &cur);
	while (khistory_cursor_next(h, &cur, &sb))
		;
	assert_null(strstr(strbuf_str(&sb), "seq=10 "));
	assert_non_null(strstr(strbuf_str(&sb), "seq=20 "));
	assert_non_null(strstr(strbuf_str(&sb), "seq=30 "));
	strbuf_reset(&sb);
	khistory_cursor_init_filtered(h, 1, false, &flt, &cur); /* the last one of b */
	while (khistory_cursor_next(h, &cur, &sb))
		;
	assert_null(strstr(strbuf_str(&sb), "seq=20 "));
	assert_non_null(strstr(strbuf_str(&sb), "seq=30 "));
	strbuf_reset(&sb);
	kfilter_init(&flt);
	assert_int_equal(kfilter_add(&flt, "failed", &why), 0);
	khistory_cursor_init_filtered(h, 0, true, &flt, &cur);
	while (khistory_cursor_next(h, &cur, &sb))
		;
	assert_non_null(strstr(strbuf_str(&sb), "\"seqnum\":20,"));
	assert_null(strstr(strbuf_str(&sb), "\"seqnum\":30,"));
	assert_int_equal(strcount(strbuf_str(&sb), '\n'), 1);
	strbuf_release(&sb);
	khistory_free(h);
	kfile_unref(f);
}

/* Each report moves its rule on; a report for an event that left the ring
 * changes nothing, and the job's end leaves no rule queued. */
static void test_outcomes(void **state)
{
	(void)state;
	struct kfile *f = rules();
	const struct krule *r[] = {&f->rules[0], &f->rules[1], &f->rules[2]};
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(2, &h), 0);
	add(h, 1, "x", r, 3);
	char *s = render(h, 0, false);
	assert_non_null(strstr(s, "  a: queued\n  b: queued\n  quiet: matched (runs nothing)\n"));
	free(s);
	khistory_report(h, 1,
			&(struct krun_report){.rule = r[0], .outcome = KRUN_STARTED, .pid = 42});
	s = render(h, 0, true);
	assert_non_null(strstr(s, "{\"name\":\"a\",\"outcome\":\"running\",\"pid\":42}"));
	free(s);
	khistory_report(h, 1,
			&(struct krun_report){.rule = r[0],
					      .outcome = KRUN_KILLED,
					      .status = SIGTERM,
					      .timed_out = true,
					      .duration_ms = 1500});
	khistory_done(h, 1);
	s = render(h, 0, false);
	assert_non_null(strstr(s, "  a: killed by SIGTERM after 1500 ms, timed out\n"
				  "  b: not run (keventd was stopping)\n"));
	free(s);
	s = render(h, 0, true);
	assert_non_null(strstr(s, "{\"name\":\"a\",\"outcome\":\"killed\",\"signal\":15,"
				  "\"duration_ms\":1500,\"timed_out\":true},"
				  "{\"name\":\"b\",\"outcome\":\"not-run\"},"
				  "{\"name\":\"quiet\",\"outcome\":\"matched\"}],\"matched\":3}"));
	free(s);
	add(h, 2, "y", r, 2);
	khistory_report(
		h, 2,
		&(struct krun_report){
			.rule = r[0], .outcome = KRUN_EXITED, .status = 3, .duration_ms = 7});
	khistory_report(h, 2, &(struct krun_report){.rule = r[1], .outcome = KRUN_RATELIMITED});
	add(h, 3, "z", r, 2); /* event 1 leaves the ring */
	khistory_report(h, 1, &(struct krun_report){.rule = r[1], .outcome = KRUN_DRY_RUN});
	khistory_report(h, 3,
			&(struct krun_report){
				.rule = r[0], .outcome = KRUN_START_FAILED, .error = -ENOENT});
	khistory_report(h, 3, &(struct krun_report){.rule = r[1], .outcome = KRUN_DRY_RUN});
	s = render(h, 0, false);
	assert_string_equal(s, "1970-01-02T00:00:00.005Z socket seq=20 general /o y\n"
			       "  a: exited 3 after 7 ms\n"
			       "  b: rate-limited (not run)\n"
			       "1970-01-02T00:00:00.005Z socket seq=30 general /o z\n"
			       "  a: failed to start: No such file or directory\n"
			       "  b: dry-run (not run)\n");
	free(s);
	khistory_free(h);
	kfile_unref(f);
}

/* A transient rule's run: running as its unit once started, and its end,
 * which comes after its job is done, still recorded, with the unit named. */
static void test_unit(void **state)
{
	(void)state;
	struct kfile *f = rules();
	const struct krule *r[] = {&f->rules[0], &f->rules[1]};
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(4, &h), 0);
	add(h, 1, "x", r, 2); /* seqnum 10 */
	char unit[64], text[192];
	snprintf(unit, sizeof(unit), "keventd-a-%016" PRIx64 "-3.service", kinstance_id());
	khistory_report(
		h, 1,
		&(struct krun_report){
			.rule = r[0], .outcome = KRUN_STARTED, .unit = unit, .unit_run = 3});
	khistory_report(
		h, 1,
		&(struct krun_report){
			.rule = r[1], .outcome = KRUN_EXITED, .status = 0, .duration_ms = 2});
	khistory_done(h, 1);
	char *s = render(h, 0, false);
	snprintf(text, sizeof(text), "  a: running as %s\n  b: exited 0 after 2 ms\n", unit);
	assert_non_null(strstr(s, text));
	free(s);
	s = render(h, 0, true);
	snprintf(text, sizeof(text), "{\"name\":\"a\",\"outcome\":\"running\",\"unit\":\"%s\"}",
		 unit);
	assert_non_null(strstr(s, text));
	free(s);
	khistory_report(h, 1,
			&(struct krun_report){.rule = r[0],
					      .outcome = KRUN_KILLED,
					      .status = SIGKILL,
					      .unit = unit,
					      .unit_run = 3,
					      .duration_ms = 30000});
	s = render(h, 0, false);
	snprintf(text, sizeof(text), "  a: killed by SIGKILL after 30000 ms (%s)\n", unit);
	assert_non_null(strstr(s, text));
	free(s);
	s = render(h, 0, true);
	snprintf(text, sizeof(text),
		 "{\"name\":\"a\",\"outcome\":\"killed\",\"signal\":9,"
		 "\"duration_ms\":30000,\"timed_out\":false,\"unit\":\"%s\"}",
		 unit);
	assert_non_null(strstr(s, text));
	free(s);
	khistory_free(h);
	kfile_unref(f);
}

/* At most KHISTORY_RULES_MAX rules are named; the rest are counted, and
 * the memory held is that of the ring and its reused buffers. */
static void test_bounded(void **state)
{
	(void)state;
	struct kfile *f = rules();
	const struct krule *r[KHISTORY_RULES_MAX + 5];
	for (size_t i = 0; i < ARRAY_SIZE(r); i++)
		r[i] = &f->rules[i % 3];
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(4, &h), 0);
	add(h, 1, "many", r, ARRAY_SIZE(r));
	char *s = render(h, 0, false);
	assert_non_null(strstr(s, "\n  (and 5 more rules)\n"));
	free(s);
	khistory_free(h);
	assert_int_equal(khistory_new(4, &h), 0);
	size_t empty = khistory_bytes(h);
	add(h, 1, "many", r, ARRAY_SIZE(r));
	size_t one = khistory_bytes(h) - empty;
	for (uint64_t i = 2; i <= 40; i++)
		add(h, i, "many", r, ARRAY_SIZE(r));
	assert_int_equal(khistory_bytes(h), empty + 4 * one);
	khistory_free(h);
	kfile_unref(f);
}

/* A history of no entries keeps nothing. */
static void test_empty(void **state)
{
	(void)state;
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(0, &h), 0);
	add(h, 1, "x", NULL, 0);
	khistory_report(h, 1, &(struct krun_report){.outcome = KRUN_DRY_RUN});
	khistory_done(h, 1);
	assert_int_equal(khistory_len(h), 0);
	char *s = render(h, 0, false);
	assert_string_equal(s, "");
	free(s);
	khistory_free(h);
}

/* Event serial with a payload of n bytes (at most 599). */
static void add_sized(struct khistory *h, uint64_t serial, const struct krule *const *r,
		      size_t n_rules, size_t n)
{
	char payload[600];
	memset(payload, 'x', n);
	payload[n] = '\0';
	struct kevent *ev = tu_event(0, "/o", "small", payload);
	assert_int_equal(khistory_add(h, serial, ev, r, n_rules, false, NULL, 0), 0);
	kevent_free(ev);
}

/* A large history (in huge-page chunks): every slot keeps its event round
 * after round, a slot whose event outgrows its piece gets a buffer of its
 * own, and its memory stops growing once each slot has had its largest
 * event.  Under ASan, khistory_free() leaving a buffer behind fails. */
static void test_large(void **state)
{
	(void)state;
	static const size_t caps[] = {16384}; /* the smallest kept in chunks */
	struct kfile *f = rules();
	const struct krule *r[] = {&f->rules[0], &f->rules[1]};
	for (size_t c = 0; c < ARRAY_SIZE(caps); c++) {
		size_t cap = caps[c];
		struct khistory *h = NULL;
		assert_int_equal(khistory_new(cap, &h), 0);
		size_t empty = khistory_bytes(h);
		/* every 7th slot's event grows after the first round */
		for (uint64_t round = 0; round < 3; round++)
			for (uint64_t i = 1; i <= cap; i++)
				add_sized(h, round * cap + i, r, 2, i % 7 || !round ? 10 : 500);
		size_t full = khistory_bytes(h);
		assert_true(full > empty + cap * 128);
		for (uint64_t i = 1; i <= cap; i++)
			add_sized(h, 3 * cap + i, r, 2, i % 7 ? 20 : 400);
		assert_int_equal(khistory_bytes(h), full);
		assert_int_equal(khistory_len(h), cap);
		char *s = render(h, 2, true);
		assert_non_null(strstr(s, "\"seqnum\":"));
		assert_non_null(strstr(s, "\"signal\":\"small\""));
		free(s);
		/* the oldest and the newest are the ones added */
		s = render(h, 0, false);
		assert_int_equal(strstr(s, "/o small") != NULL, 1);
		size_t lines = 0;
		for (const char *p = s; (p = strstr(p, "/o small")); p++)
			lines++;
		assert_int_equal(lines, cap);
		free(s);
		khistory_free(h);
	}
	kfile_unref(f);
}

/* A cursor renders what khistory_render() would have at the moment it was
 * made, an entry at a time, each as it is at its turn; what leaves the
 * history before its turn is skipped, counted, and the rest follows from
 * the oldest entry still kept. */
static void test_cursor(void **state)
{
	(void)state;
	struct kfile *f = rules();
	const struct krule *r[] = {&f->rules[0]};
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(4, &h), 0);
	for (uint64_t i = 1; i <= 4; i++)
		add(h, i, "s", r, 1);
	char *whole = render(h, 3, false);
	struct khistory_cursor cur;
	khistory_cursor_init(h, 3, false, &cur);
	struct strbuf sb = STRBUF_INIT;
	assert_true(khistory_cursor_next(h, &cur, &sb)); /* event 2 */
	assert_non_null(strstr(strbuf_str(&sb), " seq=20 "));
	/* event 3 runs its rule, then leaves; 5 and 6 come, after the cursor's end */
	khistory_report(h, 3, &(struct krun_report){.rule = r[0], .outcome = KRUN_DRY_RUN});
	assert_true(khistory_cursor_next(h, &cur, &sb)); /* event 3, as it is now */
	assert_non_null(strstr(strbuf_str(&sb), "  a: dry-run (not run)\n"));
	add(h, 5, "s", r, 1);
	add(h, 6, "s", r, 1);
	assert_true(khistory_cursor_next(h, &cur, &sb)); /* event 4, the last then */
	assert_false(khistory_cursor_next(h, &cur, &sb));
	assert_int_equal(cur.skipped, 0);
	/* what the cursor rendered is the rendering of then, but for event 3's news */
	char *now = strdup(strbuf_str(&sb));
	char *at = strstr(whole, "  a: queued\n1970"); /* event 2's rule, then event 3 */
	assert_non_null(at);
	at = strstr(at + 1, "  a: queued\n"); /* event 3's rule */
	assert_non_null(at);
	size_t pre = (size_t)(at - whole);
	assert_memory_equal(now, whole, pre);
	assert_string_equal(now + pre + strlen("  a: dry-run (not run)\n"),
			    whole + pre + strlen("  a: queued\n"));
	free(now);
	/* a cursor outrun by the ring: the two gone are skipped and counted */
	strbuf_reset(&sb);
	khistory_cursor_init(h, 0, true, &cur); /* events 3 to 6 */
	assert_true(khistory_cursor_next(h, &cur, &sb));
	assert_non_null(strstr(strbuf_str(&sb), "\"seqnum\":30,"));
	add(h, 7, "s", r, 1);
	add(h, 8, "s", r, 1);
	add(h, 9, "s", r, 1); /* 4, 5 (and 3) gone */
	strbuf_reset(&sb);
	assert_true(khistory_cursor_next(h, &cur, &sb));
	assert_non_null(strstr(strbuf_str(&sb), "\"seqnum\":60,"));
	assert_false(khistory_cursor_next(h, &cur, &sb));
	assert_int_equal(cur.skipped, 2);
	strbuf_release(&sb);
	free(whole);
	khistory_free(h);
	kfile_unref(f);
}

/* Events in the history, and the first of them, from its text rendering. */
static size_t held(const struct khistory *h, uint64_t *first)
{
	char *s = render(h, 0, true);
	size_t n = 0;
	*first = 0;
	for (const char *p = s; (p = strstr(p, "\"seqnum\":")); p++, n++)
		if (!n)
			*first = strtoull(p + strlen("\"seqnum\":"), NULL, 10) / 10;
	free(s);
	return n;
}

/* A payload of n bytes (at most 3999). */
static void add_big(struct khistory *h, uint64_t serial, size_t n)
{
	char *payload = malloc(n + 1);
	assert_non_null(payload);
	memset(payload, 'p', n);
	payload[n] = '\0';
	struct kevent *ev = tu_event(0, "/o", "big", payload);
	ev->seqnum = serial * 10;
	int rc = khistory_add(h, serial, ev, NULL, 0, false, NULL, 0);
	kevent_free(ev);
	free(payload);
	assert_int_equal(rc, 0);
}

/* With a bound in bytes, the buffers never take more than it: the oldest
 * entries go first, so what is kept is the newest, one after another; an
 * event that could not fit alone is not kept, and the rest stay; without
 * a bound the ring's own bound holds. */
static void test_bytes_bound(void **state)
{
	(void)state;
	for (size_t big = 0; big < 2; big++) {
		/* small rings in malloc()ed buffers; a large one in chunks */
		size_t cap = big ? 16384 : 64;
		struct khistory *h = NULL;
		assert_int_equal(khistory_new(cap, &h), 0);
		size_t empty = khistory_bytes(h);
		size_t max = big ? 3 * 2 * 1024 * 1024 : 16 * 1024;
		khistory_set_max_bytes(h, max);
		assert_int_equal(khistory_max_bytes(h), max);
		uint64_t first;
		for (uint64_t i = 1; i <= 3 * cap; i++) {
			add_big(h, i, i % 5 ? 100 : 3000); /* every fifth outgrows its buffer */
			assert_true(khistory_bytes(h) - empty <= max);
			if (big && i % 997)
				continue;
			size_t n = held(h, &first);
			assert_int_equal(khistory_len(h), n);
			assert_int_equal(first, i - n + 1); /* the newest n */
			assert_true(n >= 1);
		}
		assert_true(khistory_len(h) < cap);
		khistory_free(h);
	}
	/* an entry too big for the bound alone: not kept, the others stay */
	struct khistory *h = NULL;
	assert_int_equal(khistory_new(8, &h), 0);
	khistory_set_max_bytes(h, 2048);
	add_big(h, 1, 100);
	add_big(h, 2, 100);
	char payload[3001];
	memset(payload, 'p', 3000);
	payload[3000] = '\0';
	struct kevent *ev = tu_event(0, "/o", "big", payload);
	assert_int_equal(khistory_add(h, 3, ev, NULL, 0, false, NULL, 0), -ENOMEM);
	kevent_free(ev);
	uint64_t first;
	assert_int_equal(held(h, &first), 2);
	assert_int_equal(first, 1);
	khistory_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring),	     cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_unit),	     cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_empty),	     cmocka_unit_test(test_large),
		cmocka_unit_test(test_cursor),	     cmocka_unit_test(test_bytes_bound),
		cmocka_unit_test(test_broken_files), cmocka_unit_test(test_stderr_tail),
		cmocka_unit_test(test_filtered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* What reaches the log and the terminal: text from outside escaped
 * (strbuf_add_escaped), and a class of warnings throttled (klog_throttled). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "testutil.h"
#include "util.h"

struct esc_case {
	const char *label;
	const char *in;
	size_t len; /* 0: strlen(in) */
	const char *want;
};

/* clang-format off */
static const struct esc_case esc_cases[] = {
	{"empty", "", 0, ""},
	{"plain text", "rule cpu-overheat: exited 0", 0, "rule cpu-overheat: exited 0"},
	{"newline", "a\nb", 0, "a\\nb"},
	{"tab", "a\tb", 0, "a\\tb"},
	{"carriage return", "ok\rfake", 0, "ok\\x0dfake"},
	{"ESC sequence", "\x1b[2Jx", 0, "\\x1b[2Jx"},
	{"forged log line", "x\nkeventd: error: forged", 0, "x\\nkeventd: error: forged"},
	{"forged journal priority", "x\n<0>forged", 0, "x\\n<0>forged"},
	{"other C0 controls", "\x01\x07\x08\x1f", 0, "\\x01\\x07\\x08\\x1f"},
	{"DEL", "a\x7f", 0, "a\\x7f"},
	{"NUL inside the length", "a\0b", 3, "a\\x00b"},
	{"backslash kept", "a\\x1b\\n", 0, "a\\x1b\\n"},
	{"quotes kept", "'a' \"b\"", 0, "'a' \"b\""},
	{"UTF-8 two bytes", "caf\xc3\xa9", 0, "caf\xc3\xa9"},
	{"UTF-8 three bytes", "\xe2\x82\xac", 0, "\xe2\x82\xac"},
	{"UTF-8 four bytes", "\xf0\x9f\x98\x80", 0, "\xf0\x9f\x98\x80"},
	{"U+00A0, past the C1 range", "\xc2\xa0", 0, "\xc2\xa0"},
	{"C1 control U+0080", "\xc2\x80", 0, "\\xc2\\x80"},
	{"C1 CSI U+009B", "\xc2\x9b" "2J", 0, "\\xc2\\x9b2J"},
	{"C1 control U+009F", "\xc2\x9f", 0, "\\xc2\\x9f"},
	{"raw 8-bit CSI", "\x9b" "2J", 0, "\\x9b2J"},
	{"byte 0xff", "a\xff", 0, "a\\xff"},
	{"lead byte 0xf8", "\xf8\x88\x80\x80\x80", 0, "\\xf8\\x88\\x80\\x80\\x80"},
	{"overlong slash", "\xc0\xaf", 0, "\\xc0\\xaf"},
	{"overlong three bytes", "\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf"},
	{"surrogate", "\xed\xa0\x80", 0, "\\xed\\xa0\\x80"},
	{"past U+10FFFF", "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"},
	{"U+10FFFF", "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf"},
	{"cut short at the end", "x\xe2\x82", 0, "x\\xe2\\x82"},
	{"cut short by ASCII", "\xe2\x82x", 0, "\\xe2\\x82x"},
	{"cut short by NUL inside the length", "\xc3\0", 2, "\\xc3\\x00"},
};
/* clang-format on */

static void test_escape(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(esc_cases); i++) {
		const struct esc_case *c = &esc_cases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		print_message("case: %s\n", c->label);
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT;
		strbuf_add_escaped(&sb, c->in, len);
		assert_string_equal(strbuf_str(&sb), c->want);
		/* what is escaped has nothing left to escape */
		strbuf_put_escaped(&again, strbuf_str(&sb));
		assert_string_equal(strbuf_str(&again), c->want);
		assert_false(str_has_control(strbuf_str(&sb)));
		if (!c->len)
			assert_int_equal(str_has_control(c->in), strcmp(c->in, c->want) != 0);
	}
}

/* n lines of class t at at_ms (on a clock that starts at 1 s) and level. */
static char *log_lines(struct klog_throttle *t, uint64_t at_ms, int level, unsigned n)
{
	struct tu_capture c;
	tu_capture_begin(&c);
	for (unsigned i = 0; i < n; i++)
		klog_throttled_at(t, 1000000000ull + at_ms * 1000000ull, level, "bad thing %u", i);
	return tu_capture_end(&c);
}

#define NOTE "x: 20 bad things in 5s: the next ones are counted in status but not logged, for now\n"

/* One step of a flood: at at_ms, n lines of the class; wanted: how many of
 * them are logged, the "N more" line before them (0: none) and whether
 * the note that the next ones are not logged follows; the state after. */
struct step {
	uint64_t at_ms;
	int level;
	unsigned n;
	unsigned logged_lines;
	uint64_t more;
	bool note;
	unsigned logged;
	uint64_t unlogged;
};

/* clang-format off */
static const struct step steps[] = {
	{0,     LOG_WARNING, 5,  5,  0, false, 5,  0},  /* under the burst: all logged */
	{100,   LOG_WARNING, 15, 15, 0, true,  20, 0},  /* the 20th, then the note */
	{200,   LOG_WARNING, 7,  0,  0, false, 20, 7},  /* counted, not logged */
	{4999,  LOG_WARNING, 1,  0,  0, false, 20, 8},  /* the window is not over */
	{4999,  LOG_DEBUG,   3,  0,  0, false, 20, 8},  /* a level not logged is not counted */
	{5000,  LOG_WARNING, 1,  1,  8, false, 1,  0},  /* a new window: the sum first */
	{5001,  LOG_WARNING, 19, 19, 0, true,  20, 0},
	{5002,  LOG_NOTICE,  2,  0,  0, false, 20, 2},  /* one class whatever the level */
	{60000, LOG_WARNING, 3,  3,  2, false, 3,  0},  /* long after: a window of its own */
	{70000, LOG_WARNING, 1,  1,  0, false, 1,  0},  /* nothing was left unlogged */
};
/* clang-format on */

static void test_throttle(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	klog_setup(LOG_INFO, KLOG_TEXT);
	struct klog_throttle t = {.name = "x", .what = "bad things", .counted = true};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		const struct step *s = &steps[i];
		print_message("step %zu: %u line(s) at %" PRIu64 "ms\n", i, s->n, s->at_ms);
		_cleanup_free_ char *got = log_lines(&t, s->at_ms, s->level, s->n);
		_cleanup_strbuf_ struct strbuf want = STRBUF_INIT;
		const char *prefix = s->level == LOG_WARNING ? "keventd: warning: " : "keventd: ";
		if (s->more)
			strbuf_printf(&want, "%sx: %" PRIu64 " more bad things were not logged\n",
				      prefix, s->more);
		for (unsigned j = s->n - s->logged_lines; j < s->n; j++)
			strbuf_printf(&want, "%sbad thing %u\n", prefix, j);
		if (s->note)
			strbuf_printf(&want, "%s" NOTE, prefix);
		assert_string_equal(got, strbuf_str(&want));
		assert_int_equal(t.logged, s->logged);
		assert_int_equal(t.unlogged, s->unlogged);
	}
}

/* A class status does not count says so; the real clock works as the test's. */
static void test_throttle_uncounted(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	klog_setup(LOG_INFO, KLOG_TEXT);
	struct klog_throttle t = {.name = "D-Bus", .what = "refusals"};
	struct tu_capture c;
	tu_capture_begin(&c);
	for (int i = 0; i < 30; i++)
		klog_throttled(&t, LOG_WARNING, "refused %d", i);
	_cleanup_free_ char *got = tu_capture_end(&c);
	assert_non_null(strstr(got, "keventd: warning: refused 19\n"
				    "keventd: warning: D-Bus: 20 refusals in 5s: the next ones are "
				    "not logged, for now\n"));
	assert_null(strstr(got, "refused 20"));
	assert_int_equal(t.unlogged, 10);
}

/* A message from outside is one line, escaped, in the text format; JSON
 * escapes it as JSON; a field value is quoted and escaped. */
struct line_case {
	const char *label;
	enum klog_format format;
	bool journal;
	bool field;
	const char *want;
};

/* clang-format off */
static const struct line_case line_cases[] = {
	{"text", KLOG_TEXT, false, false, "keventd: warning: rule x: \\x1b[2Jevil\\nkeventd: error: forged\n"},
	{"journal", KLOG_TEXT, true, false, "<4>rule x: \\x1b[2Jevil\\nkeventd: error: forged\n"},
	{"json", KLOG_JSON, false, false, "{\"level\":\"warning\",\"message\":\"rule x: \\u001b[2Jevil\\nkeventd: error: forged\"}\n"},
	{"text field", KLOG_TEXT, false, true, "keventd: warning: rule x: \\x1b[2Jevil\\nkeventd: error: forged v=\"\\x1b[2Jevil\\nkeventd: error: forged\"\n"},
};
/* clang-format on */

static void test_log_line(void **state)
{
	(void)state;
	static const char evil[] = "\x1b[2Jevil\nkeventd: error: forged";
	for (size_t i = 0; i < ARRAY_SIZE(line_cases); i++) {
		const struct line_case *l = &line_cases[i];
		print_message("case: %s\n", l->label);
		struct tu_capture c;
		tu_capture_begin(&c);
		if (l->journal) {
			struct stat st;
			assert_int_equal(fstat(STDERR_FILENO, &st), 0);
			char *js = tu_printf("%llu:%llu", (unsigned long long)st.st_dev,
					     (unsigned long long)st.st_ino);
			setenv("JOURNAL_STREAM", js, 1);
			free(js);
		} else {
			unsetenv("JOURNAL_STREAM");
		}
		klog_setup(LOG_INFO, l->format);
		if (l->field)
			klog_fields(LOG_WARNING, &KLOG_STR("v", evil), 1, "rule x: %s", evil);
		else
			log_warning("rule x: %s", evil);
		_cleanup_free_ char *got = tu_capture_end(&c);
		assert_string_equal(got, l->want);
	}
	unsetenv("JOURNAL_STREAM");
	klog_setup(LOG_INFO, KLOG_TEXT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_throttle),
		cmocka_unit_test(test_throttle_uncounted),
		cmocka_unit_test(test_log_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A user instance's session, its pure parts: which variables of the
 * session reach handlers and which side wins (session-env.h), and what a
 * desktop notification shows (desktop.h): the body escaped and bounded,
 * the urgency and icon of each severity, the key a condition's
 * notifications share, and which rules name the desktop.
 */
#include <stdlib.h>
#include <string.h>

#include "desktop.h"
#include "session-env.h"
#include "testutil.h"
#include "util.h"

static void test_var_passed(void **state)
{
	(void)state;
	static const struct {
		const char *e;
		bool passed;
	} rows[] = {
		{"DISPLAY=:0", true},
		{"WAYLAND_DISPLAY=wayland-0", true},
		{"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", true},
		{"XAUTHORITY=/run/user/1000/.mutter-Xwaylandauth", true},
		{"HOME=/home/u", true},
		{"EMPTY=", true},
		{"lower_case=1", true},
		{"PATH=/home/u/bin", false},
		{"KEVENT_TYPE=power", false},
		{"KEVENT_ANYTHING=x", false},
		{"NOTIFY_SOCKET=/run/user/1000/systemd/notify", false},
		{"LISTEN_FDS=3", false},
		{"LISTEN_PID=1", false},
		{"LISTEN_FDNAMES=a", false},
		{"INVOCATION_ID=abc", false},
		{"JOURNAL_STREAM=8:1", false},
		{"MANAGERPID=1", false},
		{"WATCHDOG_USEC=1", false},
		{"SYSTEMD_EXEC_PID=1", false},
		{"NOEQUALS", false},
		{"=value", false},
		{"1DIGIT=x", false},
		{"BAD-NAME=x", false},
		{"BAD NAME=x", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("%s\n", rows[i].e);
		assert_int_equal(ksession_var_passed(rows[i].e), rows[i].passed);
	}
}

static void test_merge(void **state)
{
	(void)state;
	char *manager[] = {"DISPLAY=:1", "WAYLAND_DISPLAY=wayland-1", "NOTIFY_SOCKET=/x",
			   "DISPLAY=:9", NULL};
	char *own[] = {"HOME=/home/u", "DISPLAY=:0", "PATH=/bin", "DBUS_SESSION_BUS_ADDRESS=a",
		       NULL};
	const char *const want[] = {"DISPLAY=:1", "WAYLAND_DISPLAY=wayland-1", "HOME=/home/u",
				    "DBUS_SESSION_BUS_ADDRESS=a"};
	char **v = NULL;
	assert_int_equal(ksession_env_merge(manager, own, &v), 0);
	assert_int_equal(strv_length(v), ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_string_equal(v[i], want[i]);
	strv_free(v);
	/* either side missing */
	assert_int_equal(ksession_env_merge(NULL, own, &v), 0);
	assert_int_equal(strv_length(v), 3);
	assert_string_equal(v[1], "DISPLAY=:0");
	strv_free(v);
	assert_int_equal(ksession_env_merge(NULL, NULL, &v), 0);
	assert_null(v[0]);
	strv_free(v);
}

static void test_urgency_icon(void **state)
{
	(void)state;
	static const struct {
		enum knotify_severity s;
		uint8_t urgency;
		const char *icon;
	} rows[] = {
		{KNOTIFY_SEV_NONE, 1, "dialog-information"},
		{KNOTIFY_SEV_INFO, 0, "dialog-information"},
		{KNOTIFY_SEV_WARNING, 1, "dialog-warning"},
		{KNOTIFY_SEV_CRITICAL, 2, "dialog-error"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		assert_int_equal(kdesktop_urgency(rows[i].s), rows[i].urgency);
		assert_string_equal(kdesktop_icon(rows[i].s), rows[i].icon);
	}
}

static void test_body(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} rows[] = {
		{"", ""},
		{"plain text\nline two", "plain text\nline two"},
		{"<a href=\"x\">click</a> & more",
		 "&lt;a href=\"x\"&gt;click&lt;/a&gt; &amp; more"},
		{"&amp;", "&amp;amp;"},
		{"caf\xc3\xa9", "caf\xc3\xa9"},
		{"bad \xff byte", "bad \\xff byte"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct strbuf sb = STRBUF_INIT;
		kdesktop_body(rows[i].in, &sb);
		assert_false(sb.oom);
		assert_string_equal(strbuf_str(&sb), rows[i].out);
		strbuf_release(&sb);
	}
	/* bounded, and cut at a character: "é" is two bytes, the bound
	 * falls inside one */
	char *big = malloc(KDESKTOP_BODY_MAX * 2 + 1);
	big[0] = 'x';
	for (size_t i = 1; i + 1 < KDESKTOP_BODY_MAX * 2; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	big[KDESKTOP_BODY_MAX * 2 - 1] = '\0';
	struct strbuf sb = STRBUF_INIT;
	kdesktop_body(big, &sb);
	const char *out = strbuf_str(&sb);
	size_t len = strlen(out);
	assert_true(len <= KDESKTOP_BODY_MAX + 3);
	assert_memory_equal(out + len - 3, "\xe2\x80\xa6", 3);
	assert_int_equal(((unsigned char)out[len - 4] & 0xc0) == 0xc0, false); /* no half "é" */
	assert_int_equal((unsigned char)out[len - 4], 0xa9);
	strbuf_release(&sb);
	free(big);
	/* NULL is the empty body */
	kdesktop_body(NULL, &sb);
	assert_string_equal(strbuf_str(&sb), "");
	strbuf_release(&sb);
}

static struct kevent *event_from(int source, const char *object, const char *signal,
				 const char *payload)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_STORAGE, object, signal, payload, source, 1, 2, NULL, 0,
				    &ev, &why),
			 0);
	return ev;
}

static void test_condition_key(void **state)
{
	(void)state;
	static const struct {
		int source;
		const char *object, *payload, *key;
	} rows[] = {
		{KEVENT_SOURCE_CONDITION, "/md0", "Condition: md-degraded\nSeverity: critical\n",
		 "md-degraded\x1f/md0"},
		{KEVENT_SOURCE_CONDITION, "/mnt", "Condition: full\nKey: /mnt/a\n",
		 "full\x1f/mnt/a"},
		/* not a condition's event, though its payload says so */
		{KEVENT_SOURCE_SOCKET, "/md0", "Condition: md-degraded\n", NULL},
		{KEVENT_SOURCE_CONDITION, "/md0", "Severity: critical\n", NULL},
		{KEVENT_SOURCE_CONDITION, "/md0", "Condition: \n", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct kevent *ev =
			event_from(rows[i].source, rows[i].object, "set", rows[i].payload);
		struct strbuf sb = STRBUF_INIT;
		const char *key = kdesktop_condition_key(ev, &sb);
		if (rows[i].key)
			assert_string_equal(key, rows[i].key);
		else
			assert_null(key);
		strbuf_release(&sb);
		kevent_free(ev);
	}
}

static void test_wanted(void **state)
{
	(void)state;
	static const struct {
		const char *notify;
		bool wanted;
	} rows[] = {
		{"desktop", true}, {"[mail, desktop]", true},
		{"[mail]", false}, {"desktop-2", false},
		{NULL, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *text = rows[i].notify
				     ? tu_printf("rules:\n  - name: r\n    match: {signal: x}\n"
						 "    notify: %s\n",
						 rows[i].notify)
				     : tu_printf("rules:\n  - name: r\n    match: {signal: x}\n"
						 "    run: [/bin/true]\n");
		struct kfile *f = tu_parse(text, "/etc/keventd/user-rules.d/50-x.yaml");
		assert_non_null(f);
		assert_int_equal(kdesktop_wanted(&f->rules[0]), rows[i].wanted);
		kfile_unref(f);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_var_passed),    cmocka_unit_test(test_merge),
		cmocka_unit_test(test_urgency_icon),  cmocka_unit_test(test_body),
		cmocka_unit_test(test_condition_key), cmocka_unit_test(test_wanted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

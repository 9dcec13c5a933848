// SPDX-License-Identifier: GPL-2.0-or-later
/* The sources' rows (source-type.h): every source of KEVENT_SOURCE_LIST
 * has one, whole; and each row's keventd.yaml section, through the
 * options that read it, refuses a mistake with a diagnostic that names its
 * key, and then sets nothing: one table of every section's mistakes. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "options.h"
#include "source-type.h"
#include "statedir.h"
#include "testutil.h"

static void test_rows_whole(void **state)
{
	(void)state;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		const struct ksource_type *t = ksource_types[i];
		const char *name = kevent_source_name((enum kevent_source)i);
		if (!t)
			fail_msg("source %s has no row", name);
		assert_int_equal(t->kind, i);
		assert_non_null(t->make);
		if (!t->section_size) {
			assert_null(t->defaults);
			assert_null(t->parse);
			assert_null(t->configure);
			assert_null(ksource_section(NULL, t->kind));
			assert_null(ksource_type_of_section(name));
			continue;
		}
		/* a section: read, compared, and applied at a reload one way */
		assert_non_null(t->defaults);
		assert_non_null(t->parse);
		assert_non_null(t->equal);
		assert_true(t->configure || t->remade);
		assert_true(t->equal(t->defaults, t->defaults));
		assert_ptr_equal(ksource_section(NULL, t->kind), t->defaults);
		assert_ptr_equal(ksource_type_of_section(name), t);
	}
}

/* Each row's section with a mistake, read as keventd reads keventd.yaml
 * (koptions_parse_file): the diagnostic at its place, which names the
 * section and, for a bad value, its key.  key NULL: a mistake of the
 * section's shape, no key's. */
/* clang-format off */
static const struct {
	enum kevent_source kind;
	const char *yaml, *key, *diag;
} bad[] = {
	{KEVENT_SOURCE_FS, "fs:\n  space_low: lots\n", "space_low", "k.yaml:2:14: error: fs: space_low wants a percentage (10%), a size (2G, 512M) or 'off', not 'lots'"},
	{KEVENT_SOURCE_FS, "fs:\n  space_lwo: 5%\n", "space_lwo", "k.yaml:2:3: error: fs: unknown key 'space_lwo': did you mean space_low?"},
	{KEVENT_SOURCE_FS, "fs:\n  space_low: 10\n", "space_low", "k.yaml:2:14: error: fs: space_low: '10' has no unit: did you mean 10%?"},
	{KEVENT_SOURCE_FS, "fs:\n  /var: {space_critical: 500000}\n", "space_critical", "k.yaml:2:26: error: fs: /var: space_critical: '500000' has no unit: write a percentage (10%) or a size with K, M, G, T or P (2G, 512M)"},
	{KEVENT_SOURCE_FS, "fs:\n  space_low: 101%\n", "space_low", "k.yaml:2:14: error: fs: space_low wants a percentage (10%), a size (2G, 512M) or 'off', not '101%'"},
	{KEVENT_SOURCE_FS, "fs:\n  mounts: some\n", "mounts", "k.yaml:2:11: error: fs: mounts is 'block' or 'all'"},
	{KEVENT_SOURCE_FS, "fs:\n  bogus: 1\n", "bogus", "k.yaml:2:3: error: fs: unknown key 'bogus' (mounts, space_low, space_critical, inodes_low, or a mount point)"},
	{KEVENT_SOURCE_FS, "fs:\n  /var: {spacelow: 3%}\n", "spacelow", "k.yaml:2:10: error: fs: /var: unknown key 'spacelow': did you mean space_low?"},
	{KEVENT_SOURCE_FS, "fs:\n  /var: {mounts: all}\n", "mounts", "k.yaml:2:10: error: fs: /var: unknown key 'mounts' (a mount point has space_low, space_critical and inodes_low)"},
	{KEVENT_SOURCE_FS, "fs:\n  /var: {[a]: 3%}\n", NULL, "k.yaml:2:10: error: fs: /var: a mount point has space_low, space_critical and inodes_low"},
	{KEVENT_SOURCE_FS, "fs:\n  space_low: 3%\n  space_critical: 5%\n", "space_critical", "k.yaml:3:3: error: fs: space_critical is not below space_low"},
	{KEVENT_SOURCE_FS, "fs:\n  space_critical: 5%\n  /var: {space_low: 4%}\n", "space_critical", "k.yaml:3:10: error: fs: /var: space_critical is not below space_low"},
	{KEVENT_SOURCE_FS, "fs:\n  /var: {space_low: 4%, space_critical: 4%}\n", "space_critical", "k.yaml:2:25: error: fs: /var: space_critical is not below space_low"},
	{KEVENT_SOURCE_FS, "fs: [1]\n", NULL, "k.yaml:1:5: error: fs: is a mapping (mounts, space_low, space_critical, inodes_low, and mount points), not a list"},
	{KEVENT_SOURCE_KMSG, "kmsg: {priority: loud}\n", "priority", "k.yaml:1:18: error: kmsg: priority is one of emerg, alert, crit, err, warning, notice, info, debug (or 0-7), not 'loud'"},
	{KEVENT_SOURCE_KMSG, "kmsg: {priority: 9}\n", "priority", "k.yaml:1:18: error: kmsg: priority is one of emerg, alert, crit, err, warning, notice, info, debug (or 0-7), not '9'"},
	{KEVENT_SOURCE_KMSG, "kmsg: {priority: [a]}\n", "priority", "k.yaml:1:18: error: kmsg: priority is one of emerg, alert, crit, err, warning, notice, info, debug (or 0-7), not a list"},
	{KEVENT_SOURCE_KMSG, "kmsg: {backlog: maybe}\n", "backlog", "k.yaml:1:17: error: kmsg: backlog wants yes or no, not 'maybe'"},
	{KEVENT_SOURCE_KMSG, "kmsg: {backlog: }\n", "backlog", "k.yaml:1:17: error: kmsg: backlog wants yes or no, not nothing"},
	{KEVENT_SOURCE_KMSG, "kmsg: {colour: red}\n", "colour", "k.yaml:1:8: error: kmsg: unknown key 'colour' (priority, backlog)"},
	{KEVENT_SOURCE_KMSG, "kmsg: {backlog: yes, x: 1}\n", "x", "k.yaml:1:22: error: kmsg: unknown key 'x' (priority, backlog)"},
	{KEVENT_SOURCE_KMSG, "kmsg: [a]\n", NULL, "k.yaml:1:7: error: kmsg: is a mapping (priority, backlog), not a list"},
	{KEVENT_SOURCE_TRACE, "trace: yes\n", NULL, "k.yaml:1:8: error: trace: wants a list of entries ('- event: SYSTEM/EVENT'), not a value"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - event: sched\n", "event", "k.yaml:2:12: error: trace: event \"sched\" is not SYSTEM/EVENT (as tracefs names it: sched/sched_process_exec)"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - event: a/b/c\n", "event", "k.yaml:2:12: error: trace: event \"a/b/c\" is not SYSTEM/EVENT (as tracefs names it: sched/sched_process_exec)"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - filter: x\n", "event", "k.yaml:2:5: error: trace: an entry names its tracepoint: 'event: SYSTEM/EVENT'"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - event: a/b\n    type: loud\n", "type", "k.yaml:3:11: error: trace: unknown event type 'loud'"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - event: a/b\n    when: now\n", "when", "k.yaml:3:5: error: trace: unknown key 'when' (event, filter, type)"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - event: a/b\n  - event: a/b\n", "a/b", "k.yaml:3:12: error: trace: a/b is listed twice (one entry per tracepoint: join the filters with ||)"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - a/b\n", NULL, "k.yaml:2:5: error: trace: an entry is a mapping with 'event' (and 'filter', 'type'), not a value"},
	{KEVENT_SOURCE_TRACE, "trace:\n  - event: a/b\n    filter: ''\n", "filter", "k.yaml:3:13: error: trace: 'filter' wants a value, not an empty string"},
};
/* clang-format on */

/* Parses yaml as "k.yaml"; its diagnostics, a line each, into got; the
 * options read, finished, into o. */
static void parse(const char *yaml, struct koptions *o, struct strbuf *got)
{
	struct kdiags d = {0};
	koptions_init(o);
	assert_int_equal(koptions_parse_file(o, yaml, strlen(yaml), "k.yaml", &d), 0);
	for (size_t j = 0; j < d.n; j++) {
		_cleanup_free_ char *line = tu_diag(&d.v[j]);
		strbuf_printf(got, "%s%s", j ? "\n" : "", line);
	}
	kdiags_free(&d);
	koptions_finish(o);
}

/* The section of t in o is still its defaults, and the sources are those
 * of a file without it. */
static void assert_untouched(const struct ksource_type *t, const struct koptions *o,
			     const char *yaml)
{
	struct koptions def;
	koptions_init(&def);
	koptions_finish(&def);
	if (!t->equal(ksource_section(&o->sections, t->kind), t->defaults))
		fail_msg("%s: the section was set", yaml);
	assert_int_equal(o->cfg.sources, def.cfg.sources);
	koptions_release(&def);
}

/* Every row's section with a mistake: "NAME: 7" for each, then the
 * table's cases, of which each row with a section has one with a key at
 * least; each a diagnostic, and nothing of the section set. */
static void test_bad_section(void **state)
{
	(void)state;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		const struct ksource_type *t = ksource_types[i];
		const char *name = kevent_source_name((enum kevent_source)i);
		bool keyed = false;
		for (size_t j = 0; j < ARRAY_SIZE(bad); j++)
			keyed |= bad[j].kind == t->kind && bad[j].key;
		if (!t->section_size) {
			if (keyed)
				fail_msg("%s has no section, but cases", name);
			continue;
		}
		if (!keyed)
			fail_msg("%s: no case of a bad value in its section", name);
		char yaml[64];
		snprintf(yaml, sizeof(yaml), "%s: 7\n", name);
		struct koptions o;
		_cleanup_strbuf_ struct strbuf got = STRBUF_INIT;
		parse(yaml, &o, &got);
		char want[64];
		snprintf(want, sizeof(want), "k.yaml:1:%zu: error: %s: ", strlen(name) + 3, name);
		if (strncmp(strbuf_str(&got), want, strlen(want)) != 0 ||
		    strchr(strbuf_str(&got), '\n'))
			fail_msg("%s: got %s, wanted one line starting with %s", yaml,
				 strbuf_str(&got), want);
		assert_untouched(t, &o, yaml);
		koptions_release(&o);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		const struct ksource_type *t = ksource_types[bad[i].kind];
		struct koptions o;
		_cleanup_strbuf_ struct strbuf got = STRBUF_INIT;
		parse(bad[i].yaml, &o, &got);
		if (strcmp(strbuf_str(&got), bad[i].diag) != 0)
			fail_msg("case %zu: %s\nwanted: %s\ngot:    %s", i, bad[i].yaml,
				 bad[i].diag, strbuf_str(&got));
		const char *text = strstr(bad[i].diag, "error: ");
		assert_non_null(text);
		if (strncmp(text + 7, kevent_source_name(bad[i].kind),
			    strlen(kevent_source_name(bad[i].kind))) != 0)
			fail_msg("case %zu: the diagnostic does not name its section", i);
		if (bad[i].key && !strstr(text, bad[i].key))
			fail_msg("case %zu: the diagnostic does not name %s", i, bad[i].key);
		assert_untouched(t, &o, bad[i].yaml);
		koptions_release(&o);
	}
}

/* Which rows report their state afresh at a start, for the condition
 * table's start-up check: md and input always; fs and thermal when their
 * state file is gone (or there is no state directory); the others never. */
static void test_reports_at_start(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kstatedir sd = {.path = dir, .fd = tu_dirfd(dir), .lockfd = -1};
	assert_true(sd.fd >= 0);
	/* clang-format off */
	static const struct {
		enum kevent_source kind;
		const char *file; /* its state file, made for the second case */
		bool without, with;
	} cases[] = {
		{KEVENT_SOURCE_MD, NULL, true, true},
		{KEVENT_SOURCE_INPUT, NULL, true, true},
		{KEVENT_SOURCE_FS, "fs.state", true, false},
		{KEVENT_SOURCE_THERMAL, "thermal.zones", true, false},
		{KEVENT_SOURCE_KMSG, NULL, false, false},
		{KEVENT_SOURCE_TRACE, NULL, false, false},
		{KEVENT_SOURCE_SOCKET, NULL, false, false},
		{KEVENT_SOURCE_MQTT, NULL, false, false},
		{KEVENT_SOURCE_CONDITION, NULL, false, false},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ksource_type *t = ksource_types[cases[i].kind];
		const char *name = kevent_source_name(cases[i].kind);
		bool (*f)(const struct kstatedir *) = t->reports_at_start;
		if (!cases[i].without) {
			if (f)
				fail_msg("%s reports at start", name);
			continue;
		}
		if (!f)
			fail_msg("%s does not report at start", name);
		assert_true(f(NULL));
		assert_true(f(&sd));
		if (cases[i].file) {
			int fd = openat(sd.fd, cases[i].file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			assert_true(fd >= 0);
			close(fd);
		}
		if (f(&sd) != cases[i].with)
			fail_msg("%s with its state file: %d", name, !cases[i].with);
		assert_true(f(NULL));
	}
	close(sd.fd);
	tu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_whole),
		cmocka_unit_test(test_bad_section),
		cmocka_unit_test(test_reports_at_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

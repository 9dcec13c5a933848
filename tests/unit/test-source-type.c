// SPDX-License-Identifier: GPL-2.0-or-later
/* The sources' rows (source-type.h): every source of KEVENT_SOURCE_LIST
 * has one, whole; and each row's keventd.yaml section, through the
 * options that read it, refuses a value that is no section and then sets
 * nothing. */
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

/* "NAME: 7" for each section: a diagnostic at the value, and the
 * section read is still its defaults. */
static void test_bad_section(void **state)
{
	(void)state;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		const struct ksource_type *t = ksource_types[i];
		if (!t->section_size)
			continue;
		const char *name = kevent_source_name((enum kevent_source)i);
		char yaml[64];
		snprintf(yaml, sizeof(yaml), "%s: 7\n", name);
		struct koptions o;
		struct kdiags d = {0};
		koptions_init(&o);
		assert_int_equal(koptions_parse_file(&o, yaml, strlen(yaml), "k.yaml", &d), 0);
		if (d.n != 1)
			fail_msg("%s: %zu diagnostics, wanted 1", yaml, d.n);
		_cleanup_free_ char *line = tu_diag(&d.v[0]);
		char want[64];
		snprintf(want, sizeof(want), "k.yaml:1:%zu: error: %s", strlen(name) + 3, name);
		if (strncmp(line, want, strlen(want)) != 0)
			fail_msg("%s: got %s, wanted it to start with %s", yaml, line, want);
		assert_true(t->equal(ksource_section(&o.sections, t->kind), t->defaults));
		kdiags_free(&d);
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

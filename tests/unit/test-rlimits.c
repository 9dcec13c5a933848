// SPDX-License-Identifier: GPL-2.0-or-later
/* Resource limits of rules: names, units, infinity, and bad values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "rlimits.h"
#include "testutil.h"

static void test_good(void **state)
{
	(void)state;
	static const struct {
		const char *name, *value;
		int resource;
		uint64_t want;
	} cases[] = {
		{"nofile", "256", RLIMIT_NOFILE, 256},
		{"nproc", "0", RLIMIT_NPROC, 0},
		{"as", "1G", RLIMIT_AS, 1ull << 30},
		{"fsize", "10M", RLIMIT_FSIZE, 10ull << 20},
		{"stack", "512K", RLIMIT_STACK, 512ull << 10},
		{"core", "0", RLIMIT_CORE, 0},
		{"data", "2T", RLIMIT_DATA, 2ull << 40},
		{"memlock", "4096", RLIMIT_MEMLOCK, 4096},
		{"cpu", "30s", RLIMIT_CPU, 30},
		{"cpu", "1500ms", RLIMIT_CPU, 2}, /* rounded up */
		{"cpu", "2m", RLIMIT_CPU, 120},
		{"as", "infinity", RLIMIT_AS, UINT64_MAX},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct krlimit l;
		const char *why = NULL;
		assert_int_equal(krlimit_parse(cases[i].name, cases[i].value, &l, &why), 0);
		assert_int_equal(l.resource, cases[i].resource);
		assert_true(l.value == cases[i].want);
		assert_string_equal(krlimit_name(l.resource), cases[i].name);
	}
}

static void test_bad(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"files", "10"}, {"nofile", "-1"}, {"nofile", "10K"}, {"as", "1X"},
		{"as", ""},	 {"cpu", "fast"},  {"core", "1.5M"},  {"stack", "-5"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct krlimit l;
		const char *why = NULL;
		assert_int_equal(krlimit_parse(cases[i][0], cases[i][1], &l, &why), -EINVAL);
		assert_non_null(why);
	}
}

static void test_rule_keys(void **state)
{
	(void)state;
	struct kfile *f = tu_parse(
		"rules:\n  - no_new_privs: yes\n    limits: {nofile: 64, cpu: 5s}\n", NULL);
	assert_true(f->rules[0].no_new_privs);
	assert_int_equal(krule_extra(&f->rules[0])->n_limits, 2);
	kfile_unref(f);
	struct kdiags d = tu_parse_fail("rules:\n  - limits: {nofile: 64, nofile: 32}\n", NULL);
	assert_int_equal(d.n, 1);
	kdiags_free(&d);
	d = tu_parse_fail("rules:\n  - limits: {open_files: 64}\n", NULL);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].col, 14); /* at the unknown name */
	kdiags_free(&d);
	d = tu_parse_fail("rules:\n  - limits: [nofile]\n", NULL);
	assert_int_equal(d.n, 1);
	kdiags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_rule_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

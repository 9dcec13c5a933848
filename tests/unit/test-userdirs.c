// SPDX-License-Identifier: GPL-2.0-or-later
/* kuserdirs_compute(): the user instance's places from its environment,
 * one row per combination (keventd(8), USER INSTANCE). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "testutil.h"
#include "userdirs.h"
#include "util.h"

#define ETC KEVENT_USER_RULES_DIR_ETC
#define LIB KEVENT_USER_RULES_DIR_LIB

static void test_compute(void **state)
{
	(void)state;
	static const struct {
		struct kuserenv env;
		/* the rule directories, then config, control, state, lib */
		const char *dirs[KUSERDIRS_MAX_RULE_DIRS + 1];
		const char *config, *control, *state_dir, *lib_dir;
		const char *error; /* a word of *why, or NULL */
	} cases[] = {
		/* HOME alone stands in for XDG_CONFIG_HOME and XDG_STATE_HOME */
		{{.home = "/home/a", .runtime_dir = "/run/user/1000"},
		 {"/home/a/.config/keventd/rules.d", "/run/user/1000/keventd/rules.d", ETC, LIB},
		 "/home/a/.config/keventd/keventd.yaml",
		 "/run/user/1000/keventd/control",
		 "/run/user/1000/keventd",
		 "/home/a/.local/state/keventd",
		 NULL},
		/* the XDG variables win over HOME */
		{{.home = "/home/a",
		  .config_home = "/cfg",
		  .state_home = "/st",
		  .runtime_dir = "/r"},
		 {"/cfg/keventd/rules.d", "/r/keventd/rules.d", ETC, LIB},
		 "/cfg/keventd/keventd.yaml",
		 "/r/keventd/control",
		 "/r/keventd",
		 "/st/keventd",
		 NULL},
		/* empty or relative XDG variables are as if unset */
		{{.home = "/h", .config_home = "", .state_home = "rel/st", .runtime_dir = "/r"},
		 {"/h/.config/keventd/rules.d", "/r/keventd/rules.d", ETC, LIB},
		 "/h/.config/keventd/keventd.yaml",
		 "/r/keventd/control",
		 "/r/keventd",
		 "/h/.local/state/keventd",
		 NULL},
		/* no HOME: the passwd entry's home */
		{{.pw_home = "/var/pw", .runtime_dir = "/r"},
		 {"/var/pw/.config/keventd/rules.d", "/r/keventd/rules.d", ETC, LIB},
		 "/var/pw/.config/keventd/keventd.yaml",
		 "/r/keventd/control",
		 "/r/keventd",
		 "/var/pw/.local/state/keventd",
		 NULL},
		/* a relative HOME is no HOME either */
		{{.home = "h", .pw_home = "/pw", .runtime_dir = "/r"},
		 {"/pw/.config/keventd/rules.d", "/r/keventd/rules.d", ETC, LIB},
		 "/pw/.config/keventd/keventd.yaml",
		 "/r/keventd/control",
		 "/r/keventd",
		 "/pw/.local/state/keventd",
		 NULL},
		/* no home at all, but both XDG variables: fine */
		{{.config_home = "/c", .state_home = "/s", .runtime_dir = "/r"},
		 {"/c/keventd/rules.d", "/r/keventd/rules.d", ETC, LIB},
		 "/c/keventd/keventd.yaml",
		 "/r/keventd/control",
		 "/r/keventd",
		 "/s/keventd",
		 NULL},
		/* the tests' system-wide directories in the place of the two */
		{{.home = "/h", .runtime_dir = "/r", .system_rules = "/t/etc:/t/lib:/t/more"},
		 {"/h/.config/keventd/rules.d", "/r/keventd/rules.d", "/t/etc", "/t/lib",
		  "/t/more"},
		 "/h/.config/keventd/keventd.yaml",
		 "/r/keventd/control",
		 "/r/keventd",
		 "/h/.local/state/keventd",
		 NULL},
		{{.home = "/h", .runtime_dir = "/r", .system_rules = ""},
		 {"/h/.config/keventd/rules.d", "/r/keventd/rules.d", ETC, LIB},
		 "/h/.config/keventd/keventd.yaml",
		 "/r/keventd/control",
		 "/r/keventd",
		 "/h/.local/state/keventd",
		 NULL},
		/* the mistakes */
		{{.home = "/h"}, {NULL}, NULL, NULL, NULL, NULL, "XDG_RUNTIME_DIR is not set"},
		{{.home = "/h", .runtime_dir = ""},
		 {NULL},
		 NULL,
		 NULL,
		 NULL,
		 NULL,
		 "XDG_RUNTIME_DIR is not set"},
		{{.home = "/h", .runtime_dir = "run/user"},
		 {NULL},
		 NULL,
		 NULL,
		 NULL,
		 NULL,
		 "XDG_RUNTIME_DIR is not an absolute path"},
		{{.config_home = "/c", .runtime_dir = "/r"},
		 {NULL},
		 NULL,
		 NULL,
		 NULL,
		 NULL,
		 "no home directory"},
		{{.home = "/h", .runtime_dir = "/r", .system_rules = "/a:rel"},
		 {NULL},
		 NULL,
		 NULL,
		 NULL,
		 NULL,
		 "KEVENTD_USER_SYSTEM_RULES"},
		{{.home = "/h", .runtime_dir = "/r", .system_rules = "/a::/b"},
		 {NULL},
		 NULL,
		 NULL,
		 NULL,
		 NULL,
		 "KEVENTD_USER_SYSTEM_RULES"},
		{{.home = "/h", .runtime_dir = "/r", .system_rules = "/a:/b:/c:/d:/e"},
		 {NULL},
		 NULL,
		 NULL,
		 NULL,
		 NULL,
		 "KEVENTD_USER_SYSTEM_RULES"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kuserdirs u = {.n_rule_dirs = 99}; /* untouched on an error */
		const char *why = NULL;
		int rc = kuserdirs_compute(&cases[i].env, &u, &why);
		if (cases[i].error) {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(why);
			if (!strstr(why, cases[i].error))
				fail_msg("case %zu: '%s' does not say '%s'", i, why,
					 cases[i].error);
			assert_int_equal(u.n_rule_dirs, 99);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu: %d (%s)", i, rc, why ? why : "");
		size_t n = 0;
		while (cases[i].dirs[n])
			n++;
		assert_int_equal(u.n_rule_dirs, n);
		for (size_t j = 0; j < n; j++)
			assert_string_equal(u.rule_dirs[j], cases[i].dirs[j]);
		assert_string_equal(u.config, cases[i].config);
		assert_string_equal(u.control, cases[i].control);
		assert_string_equal(u.state_dir, cases[i].state_dir);
		assert_string_equal(u.lib_dir, cases[i].lib_dir);
		kuserdirs_release(&u);
	}
}

/* $XDG_STATE_HOME and what is above it are made, 0700; lib_dir is not */
static void test_make_lib_parents(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	char *state_home = tu_printf("%s/home/.local/state", dir);
	struct kuserenv env = {
		.home = "/nonexistent", .state_home = state_home, .runtime_dir = "/r"};
	struct kuserdirs u;
	const char *why;
	assert_int_equal(kuserdirs_compute(&env, &u, &why), 0);
	mode_t mask = umask(0);
	assert_int_equal(kuserdirs_make_lib_parents(&u), 0);
	assert_int_equal(kuserdirs_make_lib_parents(&u), 0); /* there: nothing to do */
	umask(mask);
	struct stat st;
	assert_int_equal(stat(state_home, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(u.lib_dir, &st), -1);
	assert_int_equal(errno, ENOENT);
	kuserdirs_release(&u);
	tu_rm_rf(dir);
	free(state_home);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compute),
		cmocka_unit_test(test_make_lib_parents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* replace_file(): keventd's state files (positions, tables, the MQTT
 * table) are replaced whole or not at all, never through a link planted
 * at the temporary name, and leave no temporary file behind. */
#include <errno.h>
#include <fcntl.h>
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

#include "suggest.h"
#include "testutil.h"
#include "util.h"

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = read_fd(fd, 1 << 20, &text, &len);
	close(fd);
	return rc < 0 ? NULL : text;
}

static void test_replace(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	_cleanup_free_ char *path = tu_printf("%s/state", dir);
	_cleanup_free_ char *tmp = tu_printf("%s/state.new", dir);
	static const struct {
		const char *data;
		mode_t mode;
	} steps[] = {
		{"first\n", 0600},	    /* made */
		{"second, longer\n", 0644}, /* replaced, with the mode given */
		{"", 0600},		    /* emptied */
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		assert_int_equal(
			replace_file(path, steps[i].data, strlen(steps[i].data), steps[i].mode), 0);
		_cleanup_free_ char *got = slurp(path);
		assert_non_null(got);
		assert_string_equal(got, steps[i].data);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, steps[i].mode);
		assert_int_equal(access(tmp, F_OK), -1); /* no temporary left */
	}
	unlink(path);
	rmdir(dir);
}

static void test_failures(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	_cleanup_free_ char *missing = tu_printf("%s/no/state", dir);
	assert_int_equal(replace_file(missing, "x", 1, 0600), -ENOENT);

	/* a link planted at the temporary name is not followed, and the
	 * file it points at is left as it was */
	_cleanup_free_ char *path = tu_printf("%s/state", dir);
	_cleanup_free_ char *tmp = tu_printf("%s/state.new", dir);
	_cleanup_free_ char *victim = tu_printf("%s/victim", dir);
	assert_int_equal(replace_file(victim, "keep\n", 5, 0600), 0);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(replace_file(path, "x", 1, 0600), -ELOOP);
	_cleanup_free_ char *v = slurp(victim);
	assert_string_equal(v, "keep\n");
	assert_int_equal(access(path, F_OK), -1);
	unlink(tmp);
	unlink(victim);
	rmdir(dir);
}

/* "did you mean": slips of the keyboard are named, other words are not */
static void test_suggest(void **state)
{
	(void)state;
	static const char *const keys[] = {"name", "match", "run", "timeout", NULL, "user", "key"};
	static const struct {
		const char *word, *want;
	} cases[] = {
		{"timout", "timeout"}, /* a letter left out */
		{"nmae", "name"},      /* two swapped */
		{"timeouts", "timeout"},
		{"macth", "match"},
		{"tiemout", "timeout"},
		{"rnu", "run"},
		{"ky", NULL},	      /* one edit, but half the word */
		{"bogus", NULL},      /* nothing near */
		{"tmout", "timeout"}, /* two edits */
		{"tmot", NULL},	      /* three */
		{"", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = suggest_word(cases[i].word, keys, ARRAY_SIZE(keys));
		if (!cases[i].want)
			assert_null(got);
		else
			assert_string_equal(got ? got : "(none)", cases[i].want);
	}
}

int main(void)
{
	umask(022); /* the modes asked for are the modes made */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_suggest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

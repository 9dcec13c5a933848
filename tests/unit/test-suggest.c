// SPDX-License-Identifier: GPL-2.0-or-later
/* suggest_word(): the key a misspelt one most likely meant, for the
 * "did you mean" of keventctl verify and keventd's errors. */
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
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suggest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The socket source's numbers across restarts (seqfile.h): a stop goes on
 * from the last number given, a death from past the block it had
 * reserved; a number read back from the journal is never given again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "seqfile.h"
#include "statedir.h"
#include "testutil.h"

static void test_restarts(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kstatedir *sd = tu_statedir(dir);
	struct kseqfile s;
	assert_int_equal(kseqfile_open(&s, sd), 0);
	assert_int_equal(kseqfile_next(&s), 1); /* a new directory */
	assert_int_equal(kseqfile_next(&s), 2);
	kseqfile_close(&s); /* a stop */
	assert_int_equal(kseqfile_open(&s, sd), 0);
	assert_int_equal(kseqfile_next(&s), 3);
	close(s.fd); /* a death: nothing written since the block was taken */
	assert_int_equal(kseqfile_open(&s, sd), 0);
	uint64_t n = kseqfile_next(&s);
	assert_true(n > 3 && n <= 3 + KSEQFILE_STRIDE);
	for (uint64_t i = 1; i < 2 * KSEQFILE_STRIDE; i++) /* across a block's end */
		assert_int_equal(kseqfile_next(&s), n + i);
	uint64_t last = n + 2 * KSEQFILE_STRIDE - 1;
	close(s.fd);
	assert_int_equal(kseqfile_open(&s, sd), 0);
	assert_true(kseqfile_next(&s) > last);
	/* the journal held a higher one */
	kseqfile_seen(&s, last + 10 * KSEQFILE_STRIDE);
	assert_int_equal(kseqfile_next(&s), last + 10 * KSEQFILE_STRIDE + 1);
	kseqfile_close(&s);
	kstatedir_free(sd);
	tu_rm_rf(dir);
}

/* Without a state directory, or with a file that holds no number,
 * numbering starts at 1. */
static void test_none(void **state)
{
	(void)state;
	struct kseqfile s;
	assert_int_equal(kseqfile_open(&s, NULL), 0);
	assert_int_equal(kseqfile_next(&s), 1);
	assert_int_equal(kseqfile_next(&s), 2);
	kseqfile_close(&s);
	_cleanup_free_ char *dir = tu_mkdtemp();
	tu_write(dir, KSEQFILE_NAME, "junk\n", 0600);
	struct kstatedir *sd = tu_statedir(dir);
	assert_int_equal(kseqfile_open(&s, sd), 0);
	assert_int_equal(kseqfile_next(&s), 1);
	kseqfile_close(&s);
	kstatedir_free(sd);
	tu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restarts),
		cmocka_unit_test(test_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

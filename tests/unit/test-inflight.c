// SPDX-License-Identifier: GPL-2.0-or-later
/* The numbers in flight (inflight.h): what a sequence of additions and
 * removals leaves, checked against a plain bitmap, in the orders that a
 * source hands numbers on and its handlers finish. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inflight.h"

#define MAX_OPS 16
#define MAX_NUM 4096

/* +N adds N, -N removes N; what is left, and what each removal says. */
static void test_table(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *what;
		int64_t ops[MAX_OPS];	    /* 0 ends */
		uint64_t left[MAX_OPS];	    /* 0 ends */
	} cases[] = {
		{"nothing", {0}, {0}},
		{"in order, handled in order", {1, 2, 3, -1, -2, 0}, {3, 0}},
		{"handled out of order", {1, 2, 3, 4, -3, -1, 0}, {2, 4, 0}},
		{"the head handled last", {5, 6, 7, -6, -7, -5, 0}, {0}},
		{"added twice: once", {5, 5, 6, 0}, {5, 6, 0}},
		{"removed twice: the second is no-op", {5, 6, -5, -5, 0}, {6, 0}},
		{"not there", {5, -4, -6, 0}, {5, 0}},
		{"below the head, in the room before it", {5, 6, 7, -5, 2, 0}, {2, 6, 7, 0}},
		{"below the head, no room", {5, 6, 2, 0}, {2, 5, 6, 0}},
		{"into the middle", {2, 9, 5, 0}, {2, 5, 9, 0}},
		{"a hole filled again", {2, 3, 4, -3, 3, 0}, {2, 3, 4, 0}},
		{"gaps between the numbers", {10, 1000, 1000000, -1000, 0}, {10, 1000000, 0}},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kinflight f = {0};
		for (size_t k = 0; k < MAX_OPS && cases[i].ops[k]; k++) {
			int64_t op = cases[i].ops[k];
			if (op > 0)
				assert_int_equal(kinflight_add(&f, (uint64_t)op), 0);
			else
				(void)kinflight_remove(&f, (uint64_t)-op);
		}
		size_t n = 0;
		while (n < MAX_OPS && cases[i].left[n])
			n++;
		uint64_t got[MAX_OPS + 1];
		if (kinflight_count(&f) != n)
			fail_msg("%s: %zu left, not %zu", cases[i].what, kinflight_count(&f), n);
		assert_int_equal(kinflight_list(&f, got), n);
		for (size_t k = 0; k < n; k++) {
			if (got[k] != cases[i].left[k])
				fail_msg("%s: [%zu] is %" PRIu64 ", not %" PRIu64, cases[i].what, k,
					 got[k], cases[i].left[k]);
			assert_true(kinflight_has(&f, got[k]));
		}
		kinflight_release(&f);
	}
}

static void test_range(void **state)
{
	(void)state;
	struct kinflight f = {0};
	assert_int_equal(kinflight_add(&f, 0), -ERANGE);
	assert_int_equal(kinflight_add(&f, KINFLIGHT_DONE), -ERANGE);
	assert_int_equal(kinflight_add(&f, UINT64_MAX), -ERANGE);
	assert_int_equal(kinflight_add(&f, KINFLIGHT_DONE - 1), 0);
	assert_false(kinflight_remove(&f, UINT64_MAX)); /* a hole's bits, never a number */
	assert_true(kinflight_remove(&f, KINFLIGHT_DONE - 1));
	assert_false(kinflight_has(&f, KINFLIGHT_DONE - 1));
	uint64_t c = f.changes;
	kinflight_clear(&f);
	assert_true(f.changes == c); /* empty already: no change */
	assert_int_equal(kinflight_add(&f, 3), 0);
	kinflight_clear(&f);
	assert_true(f.changes == c + 2);
	assert_int_equal(kinflight_count(&f), 0);
	kinflight_release(&f);
}

/* A source's life: numbers handed on in order, handled in an order of
 * their own, a few at a time, now and then one redone from below; the
 * set always says what a bitmap says, and its memory stays bounded by
 * how many are in flight, not by how far apart they are. */
static void test_against_bitmap(void **state)
{
	(void)state;
	static const struct {
		unsigned seed;
		size_t window;	/* at most so many in flight, besides the stuck ones */
		unsigned stuck; /* a number divisible by it is never handled (0: none) */
	} cases[] = {{1, 8, 0}, {2, 64, 0}, {3, 500, 0}, {4, 64, 7}, {5, 3, 50}};
	static bool in[40000];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(in, 0, sizeof(in));
		struct kinflight f = {0};
		srandom(cases[i].seed);
		size_t live = 0, stuck = 0, max_live = 0, max_cap = 0;
		uint64_t next = 1;
		for (int step = 0; step < 30000 && next < sizeof(in) - 1; step++) {
			size_t moving = live - stuck;
			if (moving < cases[i].window / 2 + 1 ||
			    (moving < cases[i].window && random() % 2)) {
				assert_int_equal(kinflight_add(&f, next), 0);
				in[next] = true;
				live++;
				stuck += cases[i].stuck && next % cases[i].stuck == 0;
				next++;
			} else {
				/* one of the recent numbers, at random */
				uint64_t span = cases[i].window * 4;
				uint64_t lo = next > span ? next - span : 1;
				uint64_t s = lo + (uint64_t)random() % (next - lo);
				if (cases[i].stuck && s % cases[i].stuck == 0) {
					assert_int_equal(kinflight_has(&f, s), in[s]);
				} else {
					assert_int_equal(kinflight_remove(&f, s), in[s]);
					live -= in[s];
					in[s] = false;
				}
			}
			if (step % 997 == 0 && next > 10 && !in[next - 10] &&
			    !(cases[i].stuck && (next - 10) % cases[i].stuck == 0)) {
				/* redone from below: a number handed on again */
				assert_int_equal(kinflight_add(&f, next - 10), 0);
				in[next - 10] = true;
				live++;
			}
			assert_int_equal(kinflight_count(&f), live);
			max_live = live > max_live ? live : max_live;
			max_cap = f.cap > max_cap ? f.cap : max_cap;
		}
		uint64_t *got = malloc((live + 1) * sizeof(*got));
		assert_non_null(got);
		assert_int_equal(kinflight_list(&f, got), live);
		size_t k = 0;
		for (uint64_t s = 1; s < next; s++)
			if (in[s]) {
				assert_true(got[k] == s);
				k++;
			}
		assert_int_equal(k, live);
		free(got);
		/* bounded by what was in flight at the most, not by the numbers */
		if (max_cap > 4 * max_live + 64)
			fail_msg("seed %u: %zu entries for at most %zu in flight", cases[i].seed,
				 max_cap, max_live);
		kinflight_release(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_against_bitmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

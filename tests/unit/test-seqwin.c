// SPDX-License-Identifier: GPL-2.0-or-later
/* Following kevent.ko's numbered stream with fetches of what was missed
 * (seqwin.h, kseqsync): every number handed on once, in order, whatever
 * mix of live events, fetched ones, repeats, restarts, losses and numbers
 * handed back to redo. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "seqsync.h"
#include "seqwin.h"

#define I1 0x1111
#define I2 0x2222

/* What was handed on, in order. */
struct out {
	uint64_t seq[64];
	size_t n;
};

static void live(struct kseqsync *s, struct out *o, uint64_t inst, uint64_t seq,
		 enum kseqsync_verdict want)
{
	enum kseqsync_verdict v = kseqsync_live(s, inst, seq);
	assert_int_equal(v, want);
	if (v == KSEQSYNC_HANDLE)
		o->seq[o->n++] = seq;
}

static void fetched(struct kseqsync *s, struct out *o, uint64_t inst, uint64_t seq,
		    enum kseqsync_verdict want)
{
	enum kseqsync_verdict v = kseqsync_fetched(s, inst, seq);
	assert_int_equal(v, want);
	if (v == KSEQSYNC_HANDLE)
		o->seq[o->n++] = seq;
}

static void expect(const struct out *o, const uint64_t *want, size_t n)
{
	assert_int_equal(o->n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(o->seq[i], want[i]);
}

/* No position: the first fetch only asks for the current number. */
static void test_fresh_start(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, 0, 0);
	assert_true(kseqsync_fetch(&s) == UINT64_MAX);
	live(&s, &o, I1, 41, KSEQSYNC_DROP); /* during the query */
	assert_false(kseqsync_end(&s, I1, 41, 0, &lost));
	assert_int_equal(lost, 0);
	assert_int_equal(kseqsync_last(&s), 41);
	live(&s, &o, I1, 42, KSEQSYNC_HANDLE);
	live(&s, &o, I1, 43, KSEQSYNC_HANDLE);
	live(&s, &o, I1, 43, KSEQSYNC_DROP); /* a repeat */
	live(&s, &o, I1, 40, KSEQSYNC_DROP);
	expect(&o, (uint64_t[]){42, 43}, 2);
}

/* A live event that the query did not cover was dropped: fetch again. */
static void test_fresh_start_again(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, 0, 0);
	(void)kseqsync_fetch(&s);
	live(&s, &o, I1, 42, KSEQSYNC_DROP);
	assert_true(kseqsync_end(&s, I1, 41, 0, &lost));
	assert_int_equal(kseqsync_fetch(&s), 41);
	fetched(&s, &o, I1, 42, KSEQSYNC_HANDLE);
	assert_false(kseqsync_end(&s, I1, 42, 0, &lost));
	live(&s, &o, I1, 43, KSEQSYNC_HANDLE);
	expect(&o, (uint64_t[]){42, 43}, 2);
}

/* From a saved position: what was sent meanwhile is fetched, the live
 * events during the fetch are dropped and come with it. */
static void test_restart_from_position(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, I1, 10);
	assert_int_equal(kseqsync_fetch(&s), 10);
	fetched(&s, &o, I1, 11, KSEQSYNC_HANDLE);
	live(&s, &o, I1, 14, KSEQSYNC_DROP);
	fetched(&s, &o, I1, 12, KSEQSYNC_HANDLE);
	fetched(&s, &o, I1, 13, KSEQSYNC_HANDLE);
	fetched(&s, &o, I1, 14, KSEQSYNC_HANDLE);
	assert_false(kseqsync_end(&s, I1, 14, 0, &lost));
	assert_int_equal(lost, 0);
	live(&s, &o, I1, 14, KSEQSYNC_DROP); /* came with the fetch already */
	live(&s, &o, I1, 15, KSEQSYNC_HANDLE);
	expect(&o, (uint64_t[]){11, 12, 13, 14, 15}, 5);
	assert_int_equal(kseqsync_last(&s), 15);
}

/* The ring no longer had some: the module's count is the loss, exactly. */
static void test_gone_from_ring(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, I1, 10);
	(void)kseqsync_fetch(&s);
	fetched(&s, &o, I1, 18, KSEQSYNC_HANDLE);
	fetched(&s, &o, I1, 19, KSEQSYNC_HANDLE);
	assert_false(kseqsync_end(&s, I1, 20, 8, &lost));
	assert_int_equal(lost, 8);
	assert_int_equal(kseqsync_last(&s), 20);
	live(&s, &o, I1, 21, KSEQSYNC_HANDLE);
	expect(&o, (uint64_t[]){18, 19, 21}, 3);
}

/* A gap, including two numbers in the other order: fetched, in order. */
static void test_gap(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, I1, 4);
	(void)kseqsync_fetch(&s);
	assert_false(kseqsync_end(&s, I1, 4, 0, &lost));
	live(&s, &o, I1, 5, KSEQSYNC_HANDLE);
	live(&s, &o, I1, 7, KSEQSYNC_FETCH);
	assert_int_equal(kseqsync_fetch(&s), 5);
	live(&s, &o, I1, 6, KSEQSYNC_DROP);
	fetched(&s, &o, I1, 6, KSEQSYNC_HANDLE);
	fetched(&s, &o, I1, 7, KSEQSYNC_HANDLE);
	live(&s, &o, I1, 8, KSEQSYNC_DROP); /* after the fetch's last one */
	assert_true(kseqsync_end(&s, I1, 7, 0, &lost));
	assert_int_equal(kseqsync_fetch(&s), 7);
	fetched(&s, &o, I1, 8, KSEQSYNC_HANDLE);
	assert_false(kseqsync_end(&s, I1, 8, 0, &lost));
	expect(&o, (uint64_t[]){5, 6, 7, 8}, 4);
}

/* An overrun during a fetch makes another follow it; outside, one now. */
static void test_overrun(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, I1, 4);
	assert_true(kseqsync_overrun(&s));
	(void)kseqsync_fetch(&s);
	assert_false(kseqsync_overrun(&s));
	fetched(&s, &o, I1, 5, KSEQSYNC_HANDLE);
	assert_true(kseqsync_end(&s, I1, 5, 0, &lost));
	(void)kseqsync_fetch(&s);
	assert_false(kseqsync_end(&s, I1, 5, 0, &lost));
	expect(&o, (uint64_t[]){5}, 1);
}

/* The module was reloaded while keventd was away: nothing of the old one
 * counts as lost, the new one's events all come, from 1. */
static void test_reloaded_while_away(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, I1, 2);
	assert_int_equal(kseqsync_fetch(&s), 2);
	fetched(&s, &o, I2, 3, KSEQSYNC_DROP); /* asked with I1's number */
	fetched(&s, &o, I2, 4, KSEQSYNC_DROP);
	assert_true(kseqsync_end(&s, I2, 4, 2, &lost));
	assert_int_equal(lost, 0);
	assert_int_equal(kseqsync_fetch(&s), 0);
	for (uint64_t i = 1; i <= 4; i++)
		fetched(&s, &o, I2, i, KSEQSYNC_HANDLE);
	assert_false(kseqsync_end(&s, I2, 4, 0, &lost));
	assert_int_equal(lost, 0);
	expect(&o, (uint64_t[]){1, 2, 3, 4}, 4);
	assert_int_equal(s.instance, I2);
}

/* Fewer events since the reload than the old position: the final message
 * alone tells the instance. */
static void test_reloaded_fewer(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, I1, 100);
	(void)kseqsync_fetch(&s);
	assert_true(kseqsync_end(&s, I2, 3, 0, &lost));
	assert_int_equal(kseqsync_fetch(&s), 0);
	fetched(&s, &o, I2, 1, KSEQSYNC_HANDLE);
	fetched(&s, &o, I2, 2, KSEQSYNC_HANDLE);
	fetched(&s, &o, I2, 3, KSEQSYNC_HANDLE);
	assert_false(kseqsync_end(&s, I2, 3, 0, &lost));
	expect(&o, (uint64_t[]){1, 2, 3}, 3);
}

/* Reloaded while running: the first live event of the new instance is
 * dropped and fetched with what came before it. */
static void test_reloaded_live(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	kseqsync_init(&s, I1, 7);
	(void)kseqsync_fetch(&s);
	assert_false(kseqsync_end(&s, I1, 7, 0, &lost));
	live(&s, &o, I2, 2, KSEQSYNC_FETCH);
	assert_int_equal(kseqsync_fetch(&s), 0);
	fetched(&s, &o, I2, 1, KSEQSYNC_HANDLE);
	fetched(&s, &o, I2, 2, KSEQSYNC_HANDLE);
	live(&s, &o, I1, 8, KSEQSYNC_DROP); /* a late one of the old instance */
	assert_true(kseqsync_end(&s, I2, 2, 0, &lost));
	(void)kseqsync_fetch(&s);
	assert_false(kseqsync_end(&s, I2, 2, 0, &lost));
	live(&s, &o, I2, 3, KSEQSYNC_HANDLE);
	expect(&o, (uint64_t[]){1, 2, 3}, 3);
}

/* A fetch that failed: live events are taken again. */
static void test_abort(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	kseqsync_init(&s, I1, 7);
	(void)kseqsync_fetch(&s);
	kseqsync_abort(&s);
	live(&s, &o, I1, 8, KSEQSYNC_HANDLE);
	fetched(&s, &o, I1, 9, KSEQSYNC_DROP); /* no fetch under way */
	expect(&o, (uint64_t[]){8}, 1);
}

/* A position with numbers to redo, then one fetch: of the numbers up to
 * the last handled only those to redo are handed on, each once, then
 * everything after it; those the answer does not bring are lost. */
static void test_redo(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *what;
		uint64_t last;
		uint64_t redo[8];    /* as handed back, any order; 0 ends the list */
		uint64_t after;	     /* the fetch asks for the events after it */
		uint64_t answer[16]; /* the fetch's events; 0 ends the list */
		uint64_t current, gone;
		uint64_t handled[16]; /* handed on, in order; 0 ends the list */
		uint64_t lost;
	} cases[] = {
		{"nothing to redo: after the last", 10, {0}, 10, {11, 12}, 12, 0, {11, 12}, 0},
		{"only the ones to redo, then the new", 10, {4, 7}, 3, {4, 5, 6, 7, 8, 9, 10, 11, 12}, 12, 0, {4, 7, 11, 12}, 0},
		{"handed back in any order, twice", 10, {7, 4, 7}, 3, {4, 5, 6, 7, 8, 9, 10}, 10, 0, {4, 7}, 0},
		{"the last one itself", 10, {10}, 9, {10}, 10, 0, {10}, 0},
		{"the oldest to redo no longer in the ring", 10, {2, 5, 8}, 1, {4, 5, 6, 7, 8, 9, 10}, 10, 2, {5, 8}, 1},
		{"the ring lost them and some after the last", 10, {5}, 4, {13, 14}, 14, 8, {13, 14}, 3},
		{"one the answer skipped is lost too", 10, {5, 6}, 4, {5, 7, 8, 9, 10}, 10, 0, {5}, 1},
		{"a repeat in the answer is handed on once", 10, {5}, 4, {5, 5, 6, 11, 11}, 11, 0, {5, 11}, 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kseqsync s;
		struct out o = {0};
		uint64_t lost = 99;
		kseqsync_init(&s, I1, cases[i].last);
		for (size_t k = 0; cases[i].redo[k]; k++)
			assert_int_equal(kseqsync_unhandled(&s, cases[i].redo[k]), 0);
		assert_int_equal(kseqsync_last(&s), cases[i].last);
		if (kseqsync_fetch(&s) != cases[i].after)
			fail_msg("%s: the fetch asks after %" PRIu64, cases[i].what, s.after);
		for (size_t k = 0; cases[i].answer[k]; k++)
			if (kseqsync_fetched(&s, I1, cases[i].answer[k]) == KSEQSYNC_HANDLE)
				o.seq[o.n++] = cases[i].answer[k];
		assert_false(kseqsync_end(&s, I1, cases[i].current, cases[i].gone, &lost));
		size_t n = 0;
		while (cases[i].handled[n])
			n++;
		if (o.n != n || lost != cases[i].lost)
			fail_msg("%s: %zu handed on, %" PRIu64 " lost; not %zu and %" PRIu64,
				 cases[i].what, o.n, lost, n, cases[i].lost);
		expect(&o, cases[i].handled, n);
		assert_int_equal(kseqsync_last(&s), cases[i].current);
		size_t left = 99;
		(void)kseqsync_redo(&s, &left);
		assert_int_equal(left, 0);
		/* the stream goes on as before */
		assert_int_equal(kseqsync_live(&s, I1, cases[i].current + 1), KSEQSYNC_HANDLE);
		kseqsync_release(&s);
	}
}

/* What may be handed back, and when; the list as the position shows it. */
static void test_redo_list(void **state)
{
	(void)state;
	struct kseqsync s;
	size_t n;
	const uint64_t *v;
	uint64_t changes;
	kseqsync_init(&s, 0, 0);
	assert_int_equal(kseqsync_unhandled(&s, 1), -EINVAL); /* no position: nothing handled */
	kseqsync_init(&s, I1, 10);
	assert_int_equal(kseqsync_unhandled(&s, 0), -EINVAL);
	assert_int_equal(kseqsync_unhandled(&s, 11), -EINVAL); /* not handed on yet */
	changes = s.redo_changes;
	for (int seq = 10; seq >= 1; seq -= 3)
		assert_int_equal(kseqsync_unhandled(&s, (uint64_t)seq), 0);
	assert_int_equal(kseqsync_unhandled(&s, 7), 0);
	assert_true(s.redo_changes != changes);
	v = kseqsync_redo(&s, &n);
	assert_int_equal(n, 4);
	assert_int_equal(v[0], 1);
	assert_int_equal(v[1], 4);
	assert_int_equal(v[2], 7);
	assert_int_equal(v[3], 10);
	/* many: the list grows */
	for (uint64_t seq = 1; seq <= 10; seq++)
		assert_int_equal(kseqsync_unhandled(&s, seq), 0);
	(void)kseqsync_redo(&s, &n);
	assert_int_equal(n, 10);
	/* not during a fetch */
	assert_int_equal(kseqsync_fetch(&s), 0);
	assert_int_equal(kseqsync_unhandled(&s, 5), -EBUSY);
	/* a fetch given up on keeps those it did not hand on */
	assert_int_equal(kseqsync_fetched(&s, I1, 1), KSEQSYNC_HANDLE);
	assert_int_equal(kseqsync_fetched(&s, I1, 2), KSEQSYNC_HANDLE);
	kseqsync_abort(&s);
	v = kseqsync_redo(&s, &n);
	assert_int_equal(n, 8);
	assert_int_equal(v[0], 3);
	assert_int_equal(kseqsync_fetch(&s), 2);
	kseqsync_abort(&s);
	/* handed back again after the abort: redone once more */
	assert_int_equal(kseqsync_unhandled(&s, 2), 0);
	assert_int_equal(kseqsync_fetch(&s), 1);
	kseqsync_release(&s);
	assert_null(s.redo);
}

/* The module was reloaded meanwhile: the numbers to redo were the old
 * instance's, gone with it (forsaken, to count lost); the new one's
 * events all come, from 1, each once. */
static void test_redo_reloaded(void **state)
{
	(void)state;
	struct kseqsync s;
	struct out o = {0};
	uint64_t lost;
	size_t n;
	kseqsync_init(&s, I1, 10);
	assert_int_equal(kseqsync_unhandled(&s, 3), 0);
	assert_int_equal(kseqsync_fetch(&s), 2);
	fetched(&s, &o, I2, 3, KSEQSYNC_DROP);
	assert_true(kseqsync_end(&s, I2, 3, 2, &lost));
	assert_int_equal(lost, 0);
	assert_int_equal(kseqsync_forsaken(&s), 1); /* 3, gone with I1 */
	assert_int_equal(kseqsync_forsaken(&s), 0);
	(void)kseqsync_redo(&s, &n);
	assert_int_equal(n, 0);
	assert_int_equal(kseqsync_fetch(&s), 0);
	for (uint64_t i = 1; i <= 3; i++)
		fetched(&s, &o, I2, i, KSEQSYNC_HANDLE);
	assert_false(kseqsync_end(&s, I2, 3, 0, &lost));
	expect(&o, (uint64_t[]){1, 2, 3}, 3);
	assert_int_equal(kseqsync_forsaken(&s), 0);
	kseqsync_release(&s);

	/* noticed by a live event, with the list handed back twice over */
	kseqsync_init(&s, I1, 10);
	assert_int_equal(kseqsync_unhandled(&s, 5), 0);
	assert_int_equal(kseqsync_unhandled(&s, 3), 0);
	assert_int_equal(kseqsync_unhandled(&s, 5), 0);
	assert_int_equal(kseqsync_live(&s, I2, 1), KSEQSYNC_FETCH);
	assert_int_equal(kseqsync_forsaken(&s), 2);
	assert_int_equal(kseqsync_fetch(&s), 0);
	kseqsync_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_start),
		cmocka_unit_test(test_fresh_start_again),
		cmocka_unit_test(test_restart_from_position),
		cmocka_unit_test(test_gone_from_ring),
		cmocka_unit_test(test_gap),
		cmocka_unit_test(test_overrun),
		cmocka_unit_test(test_reloaded_while_away),
		cmocka_unit_test(test_reloaded_fewer),
		cmocka_unit_test(test_reloaded_live),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_redo),
		cmocka_unit_test(test_redo_list),
		cmocka_unit_test(test_redo_reloaded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The scheduler: per-object order, parallelism across objects, the cap on
 * running jobs, the bound on pending jobs, and synchronous completion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler.h"

struct trace {
	struct kjob *running[64];
	size_t n_running;
	uint64_t started[256]; /* seqnums in start order */
	size_t n_started;
	bool finish_at_once; /* complete jobs inside the start callback */
};

static void on_start(struct ksched *s, struct kjob *job, void *userdata)
{
	struct trace *t = userdata;
	t->started[t->n_started++] = job->ev->seqnum;
	if (t->finish_at_once) {
		ksched_done(s, job);
		return;
	}
	t->running[t->n_running++] = job;
}

static struct kjob *make_job(const char *object, uint64_t seq)
{
	struct kevent *ev = NULL;
	const char *why;
	assert_int_equal(kevent_new(KEVENT_POWER, object, "high", "", KEVENT_SOURCE_SOCKET, seq, 0,
				    NULL, 0, &ev, &why),
			 0);
	struct kjob *job = NULL;
	assert_int_equal(kjob_new(ev, NULL, 0, &job), 0);
	return job;
}

/* Finishes the running job with this seqnum. */
static void finish(struct ksched *s, struct trace *t, uint64_t seq)
{
	for (size_t i = 0; i < t->n_running; i++) {
		if (t->running[i]->ev->seqnum != seq)
			continue;
		struct kjob *job = t->running[i];
		memmove(&t->running[i], &t->running[i + 1], (t->n_running - i - 1) * sizeof(job));
		t->n_running--;
		ksched_done(s, job);
		return;
	}
	fail_msg("job %llu is not running", (unsigned long long)seq);
}

static void test_same_object_in_order_one_at_a_time(void **state)
{
	(void)state;
	struct trace t = {0};
	struct ksched *s = NULL;
	assert_int_equal(ksched_new(8, 100, on_start, &t, &s), 0);
	for (uint64_t i = 1; i <= 3; i++)
		assert_int_equal(ksched_submit(s, make_job("/a", i)), 0);
	assert_int_equal(t.n_started, 1); /* the other two wait for the first */
	assert_int_equal(ksched_pending(s), 3);
	finish(s, &t, 1);
	assert_int_equal(t.n_started, 2);
	assert_int_equal(t.started[1], 2);
	finish(s, &t, 2);
	finish(s, &t, 3);
	assert_int_equal(t.started[2], 3);
	assert_int_equal(ksched_pending(s), 0);
	ksched_free(s);
}

static void test_objects_run_in_parallel_up_to_cap(void **state)
{
	(void)state;
	struct trace t = {0};
	struct ksched *s = NULL;
	assert_int_equal(ksched_new(2, 100, on_start, &t, &s), 0);
	assert_int_equal(ksched_submit(s, make_job("/a", 1)), 0);
	assert_int_equal(ksched_submit(s, make_job("/b", 2)), 0);
	assert_int_equal(ksched_submit(s, make_job("/c", 3)), 0);
	assert_int_equal(t.n_started, 2); /* cap of 2 */
	assert_int_equal(ksched_running(s), 2);
	finish(s, &t, 2);
	assert_int_equal(t.n_started, 3);
	assert_int_equal(t.started[2], 3); /* /c takes the freed slot */
	finish(s, &t, 1);
	finish(s, &t, 3);
	ksched_free(s);
}

static void test_ready_objects_are_served_in_arrival_order(void **state)
{
	(void)state;
	struct trace t = {0};
	struct ksched *s = NULL;
	assert_int_equal(ksched_new(1, 100, on_start, &t, &s), 0);
	assert_int_equal(ksched_submit(s, make_job("/a", 1)), 0);
	assert_int_equal(ksched_submit(s, make_job("/b", 2)), 0);
	assert_int_equal(ksched_submit(s, make_job("/a", 3)), 0);
	assert_int_equal(ksched_submit(s, make_job("/c", 4)), 0);
	finish(s, &t, 1);
	finish(s, &t, 2);
	finish(s, &t, 3);
	finish(s, &t, 4);
	uint64_t want[] = {1, 2, 3, 4};
	assert_int_equal(t.n_started, 4);
	assert_memory_equal(t.started, want, sizeof(want));
	ksched_free(s);
}

static void test_full_and_room(void **state)
{
	(void)state;
	struct trace t = {0};
	struct ksched *s = NULL;
	assert_int_equal(ksched_new(1, 4, on_start, &t, &s), 0);
	for (uint64_t i = 1; i <= 4; i++) {
		assert_false(ksched_full(s));
		assert_int_equal(ksched_submit(s, make_job("/a", i)), 0);
	}
	assert_true(ksched_full(s));
	assert_false(ksched_has_room(s));
	finish(s, &t, 1);
	assert_false(ksched_full(s));
	assert_true(ksched_has_room(s)); /* 3 of 4: the low-water mark */
	ksched_free(s);			 /* frees the queued and running jobs it still holds */
}

static void test_synchronous_completion_does_not_recurse(void **state)
{
	(void)state;
	struct trace t = {.finish_at_once = true};
	struct ksched *s = NULL;
	assert_int_equal(ksched_new(1, 1000, on_start, &t, &s), 0);
	ksched_hold(s, true);
	for (uint64_t i = 1; i <= 200; i++)
		assert_int_equal(ksched_submit(s, make_job(i % 2 ? "/a" : "/b", i)), 0);
	assert_int_equal(t.n_started, 0); /* held */
	ksched_hold(s, false);
	assert_int_equal(t.n_started, 200);
	for (uint64_t i = 0; i < 200; i++)
		assert_int_equal(t.started[i], i + 1);
	assert_int_equal(ksched_pending(s), 0);
	ksched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_object_in_order_one_at_a_time),
		cmocka_unit_test(test_objects_run_in_parallel_up_to_cap),
		cmocka_unit_test(test_ready_objects_are_served_in_arrival_order),
		cmocka_unit_test(test_full_and_room),
		cmocka_unit_test(test_synchronous_completion_does_not_recurse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The scheduler: per-object order, parallelism across objects, the cap on
 * running jobs, the share of pending jobs per source, turns across
 * sources, dropping what has not started, and synchronous completion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler.h"
#include "util.h"

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
	/* one job at a time per object */
	for (size_t i = 0; i < t->n_running; i++)
		if (strcmp(t->running[i]->ev->object, job->ev->object) == 0)
			fail_msg("job %llu started while %llu of %s runs",
				 (unsigned long long)job->ev->seqnum,
				 (unsigned long long)t->running[i]->ev->seqnum, job->ev->object);
	assert_true(t->n_started < ARRAY_SIZE(t->started));
	t->started[t->n_started++] = job->ev->seqnum;
	if (t->finish_at_once) {
		ksched_done(s, job);
		return;
	}
	t->running[t->n_running++] = job;
}

static struct kjob *make_job_of(enum kevent_source src, const char *object, uint64_t seq)
{
	struct kevent *ev = NULL;
	const char *why;
	assert_int_equal(
		kevent_new(KEVENT_POWER, object, "high", "", src, seq, 0, NULL, 0, &ev, &why), 0);
	struct kjob *job = NULL;
	assert_int_equal(kjob_new(ev, NULL, 0, &job), 0);
	return job;
}

static struct kjob *make_job(const char *object, uint64_t seq)
{
	return make_job_of(KEVENT_SOURCE_SOCKET, object, seq);
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
		assert_false(ksched_full(s, KEVENT_SOURCE_SOCKET));
		assert_int_equal(ksched_submit(s, make_job("/a", i)), 0);
	}
	assert_true(ksched_full(s, KEVENT_SOURCE_SOCKET));
	assert_false(ksched_has_room(s, KEVENT_SOURCE_SOCKET));
	finish(s, &t, 1);
	assert_false(ksched_full(s, KEVENT_SOURCE_SOCKET));
	assert_true(ksched_has_room(s, KEVENT_SOURCE_SOCKET)); /* 3 of 4: the low-water mark */
	ksched_free(s); /* frees the queued and running jobs it still holds */
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

/* A full share is that source's alone: the others keep all of theirs. */
static void test_shares_are_per_source(void **state)
{
	(void)state;
	struct trace t = {0};
	struct ksched *s = NULL;
	assert_int_equal(ksched_new(1, 4, on_start, &t, &s), 0);
	assert_int_equal(ksched_share(s), 4);
	for (uint64_t i = 1; i <= 4; i++)
		assert_int_equal(ksched_submit(s, make_job("/flood", i)), 0);
	assert_true(ksched_full(s, KEVENT_SOURCE_SOCKET));
	assert_int_equal(ksched_room(s, KEVENT_SOURCE_SOCKET), 0);
	for (int src = 0; src < KEVENT_SOURCE_MAX; src++) {
		if (src == KEVENT_SOURCE_SOCKET)
			continue;
		assert_false(ksched_full(s, (enum kevent_source)src));
		assert_true(ksched_has_room(s, (enum kevent_source)src));
		assert_int_equal(ksched_room(s, (enum kevent_source)src), 4);
		assert_int_equal(ksched_pending_of(s, (enum kevent_source)src), 0);
	}
	assert_int_equal(ksched_submit(s, make_job_of(KEVENT_SOURCE_THERMAL, "/t", 5)), 0);
	assert_int_equal(ksched_room(s, KEVENT_SOURCE_THERMAL), 3);
	assert_int_equal(ksched_pending_of(s, KEVENT_SOURCE_SOCKET), 4);
	assert_int_equal(ksched_pending_of(s, KEVENT_SOURCE_THERMAL), 1);
	assert_int_equal(ksched_pending(s), 5);
	ksched_free(s);
}

struct job_spec {
	enum kevent_source src;
	const char *object;
};

#define K(o)                            \
	{                               \
		KEVENT_SOURCE_KERNEL, o \
	}
#define U(o)                          \
	{                             \
		KEVENT_SOURCE_UDEV, o \
	}
#define T(o)                             \
	{                                \
		KEVENT_SOURCE_THERMAL, o \
	}
#define S(o)                            \
	{                               \
		KEVENT_SOURCE_SOCKET, o \
	}

struct order_case {
	const char *name;
	size_t max_running;
	bool held;		  /* everything is queued before anything starts */
	struct job_spec jobs[12]; /* seqnums from 1; up to the first without an object */
	uint64_t want[12];	  /* seqnums in the order they start */
};

/* Each case finishes the running job that started first, one at a time,
 * until nothing runs. */
/* clang-format off */
static const struct order_case order_cases[] = {
	{"one source: oldest first across objects", 1, false, {S("/a"), S("/b"), S("/a"), S("/c")}, {1, 2, 3, 4}},
	{"within a source, oldest first, not by name", 1, true, {K("/c"), K("/a"), K("/b")}, {1, 2, 3}},
	{"a flood of one source: another's job takes the next slot", 1, false, {S("/s1"), S("/s2"), S("/s3"), S("/s4"), S("/s5"), S("/s6"), T("/t")}, {1, 7, 2, 3, 4, 5, 6}},
	{"a kernel event behind a flood goes next too", 2, false, {S("/s1"), S("/s2"), S("/s3"), S("/s4"), S("/s5"), K("/k")}, {1, 2, 6, 3, 4, 5}},
	{"the sources take turns, each oldest first", 1, true, {S("/s1"), S("/s2"), S("/s3"), K("/k1"), K("/k2"), U("/u1"), T("/t1")}, {4, 6, 7, 1, 5, 2, 3}},
	{"two sources alternate", 1, true, {S("/s1"), S("/s2"), T("/t1"), T("/t2")}, {3, 1, 4, 2}},
	{"one object keeps arrival order across sources", 1, true, {S("/x"), T("/x"), S("/x"), T("/y")}, {4, 1, 2, 3}},
	{"one object runs one job at a time, others in parallel", 4, false, {S("/x"), T("/x"), K("/x"), S("/y")}, {1, 4, 2, 3}},
	{"one object's order holds while other objects go in turn", 2, false, {S("/x"), S("/x"), U("/u"), S("/x"), U("/x")}, {1, 3, 2, 4, 5}},
};
/* clang-format on */

static void test_start_order(void **state)
{
	(void)state;
	for (size_t c = 0; c < ARRAY_SIZE(order_cases); c++) {
		const struct order_case *oc = &order_cases[c];
		print_message("case: %s\n", oc->name);
		struct trace t = {0};
		struct ksched *s = NULL;
		assert_int_equal(ksched_new(oc->max_running, 100, on_start, &t, &s), 0);
		ksched_hold(s, oc->held);
		size_t n = 0;
		while (n < ARRAY_SIZE(oc->jobs) && oc->jobs[n].object) {
			assert_int_equal(ksched_submit(s, make_job_of(oc->jobs[n].src,
								      oc->jobs[n].object, n + 1)),
					 0);
			n++;
		}
		ksched_hold(s, false);
		while (t.n_running)
			finish(s, &t, t.running[0]->ev->seqnum);
		for (size_t i = 0; i < t.n_started; i++)
			print_message("  started %llu\n", (unsigned long long)t.started[i]);
		assert_int_equal(t.n_started, n);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(t.started[i], oc->want[i]);
		/* per object, in arrival order */
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (strcmp(oc->jobs[t.started[i] - 1].object,
					   oc->jobs[t.started[j] - 1].object) == 0)
					assert_true(t.started[i] < t.started[j]);
		assert_int_equal(ksched_pending(s), 0);
		ksched_free(s);
	}
}

/* Thousands of queued socket jobs, each for another object: a job of any
 * other source, queued behind all of them, takes the first slot that frees. */
static void test_flood_delays_another_source_by_one_slot(void **state)
{
	(void)state;
	static const enum kevent_source others[] = {KEVENT_SOURCE_KERNEL, KEVENT_SOURCE_UDEV,
						    KEVENT_SOURCE_THERMAL};
	for (size_t k = 0; k < ARRAY_SIZE(others); k++) {
		struct trace t = {0};
		struct ksched *s = NULL;
		enum { FLOOD = 4000, SLOTS = 4 };
		assert_int_equal(ksched_new(SLOTS, FLOOD, on_start, &t, &s), 0);
		for (uint64_t i = 1; i <= FLOOD; i++) {
			char obj[32];
			snprintf(obj, sizeof(obj), "/flood/%llu", (unsigned long long)i);
			assert_int_equal(ksched_submit(s, make_job(obj, i)), 0);
		}
		assert_int_equal(t.n_started, SLOTS);
		assert_int_equal(ksched_submit(s, make_job_of(others[k], "/x", FLOOD + 1)), 0);
		assert_int_equal(t.n_started, SLOTS); /* every slot busy */
		finish(s, &t, 1);
		assert_int_equal(t.n_started, SLOTS + 1);
		assert_int_equal(t.started[SLOTS], FLOOD + 1);
		/* the flood goes on after it, oldest first */
		finish(s, &t, 2);
		assert_int_equal(t.started[SLOTS + 1], SLOTS + 1);
		ksched_free(s);
	}
}

static void count_dropped(const struct kjob *job, void *userdata)
{
	struct trace *t = userdata;
	assert_true(t->n_started < ARRAY_SIZE(t->started));
	/* recorded after the started ones, with the high bit set */
	t->started[t->n_started++] = job->ev->seqnum | 1ull << 63;
}

/* Shutdown: what has not started is taken out and told; what runs stays. */
static void test_drop_queued(void **state)
{
	(void)state;
	struct trace t = {0};
	struct ksched *s = NULL;
	assert_int_equal(ksched_new(2, 100, on_start, &t, &s), 0);
	assert_int_equal(ksched_submit(s, make_job("/a", 1)), 0);
	assert_int_equal(ksched_submit(s, make_job("/a", 2)), 0);
	assert_int_equal(ksched_submit(s, make_job("/a", 3)), 0);
	assert_int_equal(ksched_submit(s, make_job_of(KEVENT_SOURCE_KERNEL, "/b", 4)), 0);
	assert_int_equal(ksched_submit(s, make_job_of(KEVENT_SOURCE_KERNEL, "/c", 5)), 0);
	assert_int_equal(t.n_started, 2); /* 1 and 4 */
	ksched_hold(s, true);
	assert_int_equal(ksched_drop_queued(s, count_dropped, &t), 3);
	assert_int_equal(t.n_started, 5);
	uint64_t dropped = 0;
	for (size_t i = 2; i < 5; i++) {
		assert_true(t.started[i] >> 63);
		dropped |= 1ull << (t.started[i] & 63);
	}
	assert_int_equal(dropped, 1ull << 2 | 1ull << 3 | 1ull << 5);
	assert_int_equal(ksched_pending(s), 2);
	assert_int_equal(ksched_pending_of(s, KEVENT_SOURCE_SOCKET), 1);
	assert_int_equal(ksched_pending_of(s, KEVENT_SOURCE_KERNEL), 1);
	finish(s, &t, 1);
	finish(s, &t, 4);
	assert_int_equal(ksched_pending(s), 0);
	assert_int_equal(t.n_started, 5); /* nothing else started */
	/* the queue works on afterwards: a job for /a again */
	ksched_hold(s, false);
	assert_int_equal(ksched_submit(s, make_job("/a", 6)), 0);
	assert_int_equal(t.n_started, 6);
	finish(s, &t, 6);
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
		cmocka_unit_test(test_shares_are_per_source),
		cmocka_unit_test(test_start_order),
		cmocka_unit_test(test_flood_delays_another_source_by_one_slot),
		cmocka_unit_test(test_drop_queued),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

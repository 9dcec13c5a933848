// SPDX-License-Identifier: GPL-2.0-or-later
/* Rate limits (keventd.rules(5), ratelimit:): per rule and object, windows
 * that end, limits that survive a reload, and the bounded table: full, it
 * forgets no window and runs nothing unlimited. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ratelimit.h"
#include "testutil.h"
#include "util.h"

#define MS 1000000ull

static const char *const yaml = "rules:\n"
				"  - name: twice\n"
				"    ratelimit: 2/10s\n"
				"  - name: once\n"
				"    ratelimit: 1/1s\n"
				"  - name: free\n";

enum { TWICE, ONCE, FREE, TWICE_RELOADED, TWICE_OTHER_FILE };

struct fixture {
	struct kfile *f, *reloaded, *other;
	const struct krule *rules[5];
	struct kratelimit *rl;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	fx->f = tu_parse(yaml, "/etc/keventd/rules.d/50-limits.yaml");
	fx->reloaded = tu_parse(yaml, "/etc/keventd/rules.d/50-limits.yaml");
	fx->other = tu_parse(yaml, "/etc/keventd/rules.d/60-other.yaml");
	fx->rules[TWICE] = &fx->f->rules[0];
	fx->rules[ONCE] = &fx->f->rules[1];
	fx->rules[FREE] = &fx->f->rules[2];
	fx->rules[TWICE_RELOADED] = &fx->reloaded->rules[0];
	fx->rules[TWICE_OTHER_FILE] = &fx->other->rules[0];
	assert_int_equal(kratelimit_new(&fx->rl), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	kratelimit_free(fx->rl);
	kfile_unref(fx->f);
	kfile_unref(fx->reloaded);
	kfile_unref(fx->other);
	free(fx);
	return 0;
}

struct step {
	int rule;
	const char *object;
	uint64_t t_ms;
	enum kratelimit_verdict v;
};

static void run_steps(struct fixture *fx, const char *what, const struct step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct step *s = &steps[i];
		enum kratelimit_verdict v =
			kratelimit_check(fx->rl, fx->rules[s->rule], s->object, s->t_ms * MS);
		if (v != s->v)
			fail_msg("%s, step %zu (rule %s, %s at %" PRIu64 " ms): verdict %d, not %d",
				 what, i, fx->rules[s->rule]->name, s->object, s->t_ms, (int)v,
				 (int)s->v);
	}
}

#define RUN	  KRATELIMIT_RUN
#define SUPPRESS  KRATELIMIT_SUPPRESS
#define SHARED	  KRATELIMIT_RUN_SHARED
#define SUPPRESSD KRATELIMIT_SUPPRESS_SHARED

static void test_windows(void **state)
{
	struct fixture *fx = *state;
	/* clang-format off */
	static const struct step steps[] = {
		{FREE, "/a", 0, RUN},
		{FREE, "/a", 0, RUN},
		{TWICE, "/a", 0, RUN},
		{TWICE, "/a", 1000, RUN},
		{TWICE, "/a", 2000, SUPPRESS},           /* 2 in the window that began at 0 */
		{TWICE, "/b", 2000, RUN},                /* per object */
		{ONCE, "/a", 2000, RUN},                 /* per rule */
		{ONCE, "/a", 2999, SUPPRESS},
		{ONCE, "/a", 3000, RUN},                 /* its window has ended */
		{TWICE_OTHER_FILE, "/a", 3000, RUN},     /* a rule of another file is another rule */
		{TWICE_RELOADED, "/a", 9999, SUPPRESS},  /* the same file and name, reparsed: the same limit */
		{TWICE_RELOADED, "/a", 10000, RUN},      /* the window counted from the first run has ended */
		{TWICE, "/a", 10001, RUN},
		{TWICE, "/a", 10002, SUPPRESS},
	};
	/* clang-format on */
	run_steps(fx, "windows", steps, ARRAY_SIZE(steps));
	assert_int_equal(kratelimit_size(fx->rl), 4);
	assert_int_equal(kratelimit_shared(fx->rl), 0);
}

/* Fills the table: n objects /fill/N of rule at t_ms. */
static void fill(struct fixture *fx, int rule, size_t from, size_t n, uint64_t t_ms)
{
	char obj[64];
	for (size_t i = from; i < from + n; i++) {
		snprintf(obj, sizeof(obj), "/fill/%zu", i);
		assert_int_equal(kratelimit_check(fx->rl, fx->rules[rule], obj, t_ms * MS), RUN);
	}
}

static void test_full_table(void **state)
{
	struct fixture *fx = *state;
	/* the victim's window first, then someone names ever new objects */
	assert_int_equal(kratelimit_check(fx->rl, fx->rules[TWICE], "/victim", 0), RUN);
	fill(fx, TWICE, 0, KRATELIMIT_MAX_WINDOWS - 2, 0);
	fill(fx, ONCE, KRATELIMIT_MAX_WINDOWS, 1, 0); /* ends at 1 s */
	assert_int_equal(kratelimit_size(fx->rl), KRATELIMIT_MAX_WINDOWS);
	/* clang-format off */
	static const struct step steps[] = {
		{TWICE, "/victim", 200, RUN},            /* its window is kept ... */
		{TWICE, "/victim", 300, SUPPRESS},       /* ... and its limit holds */
		{TWICE, "/fill/7", 300, RUN},
		{TWICE, "/fill/7", 300, SUPPRESS},
		{ONCE, "/new-1", 950, SHARED},           /* no room: one window for the rule's new objects */
		{ONCE, "/new-2", 950, SUPPRESSD},        /* which holds the rule to 1 per 1 s for all of them */
		{ONCE, "/new-1", 960, SUPPRESSD},
		{TWICE, "/new-3", 960, SHARED},          /* each rule has a shared window of its own */
		{TWICE, "/new-4", 960, SHARED},
		{TWICE, "/new-5", 960, SUPPRESSD},
		{FREE, "/new-6", 960, RUN},              /* a rule without a limit needs no window */
		{ONCE, "/new-7", 1000, SUPPRESSD},       /* a window has ended, but the last look was 50 ms ago */
		{TWICE, "/new-8", 1060, RUN},            /* 110 ms: looked again, and the room taken */
		{ONCE, "/new-9", 1060, SUPPRESSD},       /* full again */
		{ONCE, "/new-9", 1950, SHARED},          /* the shared window ends too */
		{TWICE, "/victim", 9999, SUPPRESS},      /* never forgotten before its end */
		{TWICE, "/victim", 10000, RUN},
	};
	/* clang-format on */
	run_steps(fx, "full table", steps, ARRAY_SIZE(steps));
	assert_int_equal(kratelimit_size(fx->rl), KRATELIMIT_MAX_WINDOWS);
	assert_int_equal(kratelimit_shared(fx->rl), 2);
	/* once the windows end, the objects get their own again */
	assert_int_equal(kratelimit_check(fx->rl, fx->rules[ONCE], "/later", 20000 * MS), RUN);
	assert_int_equal(kratelimit_check(fx->rl, fx->rules[ONCE], "/later", 20000 * MS), SUPPRESS);
	assert_int_equal(kratelimit_size(fx->rl), 1);
	assert_int_equal(kratelimit_shared(fx->rl), 0);
}

/* However many objects, the table holds at most its cap. */
static void test_bounded(void **state)
{
	struct fixture *fx = *state;
	char obj[64];
	for (size_t i = 0; i < 4 * KRATELIMIT_MAX_WINDOWS; i++) {
		snprintf(obj, sizeof(obj), "/flood/%zu", i);
		enum kratelimit_verdict v =
			kratelimit_check(fx->rl, fx->rules[TWICE], obj, (uint64_t)i * MS / 16);
		assert_true(i < KRATELIMIT_MAX_WINDOWS ? v == RUN : v != RUN);
		assert_true(kratelimit_size(fx->rl) <= KRATELIMIT_MAX_WINDOWS);
	}
	assert_int_equal(kratelimit_shared(fx->rl), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

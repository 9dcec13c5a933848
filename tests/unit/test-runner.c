// SPDX-License-Identifier: GPL-2.0-or-later
/* The runner alone: each rule's outcome, the job's end, and the timeout's
 * escalation from SIGTERM to SIGKILL (keventd.rules(5), "timeout"), also
 * when the loop cannot time the grace period.  kloop_add_timer() is
 * wrapped at link time (see CMakeLists.txt) so that a test can make one
 * call fail, or bring in its deadline instead of waiting 5 s. */
#include <inttypes.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "testutil.h"
#include "util.h"

#define SHORT_GRACE_MS 100
#define DEADLINE_MS    3000 /* under KRUNNER_KILL_GRACE_NS: no test waits it out */

int __real_kloop_add_timer(struct kloop *l, uint64_t deadline_ns, ktimer_fn fn, void *userdata,
			   struct ktimer **out);
int __wrap_kloop_add_timer(struct kloop *l, uint64_t deadline_ns, ktimer_fn fn, void *userdata,
			   struct ktimer **out);

/* kloop_add_timer() as the runner sees it: calls counted from the start
 * of a case; the one numbered fail fails, the one numbered shorten is
 * brought in to SHORT_GRACE_MS from now. */
static struct {
	unsigned calls;
	unsigned fail, shorten;
	uint64_t asked_ns; /* how far ahead the shortened one was asked for */
} timers;

int __wrap_kloop_add_timer(struct kloop *l, uint64_t deadline_ns, ktimer_fn fn, void *userdata,
			   struct ktimer **out)
{
	unsigned n = ++timers.calls;
	if (n == timers.fail)
		return -ENOMEM;
	if (n == timers.shorten) {
		uint64_t now = now_monotonic_ns();
		timers.asked_ns = deadline_ns > now ? deadline_ns - now : 0;
		deadline_ns = now + SHORT_GRACE_MS * 1000000ull;
	}
	return __real_kloop_add_timer(l, deadline_ns, fn, userdata, out);
}

/* The runner's owner: a line per report and per done(). */
struct owner {
	struct kloop *loop;
	struct tu_child how;
	char *lines[16];
	size_t n;
	size_t jobs_left;
	pid_t pids[8];
	size_t spawns;
};

static void add_line(struct owner *o, char *line)
{
	assert_true(o->n < ARRAY_SIZE(o->lines));
	o->lines[o->n++] = line;
}

/* A program under /missing/ cannot be started; any other is a child of
 * tu_spawn() behaving as the case says. */
static int spawn(void *userdata, const struct kplan *plan, const struct krule *r, struct kproc *p,
		 const char **what)
{
	struct owner *o = userdata;
	(void)r;
	if (strncmp(plan->argv[0], "/missing/", 9) == 0) {
		*what = "finding the program";
		return -ENOENT;
	}
	assert_true(o->spawns < ARRAY_SIZE(o->pids));
	int rc = tu_spawn(&o->how, p);
	o->pids[o->spawns++] = p->pid;
	return rc;
}

static const char *signame(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGKILL ? "SIGKILL" : "another signal";
}

static void report(void *userdata, const struct krun_report *rep)
{
	struct owner *o = userdata;
	unsigned long long seq = (unsigned long long)rep->job->ev->seqnum;
	const char *name = rep->rule->name;
	const char *late = rep->timed_out ? ", timed out" : "";
	switch (rep->outcome) {
	case KRUN_STARTED:
		if (rep->unit) {
			add_line(o, tu_printf("%llu %s started as %s", seq, name, rep->unit));
			break;
		}
		assert_true(rep->pid > 0);
		add_line(o, tu_printf("%llu %s started", seq, name));
		break;
	case KRUN_EXITED:
		add_line(o, tu_printf("%llu %s exited %d%s%s", seq, name, rep->status, late,
				      rep->oom_kills ? ", oom killed" : ""));
		break;
	case KRUN_KILLED:
		add_line(o, tu_printf("%llu %s killed by %s%s", seq, name, signame(rep->status),
				      late));
		break;
	case KRUN_START_FAILED:
		add_line(o,
			 tu_printf("%llu %s start failed: %s", seq, name, strerror(-rep->error)));
		break;
	case KRUN_DRY_RUN:
		add_line(o, tu_printf("%llu %s dry run", seq, name));
		break;
	case KRUN_SKIPPED:
		add_line(o, tu_printf("%llu %s skipped", seq, name));
		break;
	case KRUN_RATELIMITED:
		add_line(o, tu_printf("%llu %s rate-limited", seq, name));
		break;
	}
}

static void done(void *userdata, struct kjob *job)
{
	struct owner *o = userdata;
	assert_int_equal(job->next, job->n_rules); /* after every rule of it */
	add_line(o, tu_printf("%llu done", (unsigned long long)job->ev->seqnum));
	kjob_free(job);
	assert_true(o->jobs_left > 0);
	if (--o->jobs_left == 0)
		kloop_exit(o->loop, 0);
}

static const struct krunner_ops ops = {.spawn = spawn, .report = report, .done = done};

static const char one_rule[] = "rules:\n"
			       "  - name: handler\n"
			       "    run: [/usr/local/sbin/handler, \"${KEVENT_OBJECT}\"]\n"
			       "    timeout: 10s\n";

static const char short_timeout[] = "rules:\n"
				    "  - name: handler\n"
				    "    run: [/usr/local/sbin/handler]\n"
				    "    timeout: 50ms  # and SIGKILL 5s later\n";

static const char three_rules[] = "rules:\n"
				  "  - name: first\n"
				  "    run: [/usr/local/sbin/first]\n"
				  "    timeout: 10s\n"
				  "  - name: second\n"
				  "    shell: echo second\n"
				  "    timeout: 10s\n"
				  "  - name: third\n"
				  "    run: [/usr/local/sbin/third]\n"
				  "    timeout: 10s\n";

static const char missing_first[] = "rules:\n"
				    "  - name: mount\n"
				    "    run: [/missing/mount-helper]\n"
				    "  - name: log\n"
				    "    run: [/usr/bin/logger, mounted]\n"
				    "    timeout: 10s\n";

static const char limited[] = "rules:\n"
			      "  - name: alarm\n"
			      "    run: [/usr/local/sbin/fan-alarm]\n"
			      "    timeout: 10s\n"
			      "    ratelimit: 1/60s\n";

#define HANG(t)                           \
	{                                 \
		.hang = true, .term = (t) \
	}

struct runner_case {
	const char *name;
	const char *rules;
	size_t jobs; /* each of every rule of the file, for one object */
	struct tu_child how;
	bool dry_run;
	unsigned fail_timer, shorten_timer;
	const char *trace[12];
	size_t spawns, timer_calls;
};

/* clang-format off */
static const struct runner_case cases[] = {
	{"a handler that exits 3", one_rule, 1, {.status = 3}, false, 0, 0, {"1 handler started", "1 handler exited 3", "1 done"}, 1, 1},
	{"rules run in order, done once after the last", three_rules, 1, {.status = 0}, false, 0, 0, {"1 first started", "1 first exited 0", "1 second started", "1 second exited 0", "1 third started", "1 third exited 0", "1 done"}, 3, 3},
	{"killed by SIGTERM at its timeout", short_timeout, 1, HANG(TU_TERM_DIE), false, 0, 0, {"1 handler started", "1 handler killed by SIGTERM, timed out", "1 done"}, 1, 2},
	{"exits on SIGTERM at its timeout", short_timeout, 1, HANG(TU_TERM_EXIT), false, 0, 0, {"1 handler started", "1 handler exited 0, timed out", "1 done"}, 1, 2},
	{"ignores SIGTERM: SIGKILL after the grace period", short_timeout, 1, HANG(TU_TERM_IGNORE), false, 0, 2, {"1 handler started", "1 handler killed by SIGKILL, timed out", "1 done"}, 1, 2},
	{"ignores SIGTERM, no timer for the grace period: SIGKILL at once", short_timeout, 1, HANG(TU_TERM_IGNORE), false, 2, 0, {"1 handler started", "1 handler killed by SIGKILL, timed out", "1 done"}, 1, 2},
	{"no timer for the timeout: killed, never started", one_rule, 1, HANG(TU_TERM_IGNORE), false, 1, 0, {"1 handler start failed: Cannot allocate memory", "1 done"}, 1, 1},
	{"a start that fails, and the rule after it", missing_first, 1, {.status = 0}, false, 0, 0, {"1 mount start failed: No such file or directory", "1 log started", "1 log exited 0", "1 done"}, 1, 1},
	{"a dry run starts nothing", three_rules, 1, {.status = 0}, true, 0, 0, {"1 first dry run", "1 second dry run", "1 third dry run", "1 done"}, 0, 0},
	{"a rate-limited job is done at once", limited, 2, {.status = 0}, false, 0, 0, {"1 alarm started", "2 alarm rate-limited", "2 done", "1 alarm exited 0", "1 done"}, 1, 1},
};
/* clang-format on */

static void run_case(const struct runner_case *c)
{
	struct owner o = {.how = c->how};
	struct kratelimit *rl = NULL;
	struct krunner *r = NULL;
	assert_int_equal(kloop_new(&o.loop), 0);
	assert_int_equal(kratelimit_new(&rl), 0);
	assert_int_equal(krunner_new(o.loop, rl, c->dry_run, &ops, &o, &r), 0);
	struct kfile *f = tu_parse(c->rules, "/etc/keventd/rules.d/50-test.yaml");
	const struct krule *rules[8];
	assert_true(f->n_rules <= ARRAY_SIZE(rules));
	for (size_t i = 0; i < f->n_rules; i++)
		rules[i] = &f->rules[i];

	struct tu_deadline dl;
	tu_deadline_arm(&dl, o.loop, DEADLINE_MS);
	timers.calls = 0; /* the runner's own from here */
	timers.fail = c->fail_timer;
	timers.shorten = c->shorten_timer;
	timers.asked_ns = 0;
	o.jobs_left = c->jobs;
	for (size_t j = 0; j < c->jobs; j++) {
		struct kevent *ev = NULL;
		const char *why = NULL;
		assert_int_equal(kevent_new(KEVENT_POWER, "/org/kernel/fan0", "fan-stopped", "",
					    KEVENT_SOURCE_KERNEL, j + 1, 0, NULL, 0, &ev, &why),
				 0);
		struct kjob *job = NULL;
		assert_int_equal(kjob_new(ev, rules, f->n_rules, &job), 0);
		krunner_run(r, job);
	}
	bool in_time = tu_deadline_run(&dl);
	timers.fail = timers.shorten = 0;
	for (size_t i = 0; i < o.n; i++)
		print_message("  %s\n", o.lines[i]);
	if (!in_time) {
		for (size_t i = 0; i < o.spawns; i++)
			tu_reap(o.pids[i]);
		fail_msg("the handlers were not over in %d ms", DEADLINE_MS);
	}
	assert_int_equal(krunner_children(r), 0);
	size_t n_want = 0;
	while (n_want < ARRAY_SIZE(c->trace) && c->trace[n_want])
		n_want++;
	for (size_t i = 0; i < o.n && i < n_want; i++)
		assert_string_equal(o.lines[i], c->trace[i]);
	assert_int_equal(o.n, n_want);
	assert_int_equal(o.jobs_left, 0);
	assert_int_equal(o.spawns, c->spawns);
	assert_int_equal(timers.calls, c->timer_calls);
	if (c->shorten_timer) {
		/* what was shortened was the grace period after SIGTERM */
		assert_true(timers.asked_ns <= KRUNNER_KILL_GRACE_NS);
		assert_true(timers.asked_ns > KRUNNER_KILL_GRACE_NS - 1000000000ull);
	}
	for (size_t i = 0; i < o.n; i++)
		free(o.lines[i]);
	kfile_unref(f);
	krunner_free(r);
	kratelimit_free(rl);
	kloop_free(o.loop);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case: %s\n", cases[i].name);
		run_case(&cases[i]);
	}
}

/* The spawner of the cgroup case: checks that the plan names the run's
 * cgroup and plays the kernel, writing its memory.events. */
static char *cg_seen;
static int spawn_in_cgroup(void *userdata, const struct kplan *plan, const struct krule *r,
			   struct kproc *p, const char **what)
{
	char link[64], path[4096];
	assert_true(plan->cgroup_fd >= 0);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", plan->cgroup_fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	assert_true(n > 0);
	path[n] = '\0';
	free(cg_seen);
	cg_seen = strdup(path);
	tu_write(path, "memory.events", "oom 1\noom_kill 1\n", 0644);
	return spawn(userdata, plan, r, p, what);
}

static const struct krunner_ops cg_ops = {.spawn = spawn_in_cgroup, .report = report, .done = done};

/* With a cgroup per run: each run gets its own, named after the rule and
 * the event; its OOM kills are reported; one whose limits cannot be
 * written does not start and leaves no cgroup; what cannot be removed
 * at once is removed when the runner goes. */
static void test_cgroup_per_run(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "cgroup.controllers", "memory pids\n", 0644);
	tu_write(dir, "cgroup.subtree_control", "", 0644);
	struct kcgroup *cg = NULL;
	const char *why = NULL;
	assert_int_equal(kcgroup_open(dir, (int)getpid(), &cg, &why), 0);

	struct owner o = {.how = {.status = 0}};
	struct krunner *r = NULL;
	assert_int_equal(kloop_new(&o.loop), 0);
	assert_int_equal(krunner_new(o.loop, NULL, false, &cg_ops, &o, &r), 0);
	krunner_set_cgroup(r, cg);
	struct kfile *f = tu_parse("rules:\n"
				   "  - name: big/eater\n"
				   "    run: [/usr/local/sbin/eat]\n"
				   "  - name: capped\n"
				   "    run: [/usr/local/sbin/eat]\n"
				   "    memory_max: 20M\n",
				   "/etc/keventd/rules.d/50-test.yaml");
	const struct krule *rules[] = {&f->rules[0], &f->rules[1]};
	struct kevent *ev = NULL;
	assert_int_equal(kevent_new(KEVENT_POWER, "/org/kernel/x", "go", "", KEVENT_SOURCE_KERNEL,
				    7, 0, NULL, 0, &ev, &why),
			 0);
	struct kjob *job = NULL;
	assert_int_equal(kjob_new(ev, rules, 2, &job), 0);
	struct tu_deadline dl;
	tu_deadline_arm(&dl, o.loop, DEADLINE_MS);
	o.jobs_left = 1;
	krunner_run(r, job);
	assert_true(tu_deadline_run(&dl));
	const char *const want[] = {
		"7 big/eater started",
		"7 big/eater exited 0, oom killed",
		/* the fake tree has no memory.max to write */
		"7 capped start failed: No such file or directory",
		"7 done",
	};
	for (size_t i = 0; i < o.n; i++)
		print_message("  %s\n", o.lines[i]);
	assert_int_equal(o.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < o.n; i++) {
		assert_string_equal(o.lines[i], want[i]);
		free(o.lines[i]);
	}
	char *expect = tu_printf("%s/big_eater-7-1", dir);
	assert_string_equal(cg_seen, expect);
	char *capped = tu_printf("%s/capped-7-2", dir);
	assert_int_equal(access(capped, F_OK), -1); /* not left behind */
	/* the first one holds the fake memory.events, so it is left... */
	assert_int_equal(krunner_cgroups_left(r), 1);
	char *file = tu_printf("%s/memory.events", expect);
	assert_int_equal(unlink(file), 0);
	/* ...until the runner goes */
	krunner_free(r);
	assert_int_equal(access(expect, F_OK), -1);

	free(file);
	free(capped);
	free(expect);
	free(cg_seen);
	cg_seen = NULL;
	kfile_unref(f);
	kcgroup_free(cg);
	kloop_free(o.loop);
	tu_rm_rf(dir);
	free(dir);
}

/* The owner's side of a transient rule's start: the unit "starts" from
 * the loop, after start_unit() has returned, with the case's error. */
static struct {
	struct krunner_unit *u;
	char *path, *argv0;
	int error;	/* what the start comes to */
	int refuse;	/* start_unit()'s own return */
	bool skip;	/* no active session: skipped */
	unsigned calls; /* start_unit() calls */
	bool returned;	/* start_unit() has returned */
} unit_start;

static void unit_start_now(struct ktimer *t, void *userdata)
{
	(void)t;
	(void)userdata;
	assert_true(unit_start.returned);
	if (unit_start.skip)
		krunner_unit_skipped(unit_start.u);
	else
		krunner_unit_started(unit_start.u, unit_start.error);
	unit_start.u = NULL;
}

static int start_unit(void *userdata, struct krunner_unit *u, const struct kplan *plan,
		      const char *path)
{
	struct owner *o = userdata;
	unit_start.calls++;
	if (unit_start.refuse)
		return unit_start.refuse;
	assert_null(unit_start.u);
	unit_start.u = u;
	free(unit_start.path);
	free(unit_start.argv0);
	unit_start.path = strdup(path);
	unit_start.argv0 = strdup(plan->argv[0]);
	unit_start.returned = false;
	struct ktimer *t;
	assert_int_equal(__real_kloop_add_timer(o->loop, 0, unit_start_now, NULL, &t), 0);
	unit_start.returned = true;
	return 0;
}

static const struct krunner_ops unit_ops = {
	.spawn = spawn, .report = report, .start_unit = start_unit, .done = done};

/* transient: true: the owner starts the unit, and the job goes on as soon
 * as it has started (the next rule runs, the job is done) without waiting
 * for its end, which is the owner's to learn; a start that fails, or that
 * the owner cannot begin, is a failed start and the next rule runs. */
static void test_transient_unit(void **state)
{
	(void)state;
	static const struct {
		int error, refuse;
		bool skip;
		const char *first;
	} ucases[] = {
		{0, 0, false, NULL}, /* started as its unit: keventd-long\x20job-INSTANCE-1 */
		{-EINVAL, 0, false, "1 long job start failed: Invalid argument"},
		{0, -ECONNREFUSED, false, "1 long job start failed: Connection refused"},
		{0, 0, true, "1 long job skipped"},
	};
	struct kfile *f = tu_parse("rules:\n"
				   "  - name: long job\n"
				   "    run: [sleep, \"30\"]\n"
				   "    transient: true\n"
				   "  - name: after\n"
				   "    run: [/usr/local/sbin/after]\n"
				   "    timeout: 10s\n",
				   "/etc/keventd/rules.d/50-test.yaml");
	const struct krule *rules[] = {&f->rules[0], &f->rules[1]};
	for (size_t i = 0; i < ARRAY_SIZE(ucases); i++) {
		print_message("case: %s\n", ucases[i].first ? ucases[i].first : "started");
		struct owner o = {.how = {.status = 0}};
		struct krunner *r = NULL;
		assert_int_equal(kloop_new(&o.loop), 0);
		assert_int_equal(krunner_new(o.loop, NULL, false, &unit_ops, &o, &r), 0);
		unit_start.error = ucases[i].error;
		unit_start.refuse = ucases[i].refuse;
		unit_start.skip = ucases[i].skip;
		unit_start.calls = 0;
		struct kevent *ev = NULL;
		const char *why = NULL;
		assert_int_equal(kevent_new(KEVENT_STORAGE, "/dev/sda", "add", "",
					    KEVENT_SOURCE_KERNEL, 1, 0, NULL, 0, &ev, &why),
				 0);
		struct kjob *job = NULL;
		assert_int_equal(kjob_new(ev, rules, 2, &job), 0);
		o.jobs_left = 1;
		struct tu_deadline dl;
		tu_deadline_arm(&dl, o.loop, DEADLINE_MS);
		krunner_run(r, job);
		assert_int_equal(krunner_units_starting(r), ucases[i].refuse ? 0 : 1);
		assert_true(tu_deadline_run(&dl));
		assert_int_equal(unit_start.calls, 1);
		if (!ucases[i].refuse) {
			/* the program found as execve() would, argv as the rule says */
			assert_true(unit_start.path[0] == '/' &&
				    str_has_suffix(unit_start.path, "/sleep"));
			assert_int_equal(access(unit_start.path, X_OK), 0);
			assert_string_equal(unit_start.argv0, "sleep");
		}
		assert_int_equal(o.n, 4);
		if (ucases[i].first) {
			assert_string_equal(o.lines[0], ucases[i].first);
		} else {
			char want[96];
			snprintf(want, sizeof(want),
				 "1 long job started as keventd-long\\x20job-%016" PRIx64
				 "-1.service",
				 kinstance_id());
			assert_string_equal(o.lines[0], want);
		}
		assert_string_equal(o.lines[1], "1 after started");
		assert_string_equal(o.lines[2], "1 after exited 0");
		assert_string_equal(o.lines[3], "1 done");
		assert_int_equal(krunner_units_starting(r), 0);
		for (size_t k = 0; k < o.n; k++)
			free(o.lines[k]);
		krunner_free(r);
		kloop_free(o.loop);
	}
	free(unit_start.path);
	free(unit_start.argv0);
	kfile_unref(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_cgroup_per_run),
		cmocka_unit_test(test_transient_unit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

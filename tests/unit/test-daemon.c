// SPDX-License-Identifier: GPL-2.0-or-later
/* The daemon's path from a source's sink to its handlers: matching, rule
 * order, last, rate limits, failures, per-object order and the counters,
 * with real rule files and a fake spawner that starts trivial children. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-internal.h"
#include "debounce.h"
#include "journal.h"
#include "testutil.h"
#include "util.h"

#define CPU "/org/kernel/devices/system/cpu/temperature"
#define SDA "/org/kernel/devices/pci0000:00/block/sda"

/* The fake spawner "runs" a program by its name: /bin/false exits 1,
 * a program under /missing/ cannot be started, any other exits 0. */
#define MISSING "/missing/"

struct spawned {
	char **argv, **envp;
	char *rule;
	size_t running; /* handlers alive when it was started */
	bool refused;
	pid_t pid;
};

struct fake {
	struct kdaemon *d;
	struct spawned v[320];
	size_t n;
};

static int fake_spawn(void *userdata, const struct kplan *plan, const struct krule *r,
		      struct kproc *p, const char **what)
{
	struct fake *f = userdata;
	assert_true(f->n < ARRAY_SIZE(f->v));
	struct spawned *s = &f->v[f->n++];
	*s = (struct spawned){
		.argv = tu_strv_dup(plan->argv),
		.envp = tu_strv_dup(plan->envp),
		.rule = strdup(r->name),
		.running = krunner_children(f->d->runner),
	};
	assert_non_null(s->rule);
	assert_int_equal(strv_length(plan->argv), plan->argc);
	assert_int_equal(strv_length(plan->envp), plan->n_env);
	if (strncmp(plan->argv[0], MISSING, strlen(MISSING)) == 0) {
		s->refused = true;
		*what = "finding the program";
		return -ENOENT;
	}
	struct tu_child how = {.status = strcmp(plan->argv[0], "/bin/false") == 0};
	int rc = tu_spawn(&how, p);
	s->pid = p->pid;
	return rc;
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);
	strv_foreach (e, envp)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* "#SEQ RULE (N running): ARGV..." with " [refused]" for a start that failed. */
static char *spawned_line(const struct spawned *s)
{
	struct strbuf sb = STRBUF_INIT;
	const char *seq = env_get(s->envp, "KEVENT_SEQNUM");
	strbuf_printf(&sb, "#%s %s (%zu running):", seq ? seq : "?", s->rule, s->running);
	strv_foreach (a, s->argv)
		strbuf_printf(&sb, " %s", *a);
	if (s->refused)
		strbuf_puts(&sb, " [refused]");
	return strbuf_steal(&sb);
}

static void fake_release(struct fake *f)
{
	for (size_t i = 0; i < f->n; i++) {
		tu_reap(f->v[i].pid); /* only if a failed test left it */
		strv_free(f->v[i].argv);
		strv_free(f->v[i].envp);
		free(f->v[i].rule);
	}
	f->n = 0;
}

/* A daemon reading one rule file from a scratch directory, with no
 * control socket and no sources of its own. */
struct setup {
	char *dir;
	const char *dirs[1];
	struct fake fake;
	struct kdaemon *d;
	struct ksink sink;
	uint64_t seqnum;
};

static void setup_make_with(struct setup *t, const char *file, const char *yaml, unsigned sources,
			    size_t queue_size)
{
	*t = (struct setup){.dir = tu_mkdtemp()};
	t->dirs[0] = t->dir;
	tu_write(t->dir, file, yaml, 0644);
	struct kdaemon_config cfg = {
		.rule_dirs = t->dirs,
		.n_rule_dirs = 1,
		.control_path = NULL,
		.control_gid = (gid_t)-1,
		.sources = sources,
		.max_children = 4,
		.queue_size = queue_size,
		.trust = false,
		.spawn = fake_spawn,
		.spawn_userdata = &t->fake,
	};
	assert_int_equal(kdaemon_new(&cfg, &t->d), 0);
	t->fake.d = t->d;
	t->sink = kdaemon_sink(t->d);
	assert_int_equal(t->d->rules->n_files, 1);
}

static void setup_make(struct setup *t, const char *file, const char *yaml)
{
	setup_make_with(t, file, yaml, 0, 64);
}

static void setup_free(struct setup *t)
{
	fake_release(&t->fake);
	kdaemon_free(t->d);
	tu_rm_rf(t->dir);
	free(t->dir);
}

/* Submits "TYPE OBJECT SIGNAL [PAYLOAD]" as source src would. */
static void submit_from(struct setup *t, enum kevent_source src, const char *line)
{
	char *copy = strdup(line);
	assert_non_null(copy);
	char *sp1 = strchr(copy, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	assert_non_null(sp2);
	*sp1 = *sp2 = '\0';
	char *payload = strchr(sp2 + 1, ' ');
	if (payload)
		*payload++ = '\0';
	struct kevent *ev = NULL;
	const char *why = NULL;
	int type = kevent_type_from_name(copy);
	assert_true(type >= 0);
	if (kevent_new(type, sp1 + 1, sp2 + 1, payload ? payload : "", src, ++t->seqnum,
		       1700000000000000000ull, NULL, 0, &ev, &why) < 0)
		fail_msg("bad test event %s: %s", line, why);
	free(copy);
	assert_int_equal(ksink_submit(&t->sink, ev), 0);
}

static void submit(struct setup *t, const char *line)
{
	submit_from(t, KEVENT_SOURCE_KERNEL, line);
}

static bool idle(void *userdata)
{
	struct kdaemon *d = userdata;
	return ksched_pending(d->sched) == 0 && krunner_children(d->runner) == 0;
}

static void stop(void *userdata)
{
	kdaemon_exit(userdata, 0);
}

/* Runs the loop until the daemon exits (after kdaemon_exit()), bounded. */
static void run_to_exit(struct setup *t, struct tu_poll *p)
{
	struct tu_deadline dl;
	tu_deadline_arm(&dl, t->d->loop, 10000);
	if (!tu_deadline_run(&dl)) {
		if (p)
			tu_poll_cancel(p);
		fake_release(&t->fake);
		fail_msg("the handlers did not finish");
	}
	assert_int_equal(krunner_children(t->d->runner), 0);
	assert_int_equal(ksched_pending(t->d->sched), 0);
}

/* Lets everything queued run, then stops the daemon: idle, it exits at
 * once (a stop with events queued drops them: test_stop below). */
static void drain(struct setup *t)
{
	struct tu_poll p;
	tu_poll_arm(&p, t->d->loop, idle, stop, t->d);
	run_to_exit(t, &p);
}

static const char cpu_rules[] = "# The CPU is too hot: throttle it; log every change.\n"
				"rules:\n"
				"  - name: cpu-throttle\n"
				"    match:\n"
				"      type: power\n"
				"      object: " CPU "\n"
				"      signal: [high, critical]\n"
				"    run: [/usr/local/sbin/throttle, --cpu, \"${KEVENT_CPU}\"]\n"
				"    timeout: 30s\n"
				"\n"
				"  - name: cpu-log\n"
				"    match:\n"
				"      type: power\n"
				"      object: " CPU "\n"
				"    run: [/usr/bin/logger, --tag, keventd,\n"
				"          \"CPU ${KEVENT_CPU}: ${KEVENT_SIGNAL}\"]\n";

static const char last_rules[] =
	"rules:\n"
	"  # back to normal: nothing to do, and nothing else sees it\n"
	"  - name: quiet-normal\n"
	"    match:\n"
	"      signal: normal\n"
	"    last: true\n"
	"\n"
	"  - name: poweroff\n"
	"    match:\n"
	"      signal: critical\n"
	"    run: [/usr/local/sbin/poweroff-soon]\n"
	"    last: true\n"
	"\n"
	"  - name: log-all\n"
	"    match:\n"
	"      type: power\n"
	"    run: [/usr/bin/logger, \"${KEVENT_OBJECT} ${KEVENT_SIGNAL}\"]\n";

static const char rate_rules[] = "rules:\n"
				 "  - name: fan-alarm\n"
				 "    match:\n"
				 "      type: power\n"
				 "      signal: fan-stopped\n"
				 "    run: [/usr/local/sbin/fan-alarm, \"${KEVENT_OBJECT}\"]\n"
				 "    ratelimit: 1/60s  # one alarm a minute per fan\n";

static const char rate_and_log_rules[] = "rules:\n"
					 "  - name: fan-alarm\n"
					 "    match:\n"
					 "      signal: fan-stopped\n"
					 "    run: [/usr/local/sbin/fan-alarm]\n"
					 "    ratelimit: 1/60s\n"
					 "\n"
					 "  - name: fan-log\n"
					 "    match:\n"
					 "      signal: fan-stopped\n"
					 "    run: [/usr/bin/logger, fan stopped]\n";

static const char fail_rules[] =
	"rules:\n"
	"  - name: fsck\n"
	"    match:\n"
	"      type: storage\n"
	"      signal: check\n"
	"    run: [/bin/false]\n"
	"\n"
	"  - name: mount\n"
	"    match:\n"
	"      type: storage\n"
	"      signal: add\n"
	"    run: [" MISSING "mount-helper, \"${KEVENT_DEVNAME}\"]\n"
	"\n"
	"  - name: log\n"
	"    match:\n"
	"      type: storage\n"
	"    run: [/usr/bin/logger, \"${KEVENT_SIGNAL} ${KEVENT_DEVNAME}\"]\n";

/* What became of the events: stats of kstats. */
struct counts {
	uint64_t received, matched, handled, ratelimited, runs, failures, runs_ratelimited;
};

struct daemon_case {
	const char *name;
	const char *rules;
	const char *events[4]; /* "TYPE OBJECT SIGNAL [PAYLOAD]", seqnums from 1 */
	const char *spawned[8];
	struct counts want;
};

/* clang-format off */
static const struct daemon_case cases[] = {
	{"matching rules run in rule order", cpu_rules, {"power " CPU " high Cpu: 3"}, {"#1 cpu-throttle (0 running): /usr/local/sbin/throttle --cpu 3", "#1 cpu-log (0 running): /usr/bin/logger --tag keventd CPU 3: high"}, {.received = 1, .matched = 1, .handled = 1, .runs = 2}},
	{"only the rules that match run", cpu_rules, {"power " CPU " normal Cpu: 1"}, {"#1 cpu-log (0 running): /usr/bin/logger --tag keventd CPU 1: normal"}, {.received = 1, .matched = 1, .handled = 1, .runs = 1}},
	{"an event matching nothing is handled", cpu_rules, {"storage " SDA " add"}, {NULL}, {.received = 1, .handled = 1}},
	{"a last rule that runs nothing filters", last_rules, {"power " CPU " normal"}, {NULL}, {.received = 1, .matched = 1, .handled = 1}},
	{"last stops the later rules", last_rules, {"power " CPU " critical"}, {"#1 poweroff (0 running): /usr/local/sbin/poweroff-soon"}, {.received = 1, .matched = 1, .handled = 1, .runs = 1}},
	{"a last rule that does not match stops nothing", last_rules, {"power " CPU " high"}, {"#1 log-all (0 running): /usr/bin/logger " CPU " high"}, {.received = 1, .matched = 1, .handled = 1, .runs = 1}},
	{"a rate limit suppresses a second run", rate_rules, {"power /org/kernel/fan0 fan-stopped", "power /org/kernel/fan0 fan-stopped"}, {"#1 fan-alarm (0 running): /usr/local/sbin/fan-alarm /org/kernel/fan0"}, {.received = 2, .matched = 2, .handled = 1, .ratelimited = 1, .runs = 1, .runs_ratelimited = 1}},
	{"a rate limit is per object", rate_rules, {"power /org/kernel/fan0 fan-stopped", "power /org/kernel/fan1 fan-stopped"}, {"#1 fan-alarm (0 running): /usr/local/sbin/fan-alarm /org/kernel/fan0", "#2 fan-alarm (1 running): /usr/local/sbin/fan-alarm /org/kernel/fan1"}, {.received = 2, .matched = 2, .handled = 2, .runs = 2}},
	{"an event with a run left is handled", rate_and_log_rules, {"power /org/kernel/fan0 fan-stopped", "power /org/kernel/fan0 fan-stopped"}, {"#1 fan-alarm (0 running): /usr/local/sbin/fan-alarm", "#1 fan-log (0 running): /usr/bin/logger fan stopped", "#2 fan-log (0 running): /usr/bin/logger fan stopped"}, {.received = 2, .matched = 2, .handled = 2, .runs = 3, .runs_ratelimited = 1}},
	{"a failing exit status is a failure", fail_rules, {"storage " SDA " check DEVNAME: /dev/sda"}, {"#1 fsck (0 running): /bin/false", "#1 log (0 running): /usr/bin/logger check /dev/sda"}, {.received = 1, .matched = 1, .handled = 1, .runs = 2, .failures = 1}},
	{"a start that fails is a failure, later rules run", fail_rules, {"storage " SDA " add DEVNAME: /dev/sda"}, {"#1 mount (0 running): " MISSING "mount-helper /dev/sda [refused]", "#1 log (0 running): /usr/bin/logger add /dev/sda"}, {.received = 1, .matched = 1, .handled = 1, .runs = 2, .failures = 1}},
	{"events of one object run one at a time, in order", cpu_rules, {"power " CPU " high Cpu: 0", "power " CPU " critical Cpu: 1"}, {"#1 cpu-throttle (0 running): /usr/local/sbin/throttle --cpu 0", "#1 cpu-log (0 running): /usr/bin/logger --tag keventd CPU 0: high", "#2 cpu-throttle (0 running): /usr/local/sbin/throttle --cpu 1", "#2 cpu-log (0 running): /usr/bin/logger --tag keventd CPU 1: critical"}, {.received = 2, .matched = 2, .handled = 2, .runs = 4}},
	{"events of other objects run side by side", last_rules, {"power /org/kernel/fan0 high", "power /org/kernel/fan1 high"}, {"#1 log-all (0 running): /usr/bin/logger /org/kernel/fan0 high", "#2 log-all (1 running): /usr/bin/logger /org/kernel/fan1 high"}, {.received = 2, .matched = 2, .handled = 2, .runs = 2}},
};
/* clang-format on */

static void check_counts(const struct kstats *s, const struct counts *want)
{
	assert_int_equal(s->received[KEVENT_SOURCE_KERNEL], want->received);
	for (int src = 0; src < KEVENT_SOURCE_MAX; src++)
		if (src != KEVENT_SOURCE_KERNEL)
			assert_int_equal(s->received[src], 0);
	assert_int_equal(s->matched, want->matched);
	assert_int_equal(s->handled, want->handled);
	assert_int_equal(s->ratelimited, want->ratelimited);
	assert_int_equal(s->runs, want->runs);
	assert_int_equal(s->failures, want->failures);
	assert_int_equal(s->runs_ratelimited, want->runs_ratelimited);
	/* every accepted event is accounted for once it has all run */
	assert_int_equal(s->handled + s->ratelimited, s->received[KEVENT_SOURCE_KERNEL]);
	assert_true(s->matched <= s->received[KEVENT_SOURCE_KERNEL]);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct daemon_case *c = &cases[i];
		print_message("case: %s\n", c->name);
		struct setup t;
		setup_make(&t, "50-test.yaml", c->rules);
		for (size_t e = 0; e < ARRAY_SIZE(c->events) && c->events[e]; e++)
			submit(&t, c->events[e]);
		drain(&t);
		size_t n_want = 0;
		while (n_want < ARRAY_SIZE(c->spawned) && c->spawned[n_want])
			n_want++;
		for (size_t k = 0; k < t.fake.n; k++) {
			char *line = spawned_line(&t.fake.v[k]);
			print_message("  spawned %s\n", line);
			if (k < n_want)
				assert_string_equal(line, c->spawned[k]);
			free(line);
		}
		assert_int_equal(t.fake.n, n_want);
		check_counts(&t.d->stats, &c->want);
		setup_free(&t);
	}
}

/* The environment a handler is started with, through the daemon. */
static void test_handler_env(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, "50-cpu.yaml", cpu_rules);
	submit(&t, "power " CPU " high Cpu: 3\nTemperature: 95000");
	drain(&t);
	assert_int_equal(t.fake.n, 2);
	char *file = tu_printf("KEVENT_RULE_FILE=%s/50-cpu.yaml", t.dir);
	const char *const want[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"KEVENT_TYPE=power",
		"KEVENT_OBJECT=" CPU,
		"KEVENT_SIGNAL=high",
		"KEVENT_PAYLOAD=Cpu: 3\nTemperature: 95000",
		"KEVENT_SEQNUM=1",
		"KEVENT_TIMESTAMP=1700000000000000000",
		"KEVENT_SOURCE=kernel",
		"KEVENT_RULE=cpu-throttle",
		file,
		"KEVENT_CPU=3",
		"KEVENT_TEMPERATURE=95000",
	};
	char **env = t.fake.v[0].envp;
	for (size_t i = 0; env[i]; i++)
		print_message("env[%zu] %s\n", i, env[i]);
	assert_int_equal(strv_length(env), ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_string_equal(env[i], want[i]);
	/* the second rule's run is told its own name */
	assert_string_equal(env_get(t.fake.v[1].envp, "KEVENT_RULE"), "cpu-log");
	free(file);
	setup_free(&t);
}

/* What a source reports besides events: counted per source. */
static void test_sink_counts(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, "50-cpu.yaml", cpu_rules);
	struct kstats *s = &t.d->stats;
	assert_int_equal(ksink_room(&t.sink, KEVENT_SOURCE_UDEV), 64);

	for (int i = 0; i < KDAEMON_REJECT_LOG_BURST + 5; i++)
		ksink_reject(&t.sink, KEVENT_SOURCE_UDEV, "not a uevent");
	ksink_reject(&t.sink, KEVENT_SOURCE_THERMAL, "no such zone");
	assert_int_equal(s->rejected[KEVENT_SOURCE_UDEV], KDAEMON_REJECT_LOG_BURST + 5);
	assert_int_equal(s->rejected[KEVENT_SOURCE_THERMAL], 1);
	assert_int_equal(s->rejected[KEVENT_SOURCE_KERNEL], 0);
	assert_int_equal(s->rejected[KEVENT_SOURCE_SOCKET], 0);
	/* all counted, only a burst of them logged */
	assert_int_equal(t.d->reject_log[KEVENT_SOURCE_UDEV].logged, KDAEMON_REJECT_LOG_BURST);
	assert_int_equal(t.d->reject_log[KEVENT_SOURCE_UDEV].unlogged, 5);

	ksink_lost(&t.sink, KEVENT_SOURCE_KERNEL, 5);
	ksink_lost(&t.sink, KEVENT_SOURCE_KERNEL, 2);
	ksink_overrun(&t.sink, KEVENT_SOURCE_UDEV);
	ksink_overrun(&t.sink, KEVENT_SOURCE_UDEV);
	ksink_overrun(&t.sink, KEVENT_SOURCE_KERNEL);
	assert_int_equal(s->lost[KEVENT_SOURCE_KERNEL], 7);
	assert_int_equal(s->lost[KEVENT_SOURCE_UDEV], 0);
	assert_int_equal(s->overruns[KEVENT_SOURCE_UDEV], 2);
	assert_int_equal(s->overruns[KEVENT_SOURCE_KERNEL], 1);
	assert_int_equal(s->overruns[KEVENT_SOURCE_THERMAL], 0);

	/* nothing of that is an event */
	for (int src = 0; src < KEVENT_SOURCE_MAX; src++)
		assert_int_equal(s->received[src], 0);
	assert_int_equal(s->handled, 0);

	/* an event takes room until it has run; a stopping daemon has none */
	submit(&t, "power " CPU " high Cpu: 3");
	assert_int_equal(ksink_room(&t.sink, KEVENT_SOURCE_KERNEL), 63);
	drain(&t);
	assert_int_equal(ksink_room(&t.sink, KEVENT_SOURCE_KERNEL), 0);
	assert_int_equal(s->handled, 1);
	setup_free(&t);
}

/* With the rate-limit table full, new objects share their rule's window:
 * one run for them all, the others suppressed and counted as such. */
static void test_ratelimit_table_full(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, "50-fan.yaml", rate_rules);
	const struct krule *r = t.d->rules->rules[0];
	char obj[64];
	for (size_t i = 0; i < KRATELIMIT_MAX_WINDOWS; i++) {
		snprintf(obj, sizeof(obj), "/org/kernel/other%zu", i);
		assert_int_equal(kratelimit_check(t.d->rl, r, obj, now_monotonic_ns()),
				 KRATELIMIT_RUN);
	}
	submit(&t, "power /org/kernel/fan0 fan-stopped");
	submit(&t, "power /org/kernel/fan1 fan-stopped");
	drain(&t);
	assert_int_equal(t.fake.n, 1);
	check_counts(&t.d->stats, &(struct counts){.received = 2,
						   .matched = 2,
						   .handled = 1,
						   .ratelimited = 1,
						   .runs = 1,
						   .runs_ratelimited = 1});
	assert_int_equal(t.d->stats.runs_ratelimit_full, 1);
	assert_int_equal(kratelimit_size(t.d->rl), KRATELIMIT_MAX_WINDOWS);
	setup_free(&t);
}

static const char one_rule[] = "rules:\n"
			       "  - name: log-all\n"
			       "    match:\n"
			       "      type: power\n"
			       "    run: [/usr/bin/logger, \"${KEVENT_OBJECT}\"]\n";

/* Each source that is on has its own share of the queue (8 / 2 sources =
 * 4): a full share pauses that source alone; it reads again at 3/4. */
static void test_share_per_source(void **state)
{
	(void)state;
	struct setup t;
	setup_make_with(&t, "50-all.yaml", one_rule,
			1u << KEVENT_SOURCE_KERNEL | 1u << KEVENT_SOURCE_UDEV, 8);
	assert_int_equal(kdaemon_share(&t.d->cfg), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ksink_room(&t.sink, KEVENT_SOURCE_KERNEL), 4 - i);
		submit(&t, "power /org/kernel/fan0 high"); /* one object: one runs, three wait */
	}
	assert_true(t.d->paused[KEVENT_SOURCE_KERNEL]);
	assert_int_equal(t.d->stats.paused[KEVENT_SOURCE_KERNEL], 1);
	assert_int_equal(ksink_room(&t.sink, KEVENT_SOURCE_KERNEL), 0);
	/* udev keeps its whole share, and its event runs beside the kernel's */
	assert_false(t.d->paused[KEVENT_SOURCE_UDEV]);
	assert_int_equal(ksink_room(&t.sink, KEVENT_SOURCE_UDEV), 4);
	submit_from(&t, KEVENT_SOURCE_UDEV, "power /org/kernel/fan1 high");
	assert_int_equal(t.fake.n, 2);
	assert_int_equal(ksink_room(&t.sink, KEVENT_SOURCE_UDEV), 3);
	/* status shows each source's share and state */
	struct strbuf sb = STRBUF_INIT;
	kdaemon_status(t.d, KSTATUS_JSON, &sb);
	assert_non_null(strstr(
		strbuf_str(&sb),
		"\"kernel\":{\"received\":4,\"recovered\":0,\"redelivered\":0,\"rejected\":0,"
		"\"overruns\":0,\"lost\":0,\"truncated\":0,\"pending\":4,"
		"\"share\":4,\"paused\":true,\"paused_times\":1,\"resynced\":0,\"handled\":0,"
		"\"ratelimited\":0,\"debounced\":0}"));
	assert_non_null(strstr(
		strbuf_str(&sb),
		"\"udev\":{\"received\":1,\"recovered\":0,\"redelivered\":0,\"rejected\":0,"
		"\"overruns\":0,\"lost\":0,\"truncated\":0,\"pending\":1,"
		"\"share\":4,\"paused\":false,\"paused_times\":0,\"resynced\":0,\"handled\":0,"
		"\"ratelimited\":0,\"debounced\":0}"));
	assert_non_null(strstr(strbuf_str(&sb), "\"paused_times\":1,\"paused\":true}"));
	strbuf_release(&sb);
	drain(&t);
	assert_false(t.d->paused[KEVENT_SOURCE_KERNEL]); /* resumed on the way */
	assert_int_equal(t.fake.n, 5);
	assert_int_equal(t.d->stats.handled, 5);
	setup_free(&t);
}

/* A stop starts nothing more: queued events are dropped and counted per
 * source; the running handler finishes, the rules after it do not run. */
static void test_stop(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, "50-cpu.yaml", cpu_rules);
	submit(&t, "power " CPU " high Cpu: 0");
	submit(&t, "power " CPU " high Cpu: 1");
	submit_from(&t, KEVENT_SOURCE_SOCKET, "power " CPU " high Cpu: 2");
	assert_int_equal(t.fake.n, 1); /* cpu-throttle for seq 1; the others wait */
	kdaemon_exit(t.d, 0);
	assert_true(t.d->stopping);
	assert_int_equal(ksched_pending(t.d->sched), 1);
	assert_int_equal(t.d->stats.dropped[KEVENT_SOURCE_KERNEL], 1);
	assert_int_equal(t.d->stats.dropped[KEVENT_SOURCE_SOCKET], 1);
	/* an event that still comes in is dropped as well */
	submit(&t, "power " CPU " high Cpu: 3");
	assert_int_equal(t.d->stats.dropped[KEVENT_SOURCE_KERNEL], 2);
	run_to_exit(&t, NULL);
	assert_int_equal(t.fake.n, 1); /* not cpu-log after it, nor anything queued */
	assert_string_equal(t.fake.v[0].rule, "cpu-throttle");
	assert_int_equal(t.d->stats.handled, 1);
	assert_int_equal(t.d->stats.runs, 1);
	assert_int_equal(t.d->stats.received[KEVENT_SOURCE_KERNEL], 3);
	assert_int_equal(t.d->stats.received[KEVENT_SOURCE_SOCKET], 1);
	setup_free(&t);
}

/* A source that can fetch its events again: what it was handed back. */
struct refetch_source {
	struct ksource src;
	uint64_t back[8];
	size_t n_back;
	bool stopped, late; /* late: handed back after its stop */
};

static int refetch_unhandled(struct ksource *s, const struct kevent *ev)
{
	struct refetch_source *r = container_of(s, struct refetch_source, src);
	assert_int_equal(ev->source, KEVENT_SOURCE_KERNEL);
	r->late |= r->stopped;
	if (r->n_back < ARRAY_SIZE(r->back))
		r->back[r->n_back++] = ev->seqnum;
	return ev->seqnum == 4 ? -ESTALE : 0; /* 4: not of the stream it follows */
}

static void refetch_stop(struct ksource *s)
{
	container_of(s, struct refetch_source, src)->stopped = true;
}

static void refetch_free(struct ksource *s)
{
	(void)s;
}

/* A stop hands the dropped events back to their source before stopping
 * it; those it takes are counted to fetch again, the others not. */
static void test_stop_refetch(void **state)
{
	(void)state;
	struct setup t;
	struct refetch_source r = {.src = {.name = "kernel",
					   .kind = KEVENT_SOURCE_KERNEL,
					   .stop = refetch_stop,
					   .unhandled = refetch_unhandled,
					   .free = refetch_free}};
	setup_make(&t, "50-cpu.yaml", cpu_rules);
	t.d->source[KEVENT_SOURCE_KERNEL] = &r.src;
	for (int i = 1; i <= 4; i++)
		submit(&t, "power " CPU " high");
	submit_from(&t, KEVENT_SOURCE_SOCKET, "power " CPU " high");
	assert_int_equal(t.fake.n, 1); /* seq 1 runs; 2, 3, 4 and the socket's 5 wait */
	kdaemon_exit(t.d, 0);
	assert_true(r.stopped);
	assert_false(r.late);
	assert_int_equal(r.n_back, 3); /* the kernel's, not the socket's */
	uint64_t seen = 0;
	for (size_t i = 0; i < r.n_back; i++)
		seen |= 1ull << r.back[i];
	assert_int_equal(seen, (1u << 2) | (1u << 3) | (1u << 4));
	assert_int_equal(t.d->stats.dropped[KEVENT_SOURCE_KERNEL], 3);
	assert_int_equal(t.d->stats.dropped[KEVENT_SOURCE_SOCKET], 1);
	assert_int_equal(t.d->refetch[KEVENT_SOURCE_KERNEL], 2);
	assert_int_equal(t.d->refetch[KEVENT_SOURCE_SOCKET], 0);
	run_to_exit(&t, NULL);
	assert_int_equal(t.fake.n, 1);
	setup_free(&t);
}

static bool setup_idle(void *userdata)
{
	return idle(((struct setup *)userdata)->d);
}

static void slow_then_stop(void *userdata)
{
	struct setup *t = userdata;
	submit(t, "general /org/kernel/slow x"); /* handled: runs */
	submit(t, "general /org/kernel/slow x"); /* queued behind it: dropped */
	kdaemon_exit(t->d, 0);
}

/* One event of each fate: every event received ends in exactly one of
 * handled, rate-limited, debounced and dropped. */
static void test_fates(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, "50-fates.yaml",
		   "rules:\n"
		   "  - name: limited\n"
		   "    match: {object: /org/kernel/limited}\n"
		   "    ratelimit: 1/1h\n"
		   "    run: [/usr/local/sbin/limited]\n"
		   "  - name: quiet\n"
		   "    match: {object: /org/kernel/quiet}\n"
		   "    debounce: 1h\n"
		   "    run: [/usr/local/sbin/quiet]\n"
		   "  - name: slow\n"
		   "    match: {object: /org/kernel/slow}\n"
		   "    run: [/usr/local/sbin/slow]\n");
	submit(&t, "general /org/kernel/nothing x"); /* handled: nothing to run */
	submit(&t, "general /org/kernel/limited x"); /* handled: its run */
	submit(&t, "general /org/kernel/limited x"); /* rate-limited */
	submit(&t, "general /org/kernel/quiet x");   /* debounced: replaced by the next */
	submit(&t, "general /org/kernel/quiet x");   /* waits, still at the stop */
	const struct kstats *st = &t.d->stats;
	assert_int_equal(st->events_debounced, 1);
	/* once idle: one that runs, one queued behind it and dropped at a stop */
	struct tu_poll p;
	tu_poll_arm(&p, t.d->loop, setup_idle, slow_then_stop, &t);
	run_to_exit(&t, &p);
	kdebounce_free(TAKE_PTR(t.d->debounce)); /* what a stop leaves waiting goes now */
	assert_int_equal(st->received[KEVENT_SOURCE_KERNEL], 7);
	assert_int_equal(st->handled, 3);
	assert_int_equal(st->ratelimited, 1);
	assert_int_equal(st->events_debounced, 1);
	assert_int_equal(st->dropped[KEVENT_SOURCE_KERNEL], 1);
	assert_int_equal(st->handled + st->ratelimited + st->events_debounced +
				 st->dropped[KEVENT_SOURCE_KERNEL],
			 st->received[KEVENT_SOURCE_KERNEL] - 1); /* the one still waiting */
	setup_free(&t);
}

static bool all_spawned(void *userdata)
{
	struct setup *t = userdata;
	return t->fake.n == 300 && idle(t->d);
}

static void stop_setup(void *userdata)
{
	struct setup *t = userdata;
	kdaemon_exit(t->d, 0);
}

/* One event that matches 300 rules, 100 of them debounced: every one runs
 * (no fixed array leaves any out), and the event is counted once. */
static void test_many_rules(void **state)
{
	(void)state;
	struct strbuf yaml = STRBUF_INIT;
	strbuf_puts(&yaml, "rules:\n");
	for (int i = 0; i < 300; i++) {
		strbuf_printf(&yaml, "  - name: r%03d\n    match: {object: /org/kernel/many}\n", i);
		if (i % 3 == 2)
			strbuf_puts(&yaml, "    debounce: 1ms\n");
		strbuf_printf(&yaml, "    run: [/usr/local/sbin/r%03d]\n", i);
	}
	struct setup t;
	setup_make(&t, "50-many.yaml", strbuf_str(&yaml));
	strbuf_release(&yaml);
	submit(&t, "general /org/kernel/many x");
	struct tu_poll p;
	tu_poll_arm(&p, t.d->loop, all_spawned, stop_setup, &t);
	run_to_exit(&t, &p);
	assert_int_equal(t.fake.n, 300);
	bool seen[300] = {false};
	for (size_t k = 0; k < t.fake.n; k++) {
		int i = atoi(t.fake.v[k].rule + 1);
		assert_true(i >= 0 && i < 300 && !seen[i]);
		seen[i] = true;
	}
	const struct kstats *st = &t.d->stats;
	assert_int_equal(st->received[KEVENT_SOURCE_KERNEL], 1);
	assert_int_equal(st->handled, 1);
	assert_int_equal(st->runs, 300);
	assert_int_equal(st->events_debounced, 0);
	setup_free(&t);
}

/* A daemon as setup_make() makes, with its journal in state. */
static void setup_journaled(struct setup *t, const char *yaml, const char *state)
{
	*t = (struct setup){.dir = tu_mkdtemp()};
	t->dirs[0] = t->dir;
	tu_write(t->dir, "50-deb.yaml", yaml, 0644);
	struct kdaemon_config cfg = {
		.rule_dirs = t->dirs,
		.n_rule_dirs = 1,
		.control_gid = (gid_t)-1,
		.max_children = 4,
		.queue_size = 64,
		.spawn = fake_spawn,
		.spawn_userdata = &t->fake,
		.state_dir = state,
	};
	assert_int_equal(kdaemon_new(&cfg, &t->d), 0);
	t->fake.d = t->d;
	t->sink = kdaemon_sink(t->d);
	assert_int_equal(kdaemon_journal_start(t->d), 0);
	assert_non_null(t->d->journal);
}

static void die(void *userdata)
{
	struct kdaemon *d = userdata;
	/* no stop: what a kill leaves, less the loop's last round */
	kloop_exit(d->loop, 0);
}

static bool one_spawned(void *userdata)
{
	struct setup *t = userdata;
	return t->fake.n == 1 && idle(t->d);
}

static const char deb_rules[] = "rules:\n"
				"  - name: deb\n"
				"    match: {object: /org/kernel/q}\n"
				"    debounce: %s\n"
				"    run: [/usr/local/sbin/deb]\n"
				"  - name: now\n"
				"    match: {object: /org/kernel/q}\n"
				"    run: [/usr/local/sbin/now]\n";

/* A debounced run waiting when keventd dies keeps its event's record: the
 * next keventd waits again and runs it once, with the last event, flagged,
 * and not the event's other rule, whose run had ended; the event it
 * replaced is done.  The rule's quiet time changed meanwhile: a rule is
 * known by its file and name. */
static void test_debounce_survives(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	char yaml[512];
	struct setup t;
	struct tu_poll p;
	snprintf(yaml, sizeof(yaml), deb_rules, "1h");
	setup_journaled(&t, yaml, dir);
	submit_from(&t, KEVENT_SOURCE_SOCKET, "general /org/kernel/q x e0");
	submit_from(&t, KEVENT_SOURCE_SOCKET, "general /org/kernel/q x e1");
	tu_poll_arm(&p, t.d->loop, idle, die, t.d);
	run_to_exit(&t, &p);
	assert_int_equal(t.fake.n, 2); /* now, twice */
	assert_int_equal(kdebounce_pending(t.d->debounce), 1);
	struct kjournal_status js;
	kjournal_status(t.d->journal, &js);
	assert_int_equal(js.live, 1); /* e0 is done: e1, in the journal, replaced it */
	setup_free(&t);

	snprintf(yaml, sizeof(yaml), deb_rules, "10ms");
	setup_journaled(&t, yaml, dir);
	assert_int_equal(t.d->stats.redelivered[KEVENT_SOURCE_SOCKET], 1);
	tu_poll_arm(&p, t.d->loop, one_spawned, stop_setup, &t);
	run_to_exit(&t, &p);
	assert_int_equal(t.fake.n, 1);
	assert_string_equal(t.fake.v[0].rule, "deb");
	assert_string_equal(env_get(t.fake.v[0].envp, "KEVENT_PAYLOAD"), "e1");
	assert_string_equal(env_get(t.fake.v[0].envp, "KEVENT_REDELIVERED"), "1");
	kjournal_status(t.d->journal, &js);
	assert_int_equal(js.live, 0);
	const struct kstats *st = &t.d->stats;
	assert_int_equal(st->handled + st->ratelimited + st->events_debounced,
			 st->received[KEVENT_SOURCE_SOCKET]);
	setup_free(&t);

	setup_journaled(&t, yaml, dir); /* nothing left */
	assert_int_equal(t.d->stats.redelivered[KEVENT_SOURCE_SOCKET], 0);
	setup_free(&t);
	tu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_handler_env),
		cmocka_unit_test(test_sink_counts),
		cmocka_unit_test(test_ratelimit_table_full),
		cmocka_unit_test(test_share_per_source),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_stop_refetch),
		cmocka_unit_test(test_fates),
		cmocka_unit_test(test_many_rules),
		cmocka_unit_test(test_debounce_survives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

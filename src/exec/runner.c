// SPDX-License-Identifier: GPL-2.0-or-later
/* The runner (runner.h). */
#include "runner.h"
#include "transient-run.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "duration.h"
#include "log.h"
#include "transient.h"

#define LINE_MAX_BYTES	1024
#define LOG_LIMIT_BYTES (64 * 1024) /* output logged per run; the rest is counted */
#define READ_BUDGET	(64 * 1024) /* per wake-up, so one chatty handler cannot hog the loop */

/* Events decide how often these happen: logged at a bounded rate (log.h),
 * every one counted in status (failures, rate-limited runs). */
static struct klog_throttle spawn_log = {
	.name = "runner", .what = "handlers that could not start", .counted = true};
static struct klog_throttle suppressed_log = {
	.name = "runner", .what = "rate-limited runs", .counted = true};
static struct klog_throttle unenforced_log = {
	.name = "runner", .what = "runs without their cgroup limits", .counted = false};
static struct klog_throttle cgroup_log = {
	.name = "runner", .what = "cgroups not removed", .counted = false};

struct stream {
	struct kio *io;
	int fd;
	const char *name;
	char line[LINE_MAX_BYTES + 1];
	size_t len;
};

/* A run's cgroup whose handler is gone but whose processes are still
 * dying after cgroup.kill: removed when cgroup.events says it is empty. */
struct leftover {
	struct leftover *next;
	struct krunner *r;
	int fd, events_fd;
	struct kio *io;
	char name[KCGROUP_NAME_MAX];
};

struct krunner {
	struct kloop *loop;
	struct kcgroup *cg; /* NULL: no cgroup per run */
	uint64_t cg_runs;   /* names runs' cgroups */
	uint64_t unit_runs; /* names transient rules' units */
	struct ktrun *trun; /* transient rules' units, unless ops->start_unit */
	struct leftover *leftovers;
	size_t n_leftovers;
	struct kratelimit *rl;
	bool dry_run;
	bool stopped; /* krunner_stop(): no more rules start */
	const struct krunner_ops *ops;
	void *userdata;
	size_t children;
	size_t units_starting;			   /* transient rules' units being started */
	const char *const *(*env)(void *userdata); /* krunner_set_env() */
	void *env_userdata;
};

struct child {
	struct krunner *r;
	struct kjob *job;
	const struct krule *rule;
	struct kproc proc;
	struct kio *pid_io;
	struct ktimer *timer;
	struct stream out, err;
	uint64_t started_ns;
	size_t logged;
	uint64_t dropped;
	/* the last lines of its stderr, a ring: the next goes at tail_next */
	char tail[KRUNNER_TAIL_LINES][KRUNNER_TAIL_BYTES + 1];
	unsigned tail_next, tail_n;
	bool timed_out, killed;
	int cg_fd; /* the run's cgroup, or -1 */
	char cg_name[KCGROUP_NAME_MAX];
};

static void run_next(struct krunner *r, struct kjob *job);

/* The fields of a line about rule's run for job (krun_log()). */
#define run_fields(rule, job)                                        \
	((const struct klog_field[]){KLOG_STR("rule", (rule)->name), \
				     KLOG_UINT("seq", (job)->ev->seqnum)})

static void report(struct krunner *r, const struct krun_report *rep)
{
	struct krun_report x = *rep;
	if (x.job)
		x.serial = x.job->serial;
	r->ops->report(r->userdata, &x);
}

/* A transient rule's unit has ended, after its job. */
static void on_unit_ended(void *userdata, uint64_t serial, const struct krun_report *rep)
{
	struct krun_report x = *rep;
	x.serial = serial;
	report(userdata, &x);
}

static void on_unit_started(void *userdata, struct krunner_unit *u, int error)
{
	(void)userdata;
	krunner_unit_started(u, error);
}

static void on_unit_skipped(void *userdata, struct krunner_unit *u)
{
	(void)userdata;
	krunner_unit_skipped(u);
}

static const struct ktrun_ops trun_ops = {
	.ended = on_unit_ended, .started = on_unit_started, .skipped = on_unit_skipped};

bool krunner_units_available(void)
{
	return ktrun_available();
}

static void emit_line(struct child *c, struct stream *s)
{
	if (!s->len)
		return;
	s->line[s->len] = '\0';
	if (s == &c->err) {
		/* kept whether logged or not: the end is what tells why */
		size_t keep = s->len < KRUNNER_TAIL_BYTES ? s->len : KRUNNER_TAIL_BYTES;
		memcpy(c->tail[c->tail_next], s->line, keep);
		c->tail[c->tail_next][keep] = '\0';
		c->tail_next = (c->tail_next + 1) % KRUNNER_TAIL_LINES;
		if (c->tail_n < KRUNNER_TAIL_LINES)
			c->tail_n++;
	}
	if (c->logged < LOG_LIMIT_BYTES) {
		krun_log(LOG_INFO, c->rule->name, c->job->ev->seqnum, "rule %s[%d] %s: %s",
			 c->rule->name, (int)c->proc.pid, s->name, s->line);
		c->logged += s->len;
	} else {
		c->dropped += s->len;
	}
	s->len = 0;
}

/* The last lines of c's stderr, oldest first, each ended by a newline,
 * within KRUNNER_TAIL_BYTES (the newest line alone cut to fit): as many of
 * the newest as fit. */
static void put_tail(const struct child *c, char *out, size_t size)
{
	size_t total = 0;
	unsigned take = 0;
	for (; take < c->tail_n; take++) {
		const char *l = c->tail[(c->tail_next + KRUNNER_TAIL_LINES - 1 - take) %
					KRUNNER_TAIL_LINES];
		size_t len = strlen(l) + 1;
		if (take && total + len > KRUNNER_TAIL_BYTES)
			break;
		total += len;
	}
	size_t off = 0;
	out[0] = '\0';
	for (unsigned i = take; i-- > 0;) {
		const char *l =
			c->tail[(c->tail_next + KRUNNER_TAIL_LINES - 1 - i) % KRUNNER_TAIL_LINES];
		int n = snprintf(out + off, size - off, "%.*s\n",
				 (int)(size - off > 1 ? size - off - 2 : 0), l);
		if (n < 0 || (size_t)n >= size - off)
			break;
		off += (size_t)n;
	}
}

static void stream_close(struct stream *s)
{
	kio_free(s->io);
	s->io = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Reads what is there (up to a budget); returns false at EOF or error. */
static bool stream_read(struct child *c, struct stream *s, size_t budget)
{
	char buf[4096];
	size_t total = 0;
	while (s->fd >= 0 && total < budget) {
		ssize_t n = read(s->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return false;
		total += (size_t)n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				emit_line(c, s);
			} else {
				s->line[s->len++] = buf[i] ? buf[i] : ' ';
				if (s->len == LINE_MAX_BYTES)
					emit_line(c, s); /* an overlong line goes out in pieces */
			}
		}
	}
	return true;
}

static void on_output(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct child *c = userdata;
	struct stream *s = c->out.io == io ? &c->out : &c->err;
	(void)fd;
	(void)events;
	if (!stream_read(c, s, READ_BUDGET)) {
		emit_line(c, s);
		stream_close(s);
	}
}

/* SIGKILL to everything of the run: its process group, and its cgroup,
 * which holds what left the group too. */
static void kill_all(struct child *c)
{
	c->killed = true;
	kill(-c->proc.pid, SIGKILL);
	if (c->cg_fd >= 0)
		(void)kcgroup_run_kill(c->cg_fd);
}

static void on_timeout(struct ktimer *t, void *userdata)
{
	struct child *c = userdata;
	(void)t;
	c->timer = NULL;
	if (c->timed_out) {
		krun_log(LOG_WARNING, c->rule->name, c->job->ev->seqnum,
			 "rule %s[%d]: still running 5s after SIGTERM, sending SIGKILL",
			 c->rule->name, (int)c->proc.pid);
		kill_all(c);
		return;
	}
	char buf[32];
	duration_format(krule_extra(c->rule)->timeout_ms, buf, sizeof(buf));
	krun_log(LOG_WARNING, c->rule->name, c->job->ev->seqnum,
		 "rule %s[%d]: timed out after %s, sending SIGTERM", c->rule->name,
		 (int)c->proc.pid, buf);
	c->timed_out = true;
	kill(-c->proc.pid, SIGTERM);
	if (kloop_add_timer(c->r->loop, now_monotonic_ns() + KRUNNER_KILL_GRACE_NS, on_timeout, c,
			    &c->timer) < 0) {
		/* no grace period to wait out: a handler that ignores SIGTERM
		 * must not outlive its timeout for want of a timer */
		krun_log(LOG_WARNING, c->rule->name, c->job->ev->seqnum,
			 "rule %s[%d]: cannot time the grace period, sending SIGKILL now",
			 c->rule->name, (int)c->proc.pid);
		kill_all(c);
	}
}

static void log_result(struct child *c, const struct krun_report *rep)
{
	krunner_log_result(c->rule, c->job->ev->seqnum, c->proc.pid, NULL, rep);
	if (c->dropped)
		krun_log(LOG_WARNING, c->rule->name, c->job->ev->seqnum,
			 "rule %s[%d]: %" PRIu64 " bytes of output not logged", c->rule->name,
			 (int)c->proc.pid, c->dropped);
}

static void leftover_free(struct leftover *l)
{
	struct krunner *r = l->r;
	for (struct leftover **p = &r->leftovers; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	r->n_leftovers--;
	kio_free(l->io);
	close(l->events_fd);
	close(l->fd);
	free(l);
}

static void on_cgroup_event(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct leftover *l = userdata;
	char buf[256];
	(void)io;
	(void)events;
	/* reading through this descriptor is what re-arms its notification */
	ssize_t _unused_ n = pread(fd, buf, sizeof(buf), 0);
	if (kcgroup_run_populated(l->fd) != 0)
		return;
	int rc = kcgroup_run_remove(l->r->cg, l->name);
	if (rc < 0)
		klog_throttled(&cgroup_log, LOG_WARNING, "cannot remove the cgroup %s/%s: %s",
			       kcgroup_dir(l->r->cg), l->name, strerror(-rc));
	leftover_free(l);
}

/* The run is over: kill what is left in its cgroup, and remove it now or
 * once it is empty. */
static void cgroup_done(struct krunner *r, int fd, const char *name)
{
	(void)kcgroup_run_kill(fd);
	if (kcgroup_run_populated(fd) == 0 && kcgroup_run_remove(r->cg, name) == 0) {
		close(fd);
		return;
	}
	struct leftover *l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return;
	}
	*l = (struct leftover){.next = r->leftovers, .r = r, .fd = fd, .events_fd = -1};
	snprintf(l->name, sizeof(l->name), "%s", name);
	r->leftovers = l;
	r->n_leftovers++;
	l->events_fd = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (l->events_fd < 0 ||
	    kloop_add_io(r->loop, l->events_fd, EPOLLPRI, on_cgroup_event, l, &l->io) < 0) {
		klog_throttled(&cgroup_log, LOG_WARNING,
			       "cannot watch the cgroup %s/%s: it is removed when keventd stops",
			       kcgroup_dir(r->cg), name);
		return;
	}
	/* it may have emptied between the look and the watch */
	on_cgroup_event(l->io, l->events_fd, EPOLLPRI, l);
}

/* Closes what watches a handler that has been reaped, and forgets it. */
static void child_free(struct child *c)
{
	stream_close(&c->out);
	stream_close(&c->err);
	kio_free(c->pid_io);
	ktimer_cancel(c->timer);
	close(c->proc.pidfd);
	if (c->cg_fd >= 0)
		cgroup_done(c->r, c->cg_fd, c->cg_name);
	c->r->children--;
	free(c);
}

static void on_exit_ready(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct child *c = userdata;
	siginfo_t si = {0};
	(void)io;
	(void)events;
	if (waitid(P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
		return; /* spurious */
	struct krun_report rep = {
		.job = c->job,
		.rule = c->rule,
		.outcome = si.si_code == CLD_EXITED ? KRUN_EXITED : KRUN_KILLED,
		.pid = c->proc.pid,
		.status = si.si_status,
		.timed_out = c->timed_out,
		.duration_ms = (now_monotonic_ns() - c->started_ns) / 1000000ull,
	};
	/* the leader is gone: whatever it left in its group goes with it, and
	 * in its cgroup (child_free()) what left the group */
	kill(-c->proc.pid, SIGKILL);
	if (c->cg_fd >= 0) {
		rep.oom_kills = kcgroup_run_oom_kills(c->cg_fd);
		if (rep.oom_kills) /* the rule's memory_max, or a limit above it */
			krun_log(LOG_WARNING, c->rule->name, c->job->ev->seqnum,
				 "rule %s[%d]: %" PRIu64 " process(es) killed by the OOM killer "
				 "(seq %" PRIu64 ")",
				 c->rule->name, (int)c->proc.pid, rep.oom_kills,
				 c->job->ev->seqnum);
	}
	/* output still in the pipes (what the handler wrote before exiting) */
	stream_read(c, &c->out, LOG_LIMIT_BYTES);
	stream_read(c, &c->err, LOG_LIMIT_BYTES);
	emit_line(c, &c->out);
	emit_line(c, &c->err);
	rep.output_dropped = c->dropped;
	char tail[KRUNNER_TAIL_BYTES + 2];
	if (c->tail_n) {
		put_tail(c, tail, sizeof(tail));
		rep.stderr_tail = tail;
	}
	log_result(c, &rep);

	struct krunner *r = c->r;
	struct kjob *job = c->job;
	child_free(c);
	report(r, &rep);
	run_next(r, job);
}

/* The run's own cgroup, with the rule's limits, when the runner has a
 * subtree: 0 (c->cg_fd -1 without one), or -errno with *what. */
static int run_cgroup(struct krunner *r, struct kjob *job, const struct krule *rule,
		      struct child *c, const char **what)
{
	unsigned need = kcgroup_limits_need(krule_extra(rule)->cg_limits);
	unsigned have = r->cg ? kcgroup_controllers(r->cg) : 0;
	if (need & ~have)
		klog_throttled_fields(&unenforced_log, LOG_WARNING, run_fields(rule, job), 2,
				      "rule %s: %s not enforced: %s (seq %" PRIu64 ")", rule->name,
				      (need & ~have & KCGROUP_MEMORY) ? "memory_max"
				      : (need & ~have & KCGROUP_PIDS) ? "tasks_max"
								      : "cpu_weight",
				      r->cg ? "its controller is not delegated to keventd"
					    : "keventd has no cgroup to run handlers in",
				      job->ev->seqnum);
	if (!r->cg)
		return 0;
	kcgroup_run_name(rule->name, job->ev->seqnum, ++r->cg_runs, c->cg_name);
	return kcgroup_run_create(r->cg, c->cg_name, krule_extra(rule)->cg_limits, &c->cg_fd, what);
}

/* A transient rule's run: the owner starts its unit, and
 * krunner_unit_started() goes on.  0, or -errno. */
static int start_unit(struct krunner *r, struct kjob *job, const struct krule *rule,
		      const struct kplan *plan)
{
	_cleanup_free_ char *path = NULL;
	const char *what = "find the program";
	int rc = r->ops->start_unit || r->trun ? kexec_resolve(plan->argv[0], &path) : -EOPNOTSUPP;
	struct krunner_unit *u = NULL;
	if (rc == 0) {
		what = "start a unit";
		u = calloc(1, sizeof(*u));
		rc = u ? 0 : -ENOMEM;
	}
	if (rc == 0) {
		*u = (struct krunner_unit){
			.r = r, .job = job, .rule = rule, .started_ns = now_monotonic_ns()};
		u->run = ++r->unit_runs;
		rc = ktransient_unit_name(rule->name, kinstance_id(), u->run, &u->unit);
	}
	if (rc == 0) {
		r->units_starting++;
		rc = r->ops->start_unit ? r->ops->start_unit(r->userdata, u, plan, path)
					: ktrun_start(r->trun, u, plan, path);
		if (rc == 0)
			return 0;
		r->units_starting--;
	}
	klog_throttled_fields(&spawn_log, LOG_WARNING, run_fields(rule, job), 2,
			      "rule %s: cannot run %s: %s: %s (seq %" PRIu64 ")", rule->name,
			      plan->argv[0], what, strerror(-rc), job->ev->seqnum);
	if (u)
		free(u->unit);
	free(u);
	return rc;
}

void krunner_unit_skipped(struct krunner_unit *u)
{
	struct krunner *r = u->r;
	struct kjob *job = u->job;
	r->units_starting--;
	report(r, &(struct krun_report){.job = job, .rule = u->rule, .outcome = KRUN_SKIPPED});
	free(u->unit);
	free(u);
	run_next(r, job);
}

void krunner_unit_started(struct krunner_unit *u, int error)
{
	struct krunner *r = u->r;
	struct kjob *job = u->job;
	struct krun_report rep = {.job = job, .rule = u->rule, .unit = u->unit, .unit_run = u->run};
	r->units_starting--;
	if (error) {
		rep.outcome = KRUN_START_FAILED;
		rep.error = error;
	} else {
		rep.outcome = KRUN_STARTED;
		krun_log(LOG_DEBUG, u->rule->name, job->ev->seqnum,
			 "rule %s[%s]: started for %s %s (seq %" PRIu64 ")", u->rule->name, u->unit,
			 job->ev->object, job->ev->signal, job->ev->seqnum);
	}
	report(r, &rep);
	free(u->unit);
	free(u);
	run_next(r, job);
}

void krunner_set_env(struct krunner *r, const char *const *(*env)(void *userdata), void *userdata)
{
	r->env = env;
	r->env_userdata = userdata;
}

size_t krunner_units_starting(const struct krunner *r)
{
	return r->units_starting;
}

/* Starts rule's handler for job: 0 when it runs (on_exit_ready() goes on),
 * 1 when there is nothing to wait for (a dry run), or -errno. */
static int start_child(struct krunner *r, struct kjob *job, const struct krule *rule)
{
	struct kplan plan;
	int rc = kplan_build(rule, job->ev, &plan);
	if (rc < 0)
		return rc;
	if (r->env && (rc = kplan_add_env(&plan, r->env(r->env_userdata))) < 0) {
		kplan_release(&plan);
		return rc;
	}
	if (r->dry_run) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < plan.argc; i++) {
			strbuf_putc(&sb, ' ');
			strbuf_quote(&sb, plan.argv[i]);
		}
		krun_log(LOG_NOTICE, rule->name, job->ev->seqnum, "dry run: rule %s would run%s",
			 rule->name, strbuf_str(&sb));
		strbuf_release(&sb);
		kplan_release(&plan);
		return 1;
	}
	if (rule->transient) {
		rc = start_unit(r, job, rule, &plan);
		kplan_release(&plan);
		return rc;
	}
	struct child *c = calloc(1, sizeof(*c));
	if (!c) {
		kplan_release(&plan);
		return -ENOMEM;
	}
	*c = (struct child){.r = r, .job = job, .rule = rule, .started_ns = now_monotonic_ns()};
	c->out = (struct stream){.fd = -1, .name = "stdout"};
	c->err = (struct stream){.fd = -1, .name = "stderr"};
	c->cg_fd = -1;
	const char *what = "spawn";
	rc = run_cgroup(r, job, rule, c, &what);
	if (rc == 0) {
		plan.cgroup_fd = c->cg_fd;
		rc = r->ops->spawn(r->userdata, &plan, rule, &c->proc, &what);
	}
	if (rc < 0) {
		klog_throttled_fields(&spawn_log, LOG_WARNING, run_fields(rule, job), 2,
				      "rule %s: cannot run %s: %s: %s (seq %" PRIu64 ")",
				      rule->name, plan.argv[0], what, strerror(-rc),
				      job->ev->seqnum);
		kplan_release(&plan);
		if (c->cg_fd >= 0) {
			close(c->cg_fd);
			(void)kcgroup_run_remove(r->cg, c->cg_name);
		}
		free(c);
		return rc;
	}
	kplan_release(&plan);
	r->children++;
	c->out.fd = TAKE_FD(c->proc.out_fd);
	c->err.fd = TAKE_FD(c->proc.err_fd);
	krun_log(LOG_DEBUG, rule->name, job->ev->seqnum,
		 "rule %s[%d]: started for %s %s (seq %" PRIu64 ")", rule->name, (int)c->proc.pid,
		 job->ev->object, job->ev->signal, job->ev->seqnum);
	if (kloop_add_io(r->loop, c->out.fd, EPOLLIN, on_output, c, &c->out.io) < 0 ||
	    kloop_add_io(r->loop, c->err.fd, EPOLLIN, on_output, c, &c->err.io) < 0 ||
	    kloop_add_timer(r->loop, c->started_ns + krule_extra(rule)->timeout_ms * 1000000ull,
			    on_timeout, c, &c->timer) < 0 ||
	    kloop_add_io(r->loop, c->proc.pidfd, EPOLLIN, on_exit_ready, c, &c->pid_io) < 0) {
		/* cannot watch it: do not leave it unwatched */
		krun_log(LOG_ERR, rule->name, job->ev->seqnum,
			 "rule %s[%d]: cannot watch the handler, killing it", rule->name,
			 (int)c->proc.pid);
		kill_all(c);
		siginfo_t si;
		(void)waitid(P_PIDFD, (id_t)c->proc.pidfd, &si, WEXITED);
		child_free(c);
		return -ENOMEM;
	}
	report(r, &(struct krun_report){
			  .job = job, .rule = rule, .outcome = KRUN_STARTED, .pid = c->proc.pid});
	return 0;
}

/* Starts the job's next rule that may run; hands the job back when none is left. */
static void run_next(struct krunner *r, struct kjob *job)
{
	if (r->stopped && job->next < job->n_rules) {
		job->not_run = job->n_rules - job->next;
		job->next = job->n_rules;
	}
	while (job->next < job->n_rules) {
		const struct krule *rule = job->rules[job->next++];
		struct krun_report rep = {.job = job, .rule = rule};
		enum kratelimit_verdict v =
			r->rl ? kratelimit_check(r->rl, rule, krule_limit_key(rule, job->ev),
						 now_monotonic_ns())
			      : KRATELIMIT_RUN;
		if (!kratelimit_runs(v)) {
			job->suppressed++;
			if (v == KRATELIMIT_SUPPRESS_SHARED)
				klog_throttled_fields(
					&suppressed_log, LOG_NOTICE, run_fields(rule, job), 2,
					"rule %s: rate limit %" PRIu32 " per %" PRIu64
					"ms reached for the objects it shares a window with, "
					"the rate-limit table being full (%d windows): run for %s "
					"suppressed (seq %" PRIu64 ")",
					rule->name, krule_extra(rule)->rl_count,
					krule_extra(rule)->rl_period_ms, KRATELIMIT_MAX_WINDOWS,
					job->ev->object, job->ev->seqnum);
			else
				klog_throttled_fields(
					&suppressed_log, LOG_NOTICE, run_fields(rule, job), 2,
					"rule %s: rate limit %" PRIu32 " per %" PRIu64
					"ms reached for %s, run suppressed (seq %" PRIu64 ")",
					rule->name, krule_extra(rule)->rl_count,
					krule_extra(rule)->rl_period_ms, job->ev->object,
					job->ev->seqnum);
			rep.outcome = KRUN_RATELIMITED;
			rep.table_full = v == KRATELIMIT_SUPPRESS_SHARED;
			report(r, &rep);
			continue;
		}
		job->runs++;
		int st = start_child(r, job, rule);
		if (st == 0)
			return; /* on_exit_ready() comes back here */
		rep.outcome = st > 0 ? KRUN_DRY_RUN : KRUN_START_FAILED;
		rep.error = st < 0 ? st : 0;
		report(r, &rep);
	}
	r->ops->done(r->userdata, job);
}

void krunner_run(struct krunner *r, struct kjob *job)
{
	run_next(r, job);
}

void krunner_stop(struct krunner *r)
{
	r->stopped = true;
}

size_t krunner_children(const struct krunner *r)
{
	return r->children;
}

int krunner_new(struct kloop *loop, struct kratelimit *rl, bool dry_run,
		const struct krunner_ops *ops, void *userdata, struct krunner **out)
{
	struct krunner *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct krunner){
		.loop = loop, .rl = rl, .dry_run = dry_run, .ops = ops, .userdata = userdata};
	int rc = ops->start_unit ? 0 : ktrun_new(loop, &trun_ops, r, &r->trun);
	if (rc < 0) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void krunner_set_cgroup(struct krunner *r, struct kcgroup *cg)
{
	r->cg = cg;
}

size_t krunner_cgroups_left(const struct krunner *r)
{
	return r->n_leftovers;
}

void krunner_free(struct krunner *r)
{
	if (!r)
		return;
	ktrun_free(TAKE_PTR(r->trun)); /* its starts are over: the jobs are done */
	while (r->leftovers) {
		struct leftover *l = r->leftovers;
		(void)kcgroup_run_kill(l->fd);
		int rc = kcgroup_run_remove(r->cg, l->name);
		if (rc < 0)
			log_warning("cannot remove the cgroup %s/%s: %s", kcgroup_dir(r->cg),
				    l->name, strerror(-rc));
		leftover_free(l);
	}
	free(r);
}

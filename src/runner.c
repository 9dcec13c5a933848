// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The runner: runs a job's rules one after another, each as a handler
 * process watched through a pidfd, its output read and logged line by line,
 * its timeout enforced with SIGTERM and then SIGKILL to its process group.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "daemon.h"
#include "duration.h"
#include "exec.h"
#include "log.h"

#define KILL_GRACE_NS	(5ull * 1000000000ull)
#define LINE_MAX_BYTES	1024
#define LOG_LIMIT_BYTES (64 * 1024) /* output logged per run; the rest is counted */
#define READ_BUDGET	(64 * 1024) /* per wake-up, so one chatty handler cannot hog the loop */

struct stream {
	struct kio *io;
	int fd;
	const char *name;
	char line[LINE_MAX_BYTES + 1];
	size_t len;
};

struct child {
	struct kdaemon *d;
	struct kjob *job;
	const struct krule *rule;
	struct kproc proc;
	struct kio *pid_io;
	struct ktimer *timer;
	struct stream out, err;
	uint64_t started_ns;
	size_t logged;
	uint64_t dropped;
	bool timed_out, killed;
};

static void run_next(struct kdaemon *d, struct kjob *job);

static void emit_line(struct child *c, struct stream *s)
{
	if (!s->len)
		return;
	s->line[s->len] = '\0';
	if (c->logged < LOG_LIMIT_BYTES) {
		log_info("rule %s[%d] %s: %s", c->rule->name, (int)c->proc.pid, s->name, s->line);
		c->logged += s->len;
	} else {
		c->dropped += s->len;
	}
	s->len = 0;
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

static void on_timeout(struct ktimer *t, void *userdata)
{
	struct child *c = userdata;
	(void)t;
	c->timer = NULL;
	if (!c->timed_out) {
		char buf[32];
		duration_format(c->rule->timeout_ms, buf, sizeof(buf));
		log_warning("rule %s[%d]: timed out after %s, sending SIGTERM", c->rule->name,
			    (int)c->proc.pid, buf);
		c->timed_out = true;
		kill(-c->proc.pid, SIGTERM);
		kloop_add_timer(c->d->loop, now_monotonic_ns() + KILL_GRACE_NS, on_timeout, c,
				&c->timer);
	} else {
		log_warning("rule %s[%d]: still running 5s after SIGTERM, sending SIGKILL",
			    c->rule->name, (int)c->proc.pid);
		c->killed = true;
		kill(-c->proc.pid, SIGKILL);
	}
}

/* One record per run: a sentence for people, and the fields rule, file
 * (path:line), seq, pid, exit or signal, timed_out and duration_ms for grep
 * and for machines (klog_fields; --log-format json makes them JSON keys). */
static void log_result(struct child *c, const siginfo_t *si, uint64_t ms)
{
	struct kdaemon *d = c->d;
	struct krule_counters *rc = kstats_rule(&d->stats, c->rule);
	const char *name = c->rule->name;
	bool exited = si->si_code == CLD_EXITED;
	bool failed = !exited || si->si_status != 0;
	struct strbuf where = STRBUF_INIT;
	strbuf_printf(&where, "%s:%u", c->rule->file->path, c->rule->line);
	struct klog_field f[] = {
		KLOG_STR("rule", name),
		KLOG_STR("file", strbuf_str(&where)),
		KLOG_UINT("seq", c->job->ev->seqnum),
		KLOG_INT("pid", c->proc.pid),
		exited ? KLOG_INT("exit", si->si_status) : KLOG_INT("signal", si->si_status),
		KLOG_BOOL("timed_out", c->timed_out),
		KLOG_UINT("duration_ms", ms),
	};
	if (exited)
		klog_fields(failed ? LOG_WARNING : LOG_INFO, f, ARRAY_SIZE(f),
			    "rule %s[%d]: exited %d after %" PRIu64 "ms (seq %" PRIu64 ")%s", name,
			    (int)c->proc.pid, si->si_status, ms, c->job->ev->seqnum,
			    si->si_status == 127 ? ": program not found?" : "");
	else
		klog_fields(LOG_WARNING, f, ARRAY_SIZE(f),
			    "rule %s[%d]: killed by signal %d (%s) after %" PRIu64
			    "ms (seq %" PRIu64 ")%s",
			    name, (int)c->proc.pid, si->si_status, strsignal(si->si_status), ms,
			    c->job->ev->seqnum, c->timed_out ? ", timed out" : "");
	strbuf_release(&where);
	if (failed) {
		d->stats.failures++;
		if (rc)
			rc->failures++;
	}
	if (c->timed_out) {
		d->stats.timeouts++;
		if (rc)
			rc->timeouts++;
	}
	if (c->dropped) {
		d->stats.output_dropped_bytes += c->dropped;
		log_warning("rule %s[%d]: %" PRIu64 " bytes of output not logged", name,
			    (int)c->proc.pid, c->dropped);
	}
}

/* Closes what watches a handler that has been reaped, and forgets it. */
static void child_free(struct child *c)
{
	stream_close(&c->out);
	stream_close(&c->err);
	kio_free(c->pid_io);
	ktimer_cancel(c->timer);
	close(c->proc.pidfd);
	c->d->children--;
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
	uint64_t ms = (now_monotonic_ns() - c->started_ns) / 1000000ull;
	/* the leader is gone: whatever it left in its group goes with it */
	kill(-c->proc.pid, SIGKILL);
	/* output still in the pipes (what the handler wrote before exiting) */
	stream_read(c, &c->out, LOG_LIMIT_BYTES);
	stream_read(c, &c->err, LOG_LIMIT_BYTES);
	emit_line(c, &c->out);
	emit_line(c, &c->err);
	log_result(c, &si, ms);

	struct kdaemon *d = c->d;
	struct kjob *job = c->job;
	child_free(c);
	run_next(d, job);
}

static int start_child(struct kdaemon *d, struct kjob *job, const struct krule *r)
{
	struct kplan plan;
	int rc = kplan_build(r, job->ev, &plan);
	if (rc < 0)
		return rc;
	if (d->cfg.dry_run) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < plan.argc; i++) {
			strbuf_putc(&sb, ' ');
			strbuf_quote(&sb, plan.argv[i]);
		}
		log_notice("dry run: rule %s would run%s", r->name, strbuf_str(&sb));
		strbuf_release(&sb);
		kplan_release(&plan);
		d->stats.dry_runs++;
		return 1;
	}
	struct child *c = calloc(1, sizeof(*c));
	if (!c) {
		kplan_release(&plan);
		return -ENOMEM;
	}
	*c = (struct child){.d = d, .job = job, .rule = r, .started_ns = now_monotonic_ns()};
	c->out = (struct stream){.fd = -1, .name = "stdout"};
	c->err = (struct stream){.fd = -1, .name = "stderr"};
	const char *what = "spawn";
	rc = kexec_spawn(&plan, r, &c->proc, &what);
	if (rc < 0) {
		log_warning("rule %s: cannot run %s: %s: %s", r->name, plan.argv[0], what,
			    strerror(-rc));
		kplan_release(&plan);
		free(c);
		return rc;
	}
	kplan_release(&plan);
	d->children++;
	c->out.fd = TAKE_FD(c->proc.out_fd);
	c->err.fd = TAKE_FD(c->proc.err_fd);
	log_debug("rule %s[%d]: started for %s %s (seq %" PRIu64 ")", r->name, (int)c->proc.pid,
		  job->ev->object, job->ev->signal, job->ev->seqnum);
	if (kloop_add_io(d->loop, c->out.fd, EPOLLIN, on_output, c, &c->out.io) < 0 ||
	    kloop_add_io(d->loop, c->err.fd, EPOLLIN, on_output, c, &c->err.io) < 0 ||
	    kloop_add_timer(d->loop, c->started_ns + r->timeout_ms * 1000000ull, on_timeout, c,
			    &c->timer) < 0 ||
	    kloop_add_io(d->loop, c->proc.pidfd, EPOLLIN, on_exit_ready, c, &c->pid_io) < 0) {
		/* cannot watch it: do not leave it unwatched */
		log_error("rule %s[%d]: cannot watch the handler, killing it", r->name,
			  (int)c->proc.pid);
		kill(-c->proc.pid, SIGKILL);
		siginfo_t si;
		waitid(P_PIDFD, (id_t)c->proc.pidfd, &si, WEXITED);
		child_free(c);
		return -ENOMEM;
	}
	return 0;
}

static void finish_job(struct kdaemon *d, struct kjob *job)
{
	if (job->runs == 0 && job->suppressed > 0)
		d->stats.ratelimited++;
	else
		d->stats.handled++;
	ksched_done(d->sched, job);
	kdaemon_update_flow(d);
	kdaemon_maybe_exit(d);
}

/* Starts the job's next rule that may run; finishes the job when none is left. */
static void run_next(struct kdaemon *d, struct kjob *job)
{
	while (job->next < job->n_rules) {
		const struct krule *r = job->rules[job->next++];
		struct krule_counters *rc = kstats_rule(&d->stats, r);
		if (!kratelimit_allow(d->rl, r, job->ev->object, now_monotonic_ns())) {
			job->suppressed++;
			d->stats.runs_ratelimited++;
			if (rc)
				rc->ratelimited++;
			log_notice("rule %s: rate limit %" PRIu32 " per %" PRIu64
				   "ms reached for %s, run suppressed (seq %" PRIu64 ")",
				   r->name, r->rl_count, r->rl_period_ms, job->ev->object,
				   job->ev->seqnum);
			continue;
		}
		job->runs++;
		d->stats.runs++;
		if (rc)
			rc->runs++;
		int st = start_child(d, job, r);
		if (st == 0)
			return; /* on_exit_ready() comes back here */
		if (st < 0) {
			d->stats.failures++;
			if (rc)
				rc->failures++;
		}
	}
	finish_job(d, job);
}

void krunner_start(struct ksched *s, struct kjob *job, void *userdata)
{
	(void)s;
	run_next(userdata, job);
}

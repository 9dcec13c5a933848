/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runner: runs a job's rules one after another, each as a handler
 * process watched through a pidfd, its output read and logged line by
 * line, its timeout enforced with SIGTERM and then SIGKILL to its process
 * group.  It reports each rule's outcome and the job's end to its owner
 * and counts nothing itself; how a process is started is a callback too,
 * so a test can start what it likes.
 */
#ifndef KEVENT_RUNNER_H
#define KEVENT_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "exec.h"
#include "log.h"
#include "loop.h"
#include "plan.h"
#include "ratelimit.h"
#include "rules.h"
#include "scheduler.h"

#define KRUNNER_KILL_GRACE_NS (5ull * 1000000000ull) /* SIGTERM, then SIGKILL */
/* What a run's report keeps of its stderr, for those who ask what became
 * of it (send --wait, events, explain): its last lines, at most so many
 * and so many bytes (a longer line is cut at its end) */
#define KRUNNER_TAIL_LINES 4
#define KRUNNER_TAIL_BYTES 512

/* A line of the log about rule's run for event number seq: klog_fields()
 * with the fields rule and seq, which the journal calls KEVENT_RULE and
 * KEVENT_SEQNUM (keventd(8)), so that one query finds every line of a
 * rule's runs: their output, their failures to start, their ends. */
#define krun_log(level, rule_name, seq, ...)                                   \
	klog_fields((level),                                                   \
		    (const struct klog_field[]){KLOG_STR("rule", (rule_name)), \
						KLOG_UINT("seq", (seq))},      \
		    2, __VA_ARGS__)

enum krun_outcome {
	KRUN_STARTED,	   /* a handler process started */
	KRUN_EXITED,	   /* it exited: status */
	KRUN_KILLED,	   /* a signal ended it: status is the signal */
	KRUN_START_FAILED, /* it could not be started: error */
	KRUN_DRY_RUN,	   /* --dry-run: logged, not run */
	KRUN_RATELIMITED,  /* the rule's rate limit suppressed it */
	KRUN_SKIPPED,	   /* session: active, and no session was active */
};

/* One step in the life of one rule's run for a job. */
struct krun_report {
	const struct kjob *job;
	const struct krule *rule;
	enum krun_outcome outcome;
	pid_t pid;
	int status;		 /* KRUN_EXITED: exit status; KRUN_KILLED: the signal */
	int error;		 /* KRUN_START_FAILED: -errno */
	bool timed_out;		 /* ended after its timeout was reached */
	bool table_full;	 /* KRUN_RATELIMITED: by a window shared for lack of room */
	uint64_t duration_ms;	 /* KRUN_EXITED, KRUN_KILLED */
	uint64_t output_dropped; /* bytes of output over the logging limit */
	uint64_t oom_kills;	 /* processes of the run the memory limit killed */
	/* KRUN_EXITED, KRUN_KILLED: the last lines of its stderr, each ended
	 * by a newline (KRUNNER_TAIL_*), valid during the report; NULL when
	 * it wrote nothing there */
	const char *stderr_tail;
	/* a transient rule's unit (KRUN_STARTED and its end), else NULL; its
	 * end comes from the owner, after the job (job NULL) */
	const char *unit;
	uint64_t unit_run; /* with unit: the run's number in its name */
	/* the owner's number of the event (kjob.serial): set by the runner
	 * for every report, a unit's end included */
	uint64_t serial;
};

/* A transient rule's run (transient: true) that the owner is starting as a
 * systemd unit (krunner_ops.start_unit): the job waits for it. */
struct krunner_unit {
	struct krunner *r;
	struct kjob *job;
	const struct krule *rule;
	char *unit;   /* its name: ktransient_unit_name() */
	uint64_t run; /* this keventd's number for the run, in the name */
	uint64_t started_ns;
};

struct krunner_ops {
	/* Starts plan for rule r: kexec_spawn() in keventd.  0 with *p filled
	 * (pid, pidfd, out_fd and err_fd, which the runner then owns), or
	 * -errno with *what naming the step that failed. */
	int (*spawn)(void *userdata, const struct kplan *plan, const struct krule *r,
		     struct kproc *p, const char **what);
	void (*report)(void *userdata, const struct krun_report *rep);
	/* Starts the run u of a transient rule as a systemd unit, plan's
	 * program resolved to path: 0 when the start is under way, and the
	 * owner then calls krunner_unit_started(u, ...) once, never before
	 * this returns; or -errno (a failed start).  NULL: the runner's own
	 * backend starts it (transient-run.h), and reports the unit's end
	 * after the job, with the event's serial. */
	int (*start_unit)(void *userdata, struct krunner_unit *u, const struct kplan *plan,
			  const char *path);
	/* Every rule of the job has been run or suppressed: the job is the
	 * owner's again (ksched_done()). */
	void (*done)(void *userdata, struct kjob *job);
};

struct krunner;

/* Whether transient rules can run here (ktrun_available()). */
bool krunner_units_available(void);
/* rl may be NULL (no rate limits); dry_run logs what would run instead. */
int krunner_new(struct kloop *loop, struct kratelimit *rl, bool dry_run,
		const struct krunner_ops *ops, void *userdata, struct krunner **out);
/* Gives each handler run a cgroup of its own under cg (borrowed; it must
 * outlive the runner): spawned into it, its limits written, everything
 * in it killed when the handler exits or its timeout's SIGKILL comes,
 * removed once empty.  NULL: the process group alone, as without. */
void krunner_set_cgroup(struct krunner *r, struct kcgroup *cg);
/* env(userdata) gives the variables each handler run gets besides the
 * event's (kplan_add_env()): the user instance's session; NULL: none. */
void krunner_set_env(struct krunner *r, const char *const *(*env)(void *userdata), void *userdata);
/* Runs' cgroups not yet removed (their processes still dying). */
size_t krunner_cgroups_left(const struct krunner *r);
/* The unit of u has started (error 0: the runner reports KRUN_STARTED
 * with its name, and the job moves on, so that the next events of the
 * object need not wait for the unit to end) or could not start (-errno:
 * KRUN_START_FAILED; the owner logged why).  Frees u. */
void krunner_unit_started(struct krunner_unit *u, int error);
/* The run u is not to be (session: active, with no active session: the
 * owner logged it): the runner reports KRUN_SKIPPED and moves on.  Frees u. */
void krunner_unit_skipped(struct krunner_unit *u);
/* Starts of units under way (krunner_ops.start_unit). */
size_t krunner_units_starting(const struct krunner *r);

/* The record of a run's end, as the runner logs it for its handlers: a
 * sentence and the fields rule, file, seq, pid or unit, exit or signal,
 * timed_out and duration_ms (log.h's klog_fields).  For a transient
 * rule's unit, whose end the owner learns. */
void krunner_log_result(const struct krule *rule, uint64_t seq, pid_t pid, const char *unit,
			const struct krun_report *rep);

/* Frees the runner; its handlers must have been reaped.  NULL is fine. */
void krunner_free(struct krunner *r);
/* Runs the job's rules; done() comes when they are all over (possibly
 * before this returns). */
void krunner_run(struct krunner *r, struct kjob *job);
/* Shutdown: starts no more rules.  A job whose handler runs is done once
 * that handler is; the rules after it are left out (job->not_run says how
 * many). */
void krunner_stop(struct krunner *r);
/* Handler processes alive, including ones already timed out. */
size_t krunner_children(const struct krunner *r);

#endif

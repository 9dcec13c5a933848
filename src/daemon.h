/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon: sources -> kdaemon_submit() -> match -> scheduler -> runner.
 * One instance, driven by one event loop.
 */
#ifndef KEVENT_DAEMON_H
#define KEVENT_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

#include "loop.h"
#include "ratelimit.h"
#include "ruleset.h"
#include "scheduler.h"
#include "source.h"
#include "stats.h"

#define KEVENT_DEFAULT_CONTROL	  "/run/keventd/control"
#define KEVENT_DEFAULT_QUEUE_SIZE 4096
#define KEVENT_MAX_SOURCES	  8

struct kcontrol;
struct kdbus;
struct kwatch;

struct kdaemon_config {
	const char **rule_dirs;
	size_t n_rule_dirs;
	const char *control_path;
	gid_t control_gid; /* (gid_t)-1: root and keventd's own user only */
	unsigned sources;  /* bit per enum kevent_source */
	int udev_monitor;  /* enum kudev_monitor */
	size_t max_children;
	size_t queue_size;
	bool dry_run;
	bool trust; /* check rule file ownership: running as root */
	bool dbus;  /* forward every event to the system bus (--dbus) */
};

/* How much of one source's rejected input was logged lately. */
struct kreject_log {
	uint64_t since_ns; /* start of the current window */
	unsigned logged;   /* rejections logged in it */
	uint64_t unlogged; /* and not logged (all are counted) */
};

struct kdaemon {
	struct kdaemon_config cfg;
	struct kloop *loop;
	struct kruleset *rules;
	struct ksched *sched;
	struct kratelimit *rl;
	struct kstats stats;
	struct ksource *sources[KEVENT_MAX_SOURCES];
	size_t n_sources;
	struct kcontrol *control;
	struct kdbus *dbus; /* NULL unless --dbus and connected */
	struct kwatch *watch;
	struct kio *signal_io;
	int signal_fd;
	bool paused;
	bool stopping;
	bool held;	   /* second stop signal: queued handlers are not started */
	unsigned children; /* handler processes alive, including ones already timed out */
	struct kreject_log reject_log[KEVENT_SOURCE_MAX];
};

/*
 * Takes an event from a source (ownership too): counts it, matches it,
 * tells monitors, and queues its runs.  Returns 0, or -ENOMEM.
 */
int kdaemon_submit(struct kdaemon *d, struct kevent *ev);
/* Counts and logs input a source refused at its edge: every one is
 * counted, the first KDAEMON_REJECT_LOG_BURST of a source in each
 * KDAEMON_REJECT_LOG_WINDOW_NS are logged, and the rest are summed up in
 * one line when the next window starts, so a flood of garbage cannot
 * flood the journal. */
#define KDAEMON_REJECT_LOG_BURST     20
#define KDAEMON_REJECT_LOG_WINDOW_NS (5 * 1000000000ull)
void kdaemon_reject(struct kdaemon *d, enum kevent_source src, const char *why);
/* The sink the sources report to: submit, reject, overrun, lost, room. */
struct ksink kdaemon_sink(struct kdaemon *d);
/* Whether sources may read now (queue not full, not stopping). */
bool kdaemon_accepting(const struct kdaemon *d);
/* How many more events may be submitted before the sources must pause. */
size_t kdaemon_room(const struct kdaemon *d);

/* Reloads the rules; the text report of changes and errors goes to report
 * when given.  Returns 0 or -ENOMEM (errors in files are not failures). */
int kdaemon_reload(struct kdaemon *d, struct strbuf *report);
/* Renders status as text, JSON or the Prometheus text format. */
void kdaemon_status(struct kdaemon *d, enum kstatus_format format, struct strbuf *out);

/* The runner's start callback for the scheduler (runner.c). */
void krunner_start(struct ksched *s, struct kjob *job, void *userdata);

/* Re-evaluates pause/resume of the sources after the queue changed. */
void kdaemon_update_flow(struct kdaemon *d);
/* Exits the loop once stopping and nothing is left to run. */
void kdaemon_maybe_exit(struct kdaemon *d);

/* Control socket (control.c). */
int kcontrol_new(struct kdaemon *d, struct kcontrol **out, struct ksource **src);
void kcontrol_free(struct kcontrol *c);
void kcontrol_stop(struct kcontrol *c);
size_t kcontrol_clients(const struct kcontrol *c);
/* Sends one event line (and the rules it matched) to every monitor. */
void kcontrol_monitor(struct kcontrol *c, const struct kevent *ev, const struct krule *const *rules,
		      size_t n);

/* Sources, one file each. */
enum kudev_monitor { KUDEV_AUTO, KUDEV_UDEV, KUDEV_KERNEL };
int ksource_udev_new(struct kdaemon *d, enum kudev_monitor mode, struct ksource **out);

/* Rule directory watching (watch.c). */
int kwatch_new(struct kdaemon *d, struct kwatch **out);
void kwatch_free(struct kwatch *w);

#endif

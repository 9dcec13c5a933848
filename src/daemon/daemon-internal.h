/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's own header: struct kdaemon and what its files (daemon.c,
 * the core; daemon-lifecycle.c; daemon-sources.c; daemon-ctl.c and
 * reply.c, the control glue; observers.c, the outputs' glue) and its
 * white-box tests share.  The program sees daemon.h alone.
 */
#ifndef KEVENT_DAEMON_INTERNAL_H
#define KEVENT_DAEMON_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "observer.h"
#include "ratelimit.h"
#include "runner.h"
#include "ruleset.h"
#include "scheduler.h"
#include "source-type.h"
#include "source.h"
#include "stats.h"

#define KEVENT_MAX_OBSERVERS 8

struct kdaemon_ctl;
struct kjournal;
struct kdbus;
struct kdebounce;
struct khistory;
struct kmqtt;
struct kmqtt_config;
struct knotifier;
struct kdaemon_am;
struct kwatch;

struct debounce_run;
struct kdaemon;
struct kdaemon_cond;
struct kdaemon_users;
struct kdaemon_session;

/* How the core tells the condition table's glue (cond/daemon-cond.c,
 * which calls the core and so is called back, never called) that an
 * event's commit is over, that the rules were reloaded and that a round
 * of the loop ends. */
struct kdaemon_cond_hooks {
	void (*committed)(struct kdaemon *d);
	void (*reloaded)(struct kdaemon *d);
	void (*round_end)(struct kdaemon *d);
	/* a condition event of the journal, before the replay (journal.h) */
	void (*read_back)(struct kdaemon *d, const struct kevent *ev);
};

struct kdaemon {
	struct kdaemon_config cfg;
	struct kloop *loop;
	struct kruleset *rules;
	struct ksched *sched;
	struct krunner *runner;
	struct kcgroup *cgroup; /* NULL: containment by process group only */
	struct kratelimit *rl;
	struct kstats stats;
	struct ksource *source[KEVENT_SOURCE_MAX]; /* by kind; NULL: not running */
	struct kfdstore *fdstore;		   /* the sources' descriptors across a restart */
	struct kobserver observers[KEVENT_MAX_OBSERVERS];
	size_t n_observers;
	uint64_t serial;	    /* events taken so far: the number of the last one */
	uint64_t generation;	    /* rule sets loaded so far: the number of d->rules */
	struct khistory *history;   /* the last cfg.history events (history.h) */
	struct kdebounce *debounce; /* runs waiting for their rule's quiet time */
	struct kdaemon_ctl *ctl;    /* the control socket's requests (daemon-ctl.c) */
	struct kdbus *dbus;	    /* NULL unless --dbus and connected */
	struct kmqtt *mqtt;	    /* NULL unless keventd.yaml has a broker */
	struct knotifier *notifier; /* NULL unless keventd.yaml has notify: targets */
	struct kdaemon_am *am;	    /* NULL unless keventd.yaml has alertmanager: */
	struct kwatch *watch;
	struct kstatedir *state;  /* cfg.state_dir, checked and locked (statedir.h) */
	struct kjournal *journal; /* NULL without cfg.state_dir (journal.h) */
	/* cfg.lib_dir, checked and locked, once a part that keeps data
	 * there opened it (kdaemon_lib_open()); NULL: not (yet) */
	struct kstatedir *lib;
	/* the condition table (cond/daemon-cond.h; NULL: none), which the
	 * core tells through cond_hooks */
	struct kdaemon_cond *cond;
	/* the users socket, either side (users/daemon-users.h; NULL: none) */
	struct kdaemon_users *users;
	/* a user instance's session: handlers' environment, notify: desktop
	 * (users/daemon-session.h; NULL: the system instance) */
	struct kdaemon_session *session;
	const struct kdaemon_cond_hooks *cond_hooks;
	size_t debounce_kept; /* at the stop (kdaemon_keep_debounced()) */
	/* the tag of the debounced run being pushed, for the one it replaces */
	struct debounce_run *debounce_pushing;
	/* the highest number of the socket events read back from the journal */
	uint64_t socket_seq_replayed;
	bool journal_full; /* intake of the journaled sources is paused */
	/* how many of the last run's unfinished events were fed to the queue
	 * so far (kdaemon_replay_more()) */
	size_t replayed;
	/* handles the control socket's events taken and not yet handled
	 * (kdaemon_accept()): at the end of a round and before a reload,
	 * which frees the rules they matched (daemon-ctl.c's) */
	void (*resolve_staged)(void *userdata);
	void *resolve_userdata;
	struct kio *signal_io;
	int signal_fd;
	bool paused[KEVENT_SOURCE_MAX]; /* the source's share of the queue was full */
	bool stopping;
	bool sources_started;	   /* kdaemon_start_sources() has run */
	struct ksink sources_sink; /* the sink it gave them */
	/* each source's section of keventd.yaml in force: cfg.sections' or
	 * its defaults, or one that a reload read (taken), which the sources
	 * made with it keep (daemon-sources.c) */
	const void *section[KEVENT_SOURCE_MAX];
	struct ksource_sections taken;
	/* per source, of the events dropped at the stop, those handed back to
	 * their source, whose next start fetches them again (source.h) */
	uint64_t refetch[KEVENT_SOURCE_MAX];
	/* per source, the log of rejected input and of overruns (log.h) */
	struct klog_throttle reject_log[KEVENT_SOURCE_MAX];
	struct klog_throttle overrun_log[KEVENT_SOURCE_MAX];
};

/* The core's own state (counters, rate limits, runner, scheduler, rules),
 * set up in an allocated d with its cfg and loop by kdaemon_new(), and
 * released by kdaemon_free() (daemon.c). */
int kdaemon_init(struct kdaemon *d);
void kdaemon_release(struct kdaemon *d);
/* Exits the loop once stopping and nothing runs any more. */
void kdaemon_maybe_exit(struct kdaemon *d);

/*
 * What became of an event.  Every event received ends in exactly one of
 * handled, rate-limited, debounced, dropped or kept (failed counts as
 * handled, with a failure), so that status adds up (keventctl(8));
 * kdaemon_fate() is the one place that counts it, tells its source
 * (source.h: handled()) and retires it from the journal (journal.h):
 *
 *   fate               counted                  source told, journal
 *   KFATE_HANDLED      handled                  yes, retired
 *   KFATE_NO_RUN       handled: nothing to run  yes, retired (lazily: a
 *                                               redelivery runs nothing)
 *   KFATE_RATELIMITED  ratelimited              yes, retired
 *   KFATE_WAITS        nothing yet: its runs    yes, retired: a stop
 *                      wait for quiet           journals a waiting run
 *                                               again (keep_waiting()),
 *                                               a kill loses it
 *   KFATE_FIRED        handled                  no: told as KFATE_WAITS
 *   KFATE_DEBOUNCED    events_debounced         no: told as KFATE_WAITS
 *   KFATE_FAILED       handled and failures     no: the source and the
 *                      (accepted, not queued)   journal keep it, and the
 *                                               next start runs it
 *   KFATE_DROPPED      dropped (a stop)         no: likewise (not journaled)
 *   KFATE_KEPT         kept (a stop): in the    no: the journal keeps it
 *                      journal, not dropped
 */
enum kfate {
	KFATE_HANDLED,
	KFATE_NO_RUN,
	KFATE_RATELIMITED,
	KFATE_WAITS,
	KFATE_FIRED,
	KFATE_DEBOUNCED,
	KFATE_FAILED,
	KFATE_DROPPED,
	KFATE_KEPT,
};

/* Whether the journal holds ev's source's events: all but the kernel
 * source's, whose position file already keeps them (source-kernel.c). */
static inline bool kdaemon_journaled(enum kevent_source src)
{
	return src != KEVENT_SOURCE_KERNEL;
}
/* Opens cfg.state_dir (statedir.h: made when missing, checked, its
 * state.lock taken), before anything reads or writes a state file.  0
 * (also without cfg.state_dir), or -errno, logged: a state directory that
 * is not keventd's alone, or that another keventd holds, stops keventd
 * (keventd(8), --state-dir). */
int kdaemon_state_open(struct kdaemon *d);
/* Opens cfg.lib_dir as kdaemon_state_open() does the state directory
 * (made 0700 when missing, checked, its state.lock taken), for the parts
 * that keep what outlives a reboot there (the condition table); the
 * first call opens it, the others find it open.  0 with d->lib, -ENOENT
 * without cfg.lib_dir (--lib-dir none), or -errno, logged: a lib
 * directory refused stops keventd (keventd(8), --lib-dir). */
int kdaemon_lib_open(struct kdaemon *d);
/* Opens the journal in the state directory (kdaemon_state_open() first,
 * when it has not run) and hands its unfinished events to
 * kdaemon_submit(), before any source reads (daemon-lifecycle.c).  0, or
 * -errno from kdaemon_state_open(); a journal that cannot be opened in a
 * good state directory is logged, and keventd runs without one.  Either
 * way the journal's write, and the sources' positions after it, end each
 * round of the loop. */
int kdaemon_journal_start(struct kdaemon *d);
/* The last run's unfinished events go into the queue as it has room, at
 * the end of each round of the loop; the journaled sources wait for them
 * (kdaemon_flow_journaled(): pauses or resumes them as the journal and
 * the replay say, once they exist). */
void kdaemon_replay_more(struct kdaemon *d);
void kdaemon_flow_journaled(struct kdaemon *d);
/* At a stop: the debounced runs still waiting go into the journal, for
 * the next start (when there is one).  Returns how many. */
size_t kdaemon_keep_debounced(struct kdaemon *d);
/* Writes the events appended since the last time, in one write: called
 * before any reply goes out, before a job starts and at the end of each
 * round of the loop.  Once nothing is pending, the sources save their
 * positions (source.h: journaled()). */
void kdaemon_journal_flush(struct kdaemon *d);
/* Records were retired outside an event's fate (the condition table's,
 * cond/daemon-cond.c): the journaled sources resume if it has room again. */
void kdaemon_journal_room(struct kdaemon *d);

/* Counts ev's fate, and tells its source when the fate says so (ev NULL:
 * the source was told before).  Every place that counts one calls it. */
void kdaemon_fate(struct kdaemon *d, enum kevent_source src, const struct kevent *ev,
		  enum kfate fate);

/* The outputs, as observers (observers.c).  The history of cfg.history
 * events, if any: 0, or -errno. */
int kdaemon_history_start(struct kdaemon *d);
/* The D-Bus forwarder (--dbus); a failure is logged, never fatal. */
void kdaemon_dbus_start(struct kdaemon *d);
/* The broker of cfg.mqtt; a failure turns publishing off, logged.
 * Returns the source mqtt to add when sink is given and it subscribes. */
struct ksource *kdaemon_mqtt_start(struct kdaemon *d, const struct ksink *sink);
/* The notification targets of cfg.notify (notifier.h), their queue in
 * --lib-dir (kdaemon_lib_open()).  0, or -errno when the lib directory is
 * refused (logged); any other failure is logged, never fatal: nothing is
 * sent then. */
int kdaemon_notify_start(struct kdaemon *d);
/* The Alertmanager output (alertmanager.h), fed from the condition table:
 * after it is loaded.  What goes wrong is logged and leaves it off. */
void kdaemon_am_start(struct kdaemon *d);
/* Makes the sources cfg.sources names from their rows (source-type.h),
 * reporting to sink, made[kind] the ones other parts of keventd made
 * (daemon-sources.c); one that cannot be made is logged and left out. */
void kdaemon_start_sources(struct kdaemon *d, const struct ksink *sink,
			   struct ksource *const made[KEVENT_SOURCE_MAX]);
/* At a reload: keventd.yaml read again, checked as at start-up (the
 * kernel's checks included), and each source whose section changed
 * configured, or made again (daemon-sources.c).  A file with a mistake
 * changes nothing.  What it did is logged and, with report, said there. */
void kdaemon_reload_config(struct kdaemon *d, struct strbuf *report);
/* Frees them all (after the sources and the runner are done). */
void kdaemon_outputs_free(struct kdaemon *d);

/* Adds an observer: -ENOSPC past KEVENT_MAX_OBSERVERS, logged and counted
 * (stats.observers_refused). */
int kdaemon_observe(struct kdaemon *d, const struct kobserver *o);

/*
 * Takes an event from a source (ownership too): counts it, matches it,
 * tells the observers, and queues its runs.  Returns 0, or -ENOMEM.  An
 * event of the control socket is written to the journal first, and
 * refused (-errno of the write: never received, counted as refused) when
 * it cannot be.
 */
int kdaemon_submit(struct kdaemon *d, struct kevent *ev);

/*
 * kdaemon_submit() in two steps, for the control socket's send and post,
 * answered "ok" only once the journal holds the event while the records
 * of a round's requests are still written with one write: accept counts,
 * matches and appends ev (ownership too; -ENOMEM); once the journal is
 * flushed, kdaemon_staged_written() says whether its record was written
 * (0, or -errno: why not), and the event is either committed (as
 * kdaemon_submit() goes on) or refused (never received, counted as
 * refused).  Both free st.  d->resolve_staged must commit or refuse
 * every staged event before the rules are reloaded.
 */
struct kstaged;
int kdaemon_accept(struct kdaemon *d, struct kevent *ev, struct kstaged **out);
int kdaemon_staged_written(const struct kdaemon *d, const struct kstaged *st);
int kdaemon_commit(struct kdaemon *d, struct kstaged *st);
void kdaemon_refuse(struct kdaemon *d, struct kstaged *st);
/* Counts and logs input a source refused at its edge: every one is
 * counted, the first KDAEMON_REJECT_LOG_BURST of a source in each
 * KDAEMON_REJECT_LOG_WINDOW_NS are logged, and the rest are summed up in
 * one line when the next window starts, so a flood of garbage cannot
 * flood the journal (a struct klog_throttle per source, log.h). */
#define KDAEMON_REJECT_LOG_BURST     KLOG_THROTTLE_BURST
#define KDAEMON_REJECT_LOG_WINDOW_NS KLOG_THROTTLE_WINDOW_NS
void kdaemon_reject(struct kdaemon *d, enum kevent_source src, const char *why);
/* The sink the sources report to: submit, reject, overrun, lost, room. */
struct ksink kdaemon_sink(struct kdaemon *d);
/*
 * Every source has its own share of the queue: cfg.queue_size split evenly
 * among the sources of cfg.sources (at least 1 each; with none on, as in
 * tests that feed the sink themselves, each may have all of it).  A source
 * whose share is full is paused until a quarter of it has drained; the
 * other sources read on.  kdaemon_room() says how many more events src may
 * submit before it must pause (0 while it is paused or the daemon is
 * stopping).
 */
size_t kdaemon_share(const struct kdaemon_config *cfg);
size_t kdaemon_room(const struct kdaemon *d, enum kevent_source src);

/* Reloads the rules; the text report of changes and errors goes to report
 * when given.  Returns 0 or -ENOMEM (errors in files are not failures). */
int kdaemon_reload(struct kdaemon *d, struct strbuf *report);
/* Renders status as text, JSON or the Prometheus text format, whole.
 * (The control socket sends it as the client reads: reply.h.) */
void kdaemon_status(struct kdaemon *d, enum kstatus_format format, struct strbuf *out);
/* What status shows besides the counters (the queue, the journal, and
 * each observer's own fields: the history, the broker, the control
 * socket's clients...), as it is now. */
void kdaemon_status_extra(struct kdaemon *d, struct kstatus_extra *out);

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's lifecycle (daemon.h): making it, starting what it reads
 * (signals, rule directory watches, the control socket, D-Bus, the
 * sources), running it, draining it on a stop signal, and freeing it.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "config.h"
#include "ctl-server.h"
#include "daemon-cond.h"
#include "daemon-session.h"
#include "daemon-users.h"
#include "daemon-ctl.h"
#include "daemon-internal.h"
#include "fdstore.h"
#include "statedir.h"
#include "mqtt-config.h"
#include "log.h"
#include "notify.h"
#include "watch.h"

int kdaemon_new(const struct kdaemon_config *cfg, struct kdaemon **out)
{
	_cleanup_(kdaemon_freep) struct kdaemon *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = *cfg;
	d->signal_fd = -1;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		d->section[i] = ksource_section(cfg->sections, (enum kevent_source)i);
	int rc = kloop_new(&d->loop);
	if (rc < 0)
		return rc;
	rc = kdaemon_init(d);
	if (rc < 0)
		return rc;
	rc = kdaemon_history_start(d);
	if (rc < 0)
		return rc;
	*out = TAKE_PTR(d);
	return 0;
}

/* The events dropped at a stop, for the log: the oldest few by name. */
struct dropped_log {
	struct kdaemon *d;
	size_t n;
	struct {
		uint64_t order;
		bool again;		  /* kept or handed back: the next start has it again */
		char line[1536];	  /* an object of 1024 bytes and the rest */
	} oldest[KDAEMON_STOP_LOG_NAMED]; /* by order, oldest first */
};

/* Hands a dropped event back to its source: whether the source's next
 * start handles it.  Not a debounced run: its event was handled, and its
 * other rules may have run. */
static bool hand_back(struct kdaemon *d, const struct kjob *job)
{
	if (job->deferred || job->ev->injected)
		return false;
	struct ksource *s = d->source[job->ev->source];
	return s && s->unhandled && s->unhandled(s, job->ev) == 0;
}

static void on_dropped(const struct kjob *job, void *userdata)
{
	struct dropped_log *l = userdata;
	const struct kevent *ev = job->ev;
	/* in the journal: kept there, and the next start handles it again (a
	 * debounced run: waits again, and runs) */
	bool kept = ev->journal_ref != 0;
	bool again = kept || hand_back(l->d, job);
	kdaemon_fate(l->d, ev->source, NULL, kept ? KFATE_KEPT : KFATE_DROPPED);
	kdaemon_ctl_dropped(l->d->ctl, job);
	l->d->refetch[ev->source] += again && !kept;
	size_t i = l->n;
	if (i == ARRAY_SIZE(l->oldest)) {
		if (job->order > l->oldest[i - 1].order)
			return;
		i--;
	} else {
		l->n++;
	}
	for (; i > 0 && l->oldest[i - 1].order > job->order; i--)
		l->oldest[i] = l->oldest[i - 1];
	l->oldest[i].order = job->order;
	l->oldest[i].again = again;
	snprintf(l->oldest[i].line, sizeof(l->oldest[i].line),
		 "%s seq %" PRIu64 ": %s %s %s (rule %s%s)%s", kevent_source_name(ev->source),
		 ev->seqnum, kevent_type_name(ev->type), ev->object, ev->signal,
		 job->rules[0]->name, job->n_rules > 1 ? " and the rules after it" : "",
		 kept	 ? "; kept in the journal for the next start"
		 : again ? "; the next start fetches it again"
			 : "");
}

/* "socket 4199, kernel 3": a count per source (the events dropped at the
 * stop, those the next start fetches again, those the journal keeps), the
 * sources with none left out; gives their total. */
static uint64_t format_per_source(const uint64_t count[KEVENT_SOURCE_MAX], struct strbuf *sb)
{
	uint64_t total = 0;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		if (!count[i])
			continue;
		strbuf_printf(sb, "%s%s %" PRIu64, total ? ", " : "",
			      kevent_source_name((enum kevent_source)i), count[i]);
		total += count[i];
	}
	return total;
}

void kdaemon_exit(struct kdaemon *d, int sig)
{
	const char *why = sig ? strsignal(sig) : "exit";
	if (d->stopping) {
		log_notice("%s again: still stopping; handlers running: %zu", why,
			   krunner_children(d->runner));
		return;
	}
	notify_service_manager("STOPPING=1");
	d->stopping = true;
	/* the running handlers finish, within their timeouts; nothing else starts */
	ksched_hold(d->sched, true);
	krunner_stop(d->runner);
	kwatch_free(TAKE_PTR(d->watch));
	/* the queue first, each event handed back to its source, so that the
	 * source's stop saves what its next start fetches again */
	struct dropped_log l = {.d = d};
	size_t not_started = ksched_drop_queued(d->sched, on_dropped, &l);
	/* and the debounced runs waiting for quiet, which would fire into a
	 * stopping keventd and be dropped */
	size_t debounced = kdaemon_keep_debounced(d);
	if (debounced)
		log_notice("%s: stopping; debounced runs waiting for quiet, kept in the journal "
			   "for the next start: %zu",
			   why, debounced);
	/* the sources' sockets to the service manager before they close:
	 * what comes meanwhile waits in them for the next start */
	kfdstore_hand_over(d->fdstore);
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (d->source[i] && d->source[i]->stop)
			d->source[i]->stop(d->source[i]);
	kdaemon_ctl_stop(d->ctl);

	_cleanup_strbuf_ struct strbuf per_source = STRBUF_INIT, again = STRBUF_INIT,
				       kept_sb = STRBUF_INIT;
	size_t dropped = (size_t)format_per_source(d->stats.dropped, &per_source);
	uint64_t refetched = format_per_source(d->refetch, &again);
	uint64_t kept = format_per_source(d->stats.kept, &kept_sb);
	if (kept)
		log_notice("%s: stopping; handlers running: %zu; queued events not started, "
			   "kept in the journal for the next start: %" PRIu64 " (%s)",
			   why, krunner_children(d->runner), kept, strbuf_str(&kept_sb));
	if (dropped && refetched)
		log_notice("%s: stopping; handlers running: %zu; queued events not started, "
			   "dropped: %zu (%s); the next start fetches again: %" PRIu64 " (%s)",
			   why, krunner_children(d->runner), dropped, strbuf_str(&per_source),
			   refetched, strbuf_str(&again));
	else if (dropped)
		log_notice("%s: stopping; handlers running: %zu; queued events not started, "
			   "dropped: %zu (%s)",
			   why, krunner_children(d->runner), dropped, strbuf_str(&per_source));
	else if (!kept)
		log_notice("%s: stopping; handlers running: %zu", why, krunner_children(d->runner));
	uint64_t unnamed_again = refetched + kept;
	for (size_t i = 0; i < l.n; i++) {
		log_notice("not run: %s", l.oldest[i].line);
		unnamed_again -= l.oldest[i].again;
	}
	if (not_started > l.n && unnamed_again)
		log_notice("not run: %zu more, not named; the next start handles %" PRIu64
			   " of them again",
			   not_started - l.n, unnamed_again);
	else if (not_started > l.n)
		log_notice("not run: %zu more, not named", not_started - l.n);
	kdaemon_maybe_exit(d);
}

static void on_signal(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kdaemon *d = userdata;
	struct signalfd_siginfo si;
	(void)io;
	(void)events;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP: {
			char state[64];
			snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
				 now_monotonic_ns() / 1000);
			notify_service_manager(state);
			log_info("SIGHUP: reloading rules");
			if (!d->stopping)
				(void)kdaemon_reload(d, NULL);
			notify_service_manager("READY=1");
			break;
		}
		case SIGTERM:
		case SIGINT:
			kdaemon_exit(d, (int)si.ssi_signo);
			break;
		default:
			break;
		}
	}
}

static int setup_signals(struct kdaemon *d)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	d->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->signal_fd < 0)
		return -errno;
	return kloop_add_io(d->loop, d->signal_fd, EPOLLIN, on_signal, d, &d->signal_io);
}

static void on_rules_changed(void *userdata)
{
	log_info("rule directories changed: reloading");
	(void)kdaemon_reload(userdata, NULL);
}

static bool wants(const struct kdaemon *d, enum kevent_source s)
{
	return d->cfg.sources & (1u << s);
}

/* A cgroup per handler run when keventd's cgroup is delegated to it; else
 * the process group, said once, here (keventd(8), CONTAINMENT). */
static void setup_containment(struct kdaemon *d)
{
	_cleanup_free_ char *dir = NULL;
	const char *why = "";
	int rc = kcgroup_find(d->cfg.cgroup_root, &dir, &why);
	if (rc == 0)
		rc = kcgroup_open(dir, (int)getpid(), &d->cgroup, &why);
	if (rc < 0) {
		log_notice("containment: process group (no cgroup per handler run: %s%s%s)", why,
			   rc == -ENOMEM ? "" : ": ", rc == -ENOMEM ? "" : strerror(-rc));
		return;
	}
	unsigned have = kcgroup_controllers(d->cgroup);
	log_info("containment: a cgroup per handler run, under %s (limits: %s%s%s%s)", dir,
		 have & KCGROUP_MEMORY ? "memory_max " : "",
		 have & KCGROUP_PIDS ? "tasks_max " : "", have & KCGROUP_CPU ? "cpu_weight " : "",
		 have ? "" : "none: no controller delegated");
	krunner_set_cgroup(d->runner, d->cgroup);
}

/* The broker of keventd.yaml; returns the source mqtt when it subscribes. */
static struct ksource *start_mqtt(struct kdaemon *d, const struct ksink *sink)
{
	bool wanted = wants(d, KEVENT_SOURCE_MQTT);
	struct ksource *src = kdaemon_mqtt_start(d, wanted ? sink : NULL);
	if (!wanted && d->mqtt && d->cfg.mqtt->n_subscribe)
		log_warning("mqtt: the source mqtt is not in --sources: subscribe is ignored");
	return src;
}

int kdaemon_start(struct kdaemon *d)
{
	/* the descriptors the last run handed over, before anything opens one */
	int rc = kfdstore_new(&d->fdstore);
	if (rc < 0)
		return rc;
	/* the control socket's directory first: when it is the state
	 * directory too (/run/keventd, by default), the group of
	 * --control-group must still reach the socket in it; the user
	 * instance's is the user's alone */
	if (d->cfg.control_path &&
	    (rc = kctl_server_make_dir(d->cfg.control_path, d->cfg.user ? 0700 : KCTL_DIR_MODE)) <
		    0) {
		log_error("cannot listen on %s: %s", d->cfg.control_path, strerror(-rc));
		return rc;
	}
	/* the state directory, keventd's alone, before any state file */
	rc = kdaemon_state_open(d);
	if (rc < 0)
		return rc;
	struct ksink sink = kdaemon_sink(d);
	rc = setup_signals(d);
	if (rc < 0)
		return rc;
	setup_containment(d);
	/* the publisher before the journal hands anything again, so that a
	 * subscriber sees the redelivered events too (and can drop those it
	 * has); it connects, and its source reads, once the loop runs */
	struct ksource *made[KEVENT_SOURCE_MAX] = {0};
	if (d->cfg.mqtt)
		made[KEVENT_SOURCE_MQTT] = start_mqtt(d, &sink);
	/* the condition table, before the journal hands its events again */
	rc = kdaemon_cond_start(d);
	if (rc < 0)
		return rc;
	/* the notifications too: an event handled again finds its delivery
	 * queued, or is sent flagged a retry */
	if (d->cfg.notify && (rc = kdaemon_notify_start(d)) < 0)
		return rc;
	/* a user instance's session: its handlers' environment, and the
	 * notifications shown on its desktop */
	rc = kdaemon_session_start(d);
	if (rc < 0)
		return rc;
	/* the alerts of what the table holds, posted once the loop runs */
	if (d->cfg.alertmanager)
		kdaemon_am_start(d);
	/* the unfinished events of the last run first, before any source reads */
	rc = kdaemon_journal_start(d);
	if (rc < 0)
		return rc;
	rc = kwatch_new(d->loop, d->cfg.rule_dirs, d->cfg.n_rule_dirs, on_rules_changed, d,
			&d->watch);
	if (rc < 0)
		log_warning("cannot watch the rule directories (%s): reload with SIGHUP",
			    strerror(-rc));
	rc = kdaemon_ctl_new(d, d->cfg.control_path, d->cfg.control_gid, &d->ctl);
	if (rc < 0) {
		log_error("cannot listen on %s: %s", d->cfg.control_path, strerror(-rc));
		return rc;
	}
	if (d->cfg.dbus)
		kdaemon_dbus_start(d);
	made[KEVENT_SOURCE_SOCKET] = kdaemon_ctl_source(d->ctl);
	/* the start-up check begins before the sources start: what md and
	 * input report as they start (Initial: yes) confirms a row, it is no
	 * new set */
	kdaemon_cond_settle(d);
	/* the user instances' socket (keventd(8), USER INSTANCE): its failure
	 * is logged, and keventd runs on */
	(void)kdaemon_users_start(d, &sink);
	kdaemon_start_sources(d, &sink, made);
	/* while the last run's events are fed in, the sources wait */
	kdaemon_flow_journaled(d);
	kfdstore_settle(d->fdstore);
	return 0;
}

int kdaemon_run(struct kdaemon *d)
{
	log_info("keventd %s running: %zu rules, control socket %s, max %zu children%s",
		 KEVENT_VERSION, d->rules->n_rules, d->cfg.control_path, d->cfg.max_children,
		 d->cfg.dry_run ? ", dry run" : "");
	notify_service_manager("READY=1");
	int rc = kloop_run(d->loop);
	_cleanup_strbuf_ struct strbuf per_source = STRBUF_INIT, again = STRBUF_INIT,
				       kept_sb = STRBUF_INIT;
	uint64_t dropped = format_per_source(d->stats.dropped, &per_source);
	uint64_t refetched = format_per_source(d->refetch, &again);
	uint64_t kept = format_per_source(d->stats.kept, &kept_sb);
	if (kept)
		log_info("stopped; events kept in the journal for the next start: %" PRIu64 " (%s)",
			 kept, strbuf_str(&kept_sb));
	if (rc < 0)
		log_error("event loop failed: %s", strerror(-rc));
	else if (dropped && refetched)
		log_info("stopped; events dropped, not run: %" PRIu64 " (%s); the next start "
			 "fetches again: %" PRIu64 " (%s)",
			 dropped, strbuf_str(&per_source), refetched, strbuf_str(&again));
	else if (dropped)
		log_info("stopped; events dropped, not run: %" PRIu64 " (%s)", dropped,
			 strbuf_str(&per_source));
	else if (!kept)
		log_info("stopped");
	log_debug("event loop: %" PRIu64 " wakeups", kloop_wakeups(d->loop));
	return rc;
}

void kdaemon_freep(struct kdaemon **d)
{
	kdaemon_free(*d);
}

void kdaemon_free(struct kdaemon *d)
{
	if (!d)
		return;
	kwatch_free(d->watch);
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (d->source[i] && d->source[i]->free)
			d->source[i]->free(d->source[i]);
	kdaemon_ctl_free(d->ctl); /* after the sources: it holds the socket source */
	kdaemon_users_free(d);
	kdaemon_cond_free(d); /* its last write, before the journal goes */
	kdaemon_release(d);
	kdaemon_outputs_free(d);	    /* after the runner, whose last reports they see */
	kdaemon_session_free(d);	    /* after the runner, whose handlers read it */
	kstatedir_free(TAKE_PTR(d->state)); /* after everything that writes there */
	kstatedir_free(TAKE_PTR(d->lib));   /* after the condition table */
	kcgroup_free(d->cgroup);	    /* after the runner, which removes the runs' cgroups */
	kio_free(d->signal_io);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	kloop_free(d->loop);
	kfdstore_free(d->fdstore); /* after the sources, which forget theirs */
	free(d);
}

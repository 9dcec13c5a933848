// SPDX-License-Identifier: GPL-2.0-or-later
/* The daemon's core (daemon.h): intake, matching, observers, flow control,
 * the runner's reports, reload and status.  Its lifecycle, which starts the
 * sources and the control socket that call in here, is daemon-lifecycle.c. */
#include "config.h"
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <string.h>

#include "debounce.h"
#include "fault.h"
#include "journal-rec.h"
#include "journal.h"
#include "mqtt-config.h"
#include "log.h"
#include "statedir.h"

void kdaemon_reject(struct kdaemon *d, enum kevent_source src, const char *why)
{
	d->stats.rejected[src]++;
	if ((unsigned)src < ARRAY_SIZE(d->reject_log))
		klog_throttled(&d->reject_log[src], LOG_WARNING, "%s: rejected input: %s",
			       kevent_source_name(src), why);
}

static int sink_submit(void *userdata, struct kevent *ev)
{
	return kdaemon_submit(userdata, ev);
}

static void sink_reject(void *userdata, enum kevent_source src, const char *why)
{
	kdaemon_reject(userdata, src, why);
}

static void sink_overrun(void *userdata, enum kevent_source src)
{
	struct kdaemon *d = userdata;
	d->stats.overruns[src]++;
	if ((unsigned)src < ARRAY_SIZE(d->overrun_log))
		klog_throttled(&d->overrun_log[src], LOG_WARNING,
			       "%s: receive buffer overrun (ENOBUFS): events were lost",
			       kevent_source_name(src));
}

static void sink_lost(void *userdata, enum kevent_source src, uint64_t n)
{
	struct kdaemon *d = userdata;
	d->stats.lost[src] += n;
}

static void sink_truncated(void *userdata, enum kevent_source src)
{
	struct kdaemon *d = userdata;
	d->stats.truncated[src]++;
}

static size_t sink_room(void *userdata, enum kevent_source src)
{
	return kdaemon_room(userdata, src);
}

static const struct ksink_ops sink_ops = {
	.submit = sink_submit,
	.reject = sink_reject,
	.overrun = sink_overrun,
	.lost = sink_lost,
	.truncated = sink_truncated,
	.room = sink_room,
};

struct ksink kdaemon_sink(struct kdaemon *d)
{
	return (struct ksink){
		.loop = d->loop,
		.ops = &sink_ops,
		.userdata = d,
		.state = d->state,
		.fdstore = d->fdstore,
	};
}

size_t kdaemon_share(const struct kdaemon_config *cfg)
{
	unsigned on = cfg->sources & ((1u << KEVENT_SOURCE_MAX) - 1);
	if (!cfg->mqtt || !cfg->mqtt->n_subscribe) /* no subscriptions: nothing comes */
		on &= ~(1u << KEVENT_SOURCE_MQTT);
	size_t n = (size_t)__builtin_popcount(on);
	size_t share = cfg->queue_size / (n ? n : 1);
	return share ? share : 1;
}

size_t kdaemon_room(const struct kdaemon *d, enum kevent_source src)
{
	if (d->stopping || (unsigned)src >= KEVENT_SOURCE_MAX || d->paused[src])
		return 0;
	return ksched_room(d->sched, src);
}

/* Pauses src when its share of the queue is full, resumes it when its
 * share has room again; the other sources read on either way.  resumed:
 * why a source resumes when it is not its share (the replay's end), or
 * NULL. */
static void update_flow_why(struct kdaemon *d, enum kevent_source src, const char *resumed)
{
	bool pause;
	if (d->stopping || (unsigned)src >= KEVENT_SOURCE_MAX)
		return;
	/* a full journal pauses every source it holds, never forgetting; so
	 * does the replay of the last run's events, which go first */
	bool full = (d->journal_full || kjournal_replaying(d->journal)) && kdaemon_journaled(src);
	if (!d->paused[src] && (ksched_full(d->sched, src) || full))
		pause = true;
	else if (d->paused[src] && ksched_has_room(d->sched, src) && !full)
		pause = false;
	else
		return;
	d->paused[src] = pause;
	const char *name = kevent_source_name(src);
	if (pause && full && !d->journal_full) {
		log_info("%s: the last run's events are handled first: pausing it", name);
	} else if (pause && full) {
		d->stats.paused[src]++;
		log_notice("%s: the journal is full: pausing it", name);
	} else if (pause) {
		d->stats.paused[src]++;
		log_notice("%s: its share of the queue is full (%zu events): pausing it", name,
			   ksched_pending_of(d->sched, src));
	} else if (resumed) {
		log_info("%s: %s: resuming it", name, resumed);
	} else {
		log_notice("%s: its share of the queue has room again: resuming it", name);
	}
	struct ksource *s = d->source[src];
	if (s && s->pause)
		s->pause(s, pause);
}

static void update_flow(struct kdaemon *d, enum kevent_source src)
{
	update_flow_why(d, src, NULL);
}

static void flow_journaled(struct kdaemon *d, const char *resumed)
{
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (kdaemon_journaled((enum kevent_source)i))
			update_flow_why(d, (enum kevent_source)i, resumed);
}

void kdaemon_flow_journaled(struct kdaemon *d)
{
	flow_journaled(d, NULL);
}

/* Pauses the journaled sources when the journal is full, and resumes
 * them once it has room again. */
static void journal_flow(struct kdaemon *d)
{
	bool full = kjournal_full(d->journal);
	if (full == d->journal_full)
		return;
	d->journal_full = full;
	if (full)
		d->stats.journal_full++;
	else
		log_notice("the journal has room again");
	kdaemon_flow_journaled(d);
}

void kdaemon_journal_room(struct kdaemon *d)
{
	journal_flow(d);
}

void kdaemon_fate(struct kdaemon *d, enum kevent_source src, const struct kevent *ev,
		  enum kfate fate)
{
	bool tell = false, retire = false;
	switch (fate) {
	case KFATE_HANDLED:
	case KFATE_NO_RUN:
		d->stats.handled++;
		d->stats.handled_by[src]++;
		tell = retire = true;
		break;
	case KFATE_RATELIMITED:
		d->stats.ratelimited++;
		d->stats.ratelimited_by[src]++;
		tell = retire = true;
		break;
	case KFATE_WAITS:
		tell = retire = true;
		break;
	case KFATE_FIRED:
		d->stats.handled++;
		d->stats.handled_by[src]++;
		break;
	case KFATE_DEBOUNCED:
		d->stats.events_debounced++;
		d->stats.debounced_by[src]++;
		break;
	case KFATE_FAILED:
		d->stats.handled++;
		d->stats.handled_by[src]++;
		d->stats.failures++;
		break;
	case KFATE_DROPPED:
		d->stats.dropped[src]++;
		break;
	case KFATE_KEPT:
		d->stats.kept[src]++;
		break;
	}
	if (retire && ev && ev->journal_ref) {
		kjournal_retire(d->journal, ev->journal_ref, fate == KFATE_NO_RUN);
		journal_flow(d);
	}
	if (!tell || !ev || ev->injected)
		return; /* an injected event is not its source's to track */
	struct ksource *s = d->source[ev->source];
	if (s && s->handled)
		s->handled(s, ev);
}

void kdaemon_maybe_exit(struct kdaemon *d)
{
	if (d->stopping && krunner_children(d->runner) == 0 && ksched_pending(d->sched) == 0)
		kloop_exit(d->loop, 0);
}

/* The rules an event matched: all of them (for the observers), those
 * that run now and those that wait for quiet (debounce:).  Each grows as
 * needed: no matched rule is ever left out. */
struct rulevec {
	const struct krule **v;
	size_t n, cap;
};

struct collect {
	struct kdaemon *d;
	const struct kevent *ev;
	struct rulevec all, run, deb;
	bool oom;
	bool want_ids; /* the event goes into the journal: its rules are named */
	size_t pos;    /* the next rule's place in the run list (a record naming no rules) */
	uint32_t ids[KJREC_DONE_BITS]; /* the rules that run something, named */
	uint8_t n_ids;
	size_t matches; /* the rules matched */
	int journal_rc; /* the append's: 0 or -errno */
};

static bool rulevec_add(struct rulevec *rv, const struct krule *r)
{
	if (rv->n == rv->cap) {
		size_t cap = rv->cap ? rv->cap * 2 : 8;
		const struct krule **v = realloc(rv->v, cap * sizeof(*v));
		if (!v)
			return false;
		rv->v = v;
		rv->cap = cap;
	}
	rv->v[rv->n++] = r;
	return true;
}

static void collect_release(struct collect *c)
{
	free(c->all.v);
	free(c->run.v);
	free(c->deb.v);
}

static uint32_t rule_id(const struct krule *r)
{
	return kjrec_rule_id(r->file->name, r->name);
}

/* The place of r among the rules ev's journal record names, or -1: a
 * rule the record does not name (it came with a reload), or a record
 * naming none. */
static int record_place(const struct kevent *ev, const struct krule *r)
{
	if (!ev->journal_ids)
		return -1;
	uint32_t id = rule_id(r);
	for (int i = 0; i < ev->n_journal_ids; i++)
		if (ev->journal_ids[i] == id)
			return i;
	return -1;
}

/* Whether r, which runs something, had its run (or its wait ended) before
 * a restart: its bit in the record, found by its name; in a record of an
 * older keventd by its place in the run list, where debounced rules have
 * none. */
static bool rule_done(struct collect *c, const struct krule *r)
{
	uint32_t done = c->ev->journal_done;
	if (c->ev->journal_ids) {
		int place = record_place(c->ev, r);
		return place >= 0 && (done & (1u << place));
	}
	if (r->debounce_ms)
		return false;
	size_t pos = c->pos++;
	return pos < KJREC_DONE_BITS && (done & (1u << pos));
}

static bool collect_match(const struct krule *r, void *userdata)
{
	struct collect *c = userdata;
	struct krule_counters *rc = kstats_rule(&c->d->stats, r);
	if (rc)
		rc->matched++;
	bool ok = rulevec_add(&c->all, r);
	if (ok && krule_runs_something(r)) {
		if (c->want_ids && c->n_ids < KJREC_DONE_BITS)
			c->ids[c->n_ids++] = rule_id(r);
		/* its run ended before the restart: not again */
		if (!rule_done(c, r))
			ok = rulevec_add(r->debounce_ms ? &c->deb : &c->run, r);
	}
	c->oom = !ok;
	return ok;
}

/* Appends ev to the journal, naming the rules of c that run something.
 * A record naming none has its done bits read as places in its run list,
 * as an older keventd wrote them: for an event that runs nothing (no
 * bits) that is the same, so it costs no list; without the memory for
 * one, a reload before a restart may skip or repeat a rule. */
static int journal_append(struct kdaemon *d, struct kevent *ev, const struct collect *c)
{
	if (c->n_ids)
		ev->journal_ids = malloc(c->n_ids * sizeof(*ev->journal_ids));
	if (ev->journal_ids) {
		memcpy(ev->journal_ids, c->ids, c->n_ids * sizeof(*ev->journal_ids));
		ev->n_journal_ids = c->n_ids;
	}
	int rc = kjournal_append(d->journal, ev);
	if (rc == 0)
		journal_flow(d);
	return rc;
}

/*
 * An event whose only runs are debounced (keventd.rules(5), debounce:) is
 * not done when it comes in: it counts as handled once one of its waiting
 * runs fires, and as debounced once every one was replaced by a later
 * event, so that each event received ends in exactly one of handled,
 * rate-limited and debounced (or dropped at a stop).  Its waiting runs
 * share this tag.
 */
struct debounce_wait {
	size_t waiting;		/* runs still waiting */
	enum kevent_source src; /* its event's, whose account it keeps */
	bool fired;		/* one of them fired: counted handled */
	bool dropped;		/* one of them was dropped at a stop: counted so */
};

enum wait_end {
	WAIT_FIRED,    /* its run is queued (or could not be, for lack of memory) */
	WAIT_REPLACED, /* a later event replaced it */
	WAIT_DROPPED,  /* it fired while keventd was stopping: dropped, counted so */
	WAIT_FREED,    /* still waiting when keventd was done: nothing counts it */
	WAIT_KEPT,     /* still waiting at a stop: kept in the journal */
};

/* One waiting run of w is over. */
static void debounce_wait_end(struct kdaemon *d, struct debounce_wait *w, enum wait_end end)
{
	if (!w)
		return; /* the event had other runs: it is counted with them */
	enum kevent_source src = w->src;
	bool counted = w->fired || w->dropped;
	if (end == WAIT_FIRED && !counted) {
		w->fired = true;
		kdaemon_fate(d, src, NULL, KFATE_FIRED);
	} else if (end == WAIT_DROPPED && !counted) {
		w->dropped = true;
		kdaemon_fate(d, src, NULL, KFATE_DROPPED);
	} else if (end == WAIT_KEPT && !counted) {
		w->dropped = true;
		kdaemon_fate(d, src, NULL, KFATE_KEPT);
	} else if (end == WAIT_FREED) {
		w->dropped = true;
	}
	if (--w->waiting)
		return;
	if (!w->fired && !w->dropped)
		kdaemon_fate(d, src, NULL, KFATE_DEBOUNCED);
	free(w);
}

/*
 * A debounced run waiting, the debounce table's tag: how its event is
 * counted (w), and the journal record that keeps the run across a kill
 * (ref, 0: none), held (kjournal_hold()) until the run has ended or a
 * later event of the same key that the journal has replaced it, with the
 * record's done bit for the rule (0: the record does not name it).  A
 * later event the journal does not have takes the record over: the run,
 * now of that event, still needs it.
 */
struct debounce_run {
	struct debounce_wait *w;
	uint64_t ref;
	uint32_t bit;
};

/* Holds ev for r's quiet time, with the tag w (NULL: the event has other
 * runs); the run it replaces is counted debounced. */
static void debounce(struct kdaemon *d, const struct krule *r, const struct kevent *ev,
		     struct debounce_wait *w)
{
	struct debounce_run *t = calloc(1, sizeof(*t));
	int rc = -ENOMEM;
	if (t) {
		t->w = w;
		if (ev->journal_ref && kjournal_hold(d->journal, ev->journal_ref) == 0) {
			int place = record_place(ev, r);
			t->ref = ev->journal_ref;
			t->bit = place >= 0 ? 1u << place : 0;
		}
		d->debounce_pushing = t;
		rc = kdebounce_push(d->debounce, r, ev, d->serial, t, now_monotonic_ns());
		d->debounce_pushing = NULL;
	}
	if (rc < 0 && t) {
		if (t->ref) /* its hold */
			kjournal_retire(d->journal, t->ref, false);
		free(t);
	}
	if (rc == 1) {
		struct krule_counters *rc_ = kstats_rule(&d->stats, r);
		d->stats.debounced++;
		if (rc_)
			rc_->debounced++;
	} else if (rc < 0) {
		log_error("out of memory debouncing rule %s for %s %s", r->name, ev->object,
			  ev->signal);
		d->stats.failures++;
		/* done, with a failure, as a run that could not start */
		debounce_wait_end(d, w, WAIT_FIRED);
	}
}

/* A debounced run whose quiet time is over: a job of its own. */
static void debounce_fire(void *userdata, const struct krule *r, struct kevent *ev, uint64_t serial,
			  void *tag_)
{
	struct kdaemon *d = userdata;
	struct kjob *job = NULL;
	enum kevent_source src = ev->source;
	struct debounce_run *t = tag_;
	struct debounce_wait *tag = t->w;
	/* a deferred job's event: the record that keeps the run, and the bit
	 * the run's end sets there (on_job_done()) */
	ev->journal_ref = t->ref;
	ev->journal_done = t->bit;
	free(t);
	if (d->stopping) {
		/* a record keeps it: the next start runs it */
		bool kept = ev->journal_ref != 0;
		debounce_wait_end(d, tag, kept ? WAIT_KEPT : WAIT_DROPPED);
		if (!tag)
			kdaemon_fate(d, src, NULL, kept ? KFATE_KEPT : KFATE_DROPPED);
		kevent_free(ev);
		return;
	}
	debounce_wait_end(d, tag, WAIT_FIRED);
	if (kjob_new(ev, &r, 1, &job) < 0) {
		log_error("out of memory running debounced rule %s", r->name);
		d->stats.failures++;
		kevent_free(ev);
		return;
	}
	job->serial = serial;
	job->deferred = true;
	if (ksched_submit(d->sched, job) < 0) {
		d->stats.failures++;
		return;
	}
	update_flow(d, src);
}

static void debounce_gone(void *userdata, void *tag, bool replaced)
{
	struct kdaemon *d = userdata;
	struct debounce_run *t = tag, *by = d->debounce_pushing;
	if (replaced && t->ref && by && !by->ref) {
		/* the later event is not in the journal: this record keeps the run */
		by->ref = t->ref;
		by->bit = t->bit;
	} else if (replaced && t->ref) {
		/* the run is the later event's, whose record is written first */
		kjournal_settle(d->journal, t->ref, t->bit);
	}
	debounce_wait_end(d, t->w, replaced ? WAIT_REPLACED : WAIT_FREED);
	free(t);
}

static const struct kdebounce_ops debounce_ops = {.fire = debounce_fire, .gone = debounce_gone};

/* A debounced run still waiting at a stop: its record stays live, so
 * the next start waits the quiet time again and runs it.  A run no record
 * keeps (its event could not be journaled) has its event go into the
 * journal now, naming no rules, with every run of its run list marked
 * done, for the same. */
static void keep_waiting(void *userdata, const struct krule *r, struct kevent *ev, void *tag)
{
	struct kdaemon *d = userdata;
	struct debounce_run *t = tag;
	enum kevent_source src = ev->source;
	(void)r;
	bool kept = t->ref != 0;
	if (!kept && d->journal && kdaemon_journaled(src) && kjournal_append(d->journal, ev) == 0) {
		ev->journal_done = (1u << KJREC_DONE_BITS) - 1;
		kjournal_progress(d->journal, ev->journal_ref, ev->journal_done);
		kept = true;
	}
	d->debounce_kept += kept;
	debounce_wait_end(d, t->w, kept ? WAIT_KEPT : WAIT_FREED);
	free(t);
	kevent_free(ev);
}

size_t kdaemon_keep_debounced(struct kdaemon *d)
{
	d->debounce_kept = 0;
	kdebounce_drain(d->debounce, keep_waiting, d);
	kdaemon_journal_flush(d);
	return d->debounce_kept;
}

/* Holds ev for each debounced rule it matched.  Returns whether its
 * waiting runs count it (it has no other run), so that it is not counted
 * now. */
static bool debounce_all(struct kdaemon *d, const struct collect *c, const struct kevent *ev)
{
	if (d->stopping || c->oom || !c->deb.n)
		return false;
	/* NULL (no memory): counted now, as an event with nothing to run */
	struct debounce_wait *w = c->run.n ? NULL : calloc(1, sizeof(*w));
	if (w) {
		w->waiting = c->deb.n;
		w->src = ev->source;
	}
	bool waits = w; /* w may be freed by the pushes (each fired at once, or none kept) */
	for (size_t i = 0; i < c->deb.n; i++)
		debounce(d, c->deb.v[i], ev, w);
	return waits;
}

/* What taking an event in does before anything is done about it: it is
 * counted received, matched, and appended to the journal (c->journal_rc:
 * how that went). */
static void accept_event(struct kdaemon *d, struct kevent *ev, struct collect *c)
{
	enum kevent_source src = ev->source;
	*c = (struct collect){.d = d,
			      .ev = ev,
			      .want_ids = d->journal && !ev->journal_ref && kdaemon_journaled(src)};
	kfault("accepted");
	/* what numbered it, with its seqnum its name across restarts (the
	 * MQTT message's "instance"): kevent.ko's instance, the sending
	 * keventd's, or this keventd's, kept in the journal with it */
	if (!ev->instance && src != KEVENT_SOURCE_KERNEL && src != KEVENT_SOURCE_MQTT)
		ev->instance = kinstance_id();
	d->stats.received[src]++;
	if (ev->recovered)
		d->stats.recovered[src]++;
	if (ev->redelivered)
		d->stats.redelivered[src]++;
	else if (ev->synthetic)
		d->stats.resynced[src]++;
	if (ev->redelivered && src == KEVENT_SOURCE_SOCKET && ev->seqnum > d->socket_seq_replayed)
		d->socket_seq_replayed = ev->seqnum;
	c->matches = kruleset_match(d->rules, ev, collect_match, c);
	if (c->matches)
		d->stats.matched++;
	/* journaled before anything is done about it, with the rules it
	 * matched: the record is written, with the others of this round,
	 * before any of them is acknowledged, seen or run
	 * (kdaemon_journal_flush()), so a keventd killed after that handles
	 * it again at its next start */
	if (c->want_ids)
		c->journal_rc = journal_append(d, ev, c);
}

/* An event of the control socket whose record the journal could not
 * write (or make): refused, never received (its counts undone), counted
 * as refused; its record, if any, is written done. */
static void refuse_event(struct kdaemon *d, struct kevent *ev, struct collect *c)
{
	d->stats.received[ev->source]--;
	d->stats.matched -= c->matches > 0;
	for (size_t i = 0; i < c->all.n; i++) {
		struct krule_counters *rc = kstats_rule(&d->stats, c->all.v[i]);
		if (rc)
			rc->matched--;
	}
	if (ev->journal_ref)
		kjournal_retire(d->journal, ev->journal_ref, false);
	d->stats.journal_refused++;
	journal_flow(d);
	kevent_free(ev);
	collect_release(c);
}

/* Everything else: seen, debounced, queued or finished. */
static int commit_event(struct kdaemon *d, struct kevent *ev, struct collect *c)
{
	enum kevent_source src = ev->source;
	size_t matches = c->matches;
	d->serial++;
	const struct kobs_event rec = {.ev = ev,
				       .serial = d->serial,
				       .rules = c->all.v,
				       .n_rules = c->all.n,
				       .ruleset = d->rules,
				       .generation = d->generation,
				       .stopping = d->stopping};
	for (size_t i = 0; i < d->n_observers; i++)
		if (d->observers[i].event)
			d->observers[i].event(d->observers[i].userdata, &rec);
	if (klog_enabled(LOG_DEBUG))
		log_debug("event %s seq %llu %s %s %s: %zu rule(s) matched",
			  kevent_source_name(ev->source), (unsigned long long)ev->seqnum,
			  kevent_type_name(ev->type), ev->object, ev->signal, matches);
	bool waits = debounce_all(d, c, ev);
	int rc = 0;
	struct kjob *job = NULL;
	if (c->oom) {
		/* accepted but cannot be queued: handled, with a failure */
		log_error("out of memory matching event %s %s", ev->object, ev->signal);
		kdaemon_fate(d, src, ev, KFATE_FAILED);
		rc = -ENOMEM;
	} else if (!c->run.n) {
		kdaemon_fate(d, src, ev, waits ? KFATE_WAITS : KFATE_NO_RUN);
	} else if (d->stopping) {
		/* nothing starts any more: what came in on the way out is kept or
		 * dropped as the queue was, and counted in the last line of the log */
		kdaemon_fate(d, src, ev, ev->journal_ref ? KFATE_KEPT : KFATE_DROPPED);
	} else if ((rc = kjob_new(ev, c->run.v, c->run.n, &job)) < 0) {
		kdaemon_fate(d, src, ev, KFATE_FAILED);
	} else {
		collect_release(c);
		job->serial = d->serial;
		rc = ksched_submit(d->sched, job); /* the job, and ev, are the scheduler's */
		if (rc < 0) {
			kdaemon_fate(d, src, NULL, KFATE_FAILED);
			return rc;
		}
		update_flow(d, src);
		return 0;
	}
	kevent_free(ev);
	collect_release(c);
	return rc;
}

struct kstaged {
	struct kevent *ev;
	struct collect c;
};

int kdaemon_accept(struct kdaemon *d, struct kevent *ev, struct kstaged **out)
{
	struct kstaged *st = calloc(1, sizeof(*st));
	if (!st) {
		kevent_free(ev);
		return -ENOMEM;
	}
	st->ev = ev;
	accept_event(d, ev, &st->c);
	st->c.ev = ev;
	*out = st;
	return 0;
}

int kdaemon_staged_written(const struct kdaemon *d, const struct kstaged *st)
{
	if (!st->c.want_ids)
		return 0; /* not journaled: nothing to wait for */
	if (st->c.journal_rc < 0)
		return st->c.journal_rc;
	if (kjournal_pending_ref(d->journal, st->ev->journal_ref))
		return kjournal_failing(d->journal) ? kjournal_failing(d->journal) : -EAGAIN;
	return 0;
}

int kdaemon_commit(struct kdaemon *d, struct kstaged *st)
{
	struct kstaged s = *st;
	free(st);
	s.c.ev = s.ev;
	int rc = commit_event(d, s.ev, &s.c);
	if (d->cond_hooks)
		d->cond_hooks->committed(d);
	return rc;
}

void kdaemon_refuse(struct kdaemon *d, struct kstaged *st)
{
	refuse_event(d, st->ev, &st->c);
	free(st);
}

int kdaemon_submit(struct kdaemon *d, struct kevent *ev)
{
	struct collect c;
	accept_event(d, ev, &c);
	/* an event of the control socket is answered "ok" only once the
	 * journal holds it: when it cannot be written, it is refused */
	if (c.want_ids && ev->source == KEVENT_SOURCE_SOCKET) {
		int rc = c.journal_rc;
		if (rc == 0 && (rc = kjournal_flush(d->journal)) == 0)
			kfault("journaled");
		if (rc < 0) {
			refuse_event(d, ev, &c);
			return rc;
		}
	}
	int rc = commit_event(d, ev, &c);
	if (d->cond_hooks) /* the condition events it made (cond/daemon-cond.h) */
		d->cond_hooks->committed(d);
	return rc;
}

static bool has_file(const struct kruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->n_files; i++)
		if (strcmp(rs->files[i]->name, name) == 0)
			return true;
	return false;
}

/* A transient rule needs systemd: where it is not the service manager,
 * such a rule is an error at load, with its place, and never matches; the
 * other rules of its file load. */
static void refuse_transient(struct kruleset *rs, struct kdiags *diags)
{
	bool can = krunner_units_available();
	for (size_t i = 0; i < rs->n_files; i++)
		for (size_t j = 0; j < rs->files[i]->n_rules; j++) {
			struct krule *r = &rs->files[i]->rules[j];
			if (!r->transient)
				continue;
			r->refused = !can;
			if (!can)
				kdiags_add(
					diags, r->file->path, r->line, r->col,
					"rule %s: '%s' needs systemd, which is not "
					"the service manager here (no /run/systemd/system%s): the "
					"rule is not loaded",
					r->name, r->session ? "session: active" : "transient: true",
					KEVENT_DBUS ? "" : "; keventd is built without sd-bus");
		}
}

int kdaemon_reload(struct kdaemon *d, struct strbuf *report)
{
	struct kdiags diags = {0};
	struct kchanges changes = {0};
	struct kruleset *rs = NULL;
	if (d->resolve_staged) /* they hold the rules they matched */
		d->resolve_staged(d->resolve_userdata);
	int rc = kruleset_load(d->cfg.rule_dirs, d->cfg.n_rule_dirs, d->cfg.trust, d->rules, &rs,
			       &diags, &changes);
	d->stats.reloads++;
	if (rc < 0) {
		d->stats.reload_errors++;
		log_error("reloading rules failed: %s; keeping the current rules", strerror(-rc));
		if (report)
			strbuf_printf(report, "reload failed: %s\n", strerror(-rc));
		kdiags_free(&diags);
		kchanges_free(&changes);
		return rc;
	}
	refuse_transient(rs, &diags);
	if (diags.n)
		d->stats.reload_errors++;
	kdiags_report(&diags, report);
	for (size_t i = 0; i < changes.n; i++) {
		const struct kchange *ch = &changes.v[i];
		const char *what = kchange_kind_name(ch->kind);
		if (ch->kind == KCHANGE_BROKEN)
			what = has_file(rs, ch->name) ? "broken, keeping its last good version"
						      : "broken, not loaded";
		log_info("rules: %s: %s", ch->name, what);
		if (report) {
			strbuf_put_escaped(report, ch->name);
			strbuf_printf(report, ": %s\n", what);
		}
	}
	if (report && !changes.n)
		strbuf_puts(report, "no changes\n");
	if (report)
		strbuf_printf(report, "%zu rules in %zu files\n", rs->n_rules, rs->n_files);
	log_info("rules loaded: %zu rules in %zu files", rs->n_rules, rs->n_files);
	/* queued jobs hold references to their files, so the old set can go now */
	kruleset_free(d->rules);
	d->rules = rs;
	d->generation++;
	if (d->cond_hooks)
		d->cond_hooks->reloaded(d);
	kstats_prune(&d->stats, rs);
	kdiags_free(&diags);
	kchanges_free(&changes);
	/* parsing leaves the heap full of freed YAML trees and file buffers,
	 * between the rules that stay: give those pages back (about 1 MB per
	 * 10,000 rules) */
	malloc_trim(0);
	/* keventd.yaml's tracepoints and fs: change without a restart too */
	kdaemon_reload_config(d, report);
	return 0;
}

void kdaemon_status_extra(struct kdaemon *d, struct kstatus_extra *out)
{
	*out = (struct kstatus_extra){
		.pending = ksched_pending(d->sched),
		.running = ksched_running(d->sched),
		.max_children = d->cfg.max_children,
		.queue_size = d->cfg.queue_size,
		.cgroup = d->cgroup != NULL,
		.process_group = d->cgroup == NULL,
		.mqtt_off = true,
		.mqtt_publishing_text = "off (no broker)",
	};
	struct kjournal_status js;
	kjournal_status(d->journal, &js);
	out->journal_bytes = js.bytes;
	out->journal_live = js.live;
	out->journal_corrupt = js.corrupt;
	out->journal_writes = js.writes;
	out->journal_full = d->journal_full;
	int failing = kjournal_failing(d->journal);
	out->journal_failing = failing ? strerror(-failing) : NULL;
	out->journal_failing_flag = failing != 0;
	for (size_t i = 0; i < d->n_observers; i++)
		if (d->observers[i].status)
			d->observers[i].status(d->observers[i].userdata, out);
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		out->source_pending[i] = ksched_pending_of(d->sched, (enum kevent_source)i);
		out->source_share[i] = ksched_share(d->sched);
		out->source_paused[i] = d->paused[i];
		out->paused |= d->paused[i];
	}
}

void kdaemon_status(struct kdaemon *d, enum kstatus_format format, struct strbuf *out)
{
	struct kstatus_extra x;
	kdaemon_status_extra(d, &x);
	if (format == KSTATUS_JSON)
		kstats_render_json(&d->stats, d->rules, &x, out);
	else if (format == KSTATUS_PROMETHEUS)
		kstats_render_prometheus(&d->stats, d->rules, &x, out);
	else
		kstats_render_text(&d->stats, d->rules, &x, out);
}

int kdaemon_observe(struct kdaemon *d, const struct kobserver *o)
{
	if (d->n_observers == ARRAY_SIZE(d->observers)) {
		d->stats.observers_refused++;
		log_error("%s: no room for another observer (%d): it is told nothing", o->name,
			  KEVENT_MAX_OBSERVERS);
		return -ENOSPC;
	}
	d->observers[d->n_observers++] = *o;
	return 0;
}

/* A run's step, counted in s and in the rule's counters rc. */
static void count_run(struct kstats *s, struct krule_counters *rc, const struct krun_report *rep)
{
	switch (rep->outcome) {
	case KRUN_STARTED:
		s->runs++;
		rc->runs++;
		s->transient += rep->unit != NULL;
		break;
	case KRUN_DRY_RUN:
		s->runs++;
		rc->runs++;
		s->dry_runs++;
		break;
	case KRUN_START_FAILED:
		s->runs++;
		rc->runs++;
		s->failures++;
		rc->failures++;
		break;
	case KRUN_EXITED:
	case KRUN_KILLED:
		if (rep->outcome == KRUN_KILLED || rep->status != 0) {
			s->failures++;
			rc->failures++;
		}
		if (rep->timed_out) {
			s->timeouts++;
			rc->timeouts++;
		}
		s->output_dropped_bytes += rep->output_dropped;
		s->oom_kills += rep->oom_kills > 0;
		break;
	case KRUN_SKIPPED:
		s->session_skipped++;
		break;
	case KRUN_RATELIMITED:
		s->runs_ratelimited++;
		rc->ratelimited++;
		s->runs_ratelimit_full += rep->table_full;
		break;
	}
}

/* A run of a job of several rules is over: the journal says so, so that
 * a restart before the job's end runs only the rules after it; so too
 * for a job of any size while debounced runs of its event hold its record
 * past the job's end.  The rule's bit is found by its name, or, in a
 * record naming no rules, is its place among those not done. */
static void journal_progress(struct kdaemon *d, const struct krun_report *rep)
{
	const struct kjob *job = rep->job;
	/* a handler's start is not its end (a transient unit's is, for the job) */
	if (!job || job->deferred || !job->ev->journal_ref ||
	    (rep->outcome == KRUN_STARTED && !rep->unit))
		return;
	size_t j = 0;
	while (j < job->n_rules && job->rules[j] != rep->rule)
		j++;
	struct kevent *ev = job->ev;
	if (j + 1 >= job->n_rules && !kjournal_held(d->journal, ev->journal_ref))
		return; /* the last: the job's end retires the event */
	if (ev->journal_ids) {
		int place = record_place(ev, rep->rule);
		if (place >= 0) {
			ev->journal_done |= 1u << place;
			kjournal_progress(d->journal, ev->journal_ref, ev->journal_done);
		}
		return;
	}
	for (size_t pos = 0, k = 0; pos < KJREC_DONE_BITS; pos++) {
		if (ev->journal_done & (1u << pos))
			continue;
		if (k++ == j) {
			ev->journal_done |= 1u << pos;
			kjournal_progress(d->journal, ev->journal_ref, ev->journal_done);
			return;
		}
	}
}

/* The runner's reports, a transient unit's end included: counted, and
 * told to the observers. */
static void on_run_report(void *userdata, const struct krun_report *rep)
{
	struct kdaemon *d = userdata;
	struct krule_counters *rc = kstats_rule(&d->stats, rep->rule);
	struct krule_counters none = {0};
	for (size_t i = 0; i < d->n_observers; i++)
		if (d->observers[i].report)
			d->observers[i].report(d->observers[i].userdata, rep->serial, rep);
	count_run(&d->stats, rc ? rc : &none, rep);
	journal_progress(d, rep);
}

static void on_job_done(void *userdata, struct kjob *job)
{
	struct kdaemon *d = userdata;
	enum kevent_source src = job->ev->source;
	kfault("exited");
	if (job->not_run)
		log_notice("stopping: rule %s%s not run for seq %" PRIu64 " (%s %s)",
			   job->rules[job->n_rules - job->not_run]->name,
			   job->not_run > 1 ? " and the rules after it" : "", job->ev->seqnum,
			   job->ev->object, job->ev->signal);
	/* a debounced run's event was counted when it came in, or when this run
	 * fired (debounce_wait_end()), and its source was told when it came in */
	if (job->deferred && !job->not_run && job->ev->journal_ref) {
		/* a debounced run's end: its bit, and its hold on the record */
		kjournal_progress(d->journal, job->ev->journal_ref, job->ev->journal_done);
		kjournal_retire(d->journal, job->ev->journal_ref, false);
		journal_flow(d);
	}
	if (!job->deferred && job->not_run && job->ev->journal_ref)
		/* cut short by the stop: the journal keeps it, and the next
		 * start handles the whole event again */
		kdaemon_fate(d, src, job->ev, KFATE_KEPT);
	else if (!job->deferred)
		kdaemon_fate(d, src, job->ev,
			     job->runs == 0 && job->suppressed > 0 ? KFATE_RATELIMITED
								   : KFATE_HANDLED);
	for (size_t i = 0; i < d->n_observers; i++)
		if (d->observers[i].done)
			d->observers[i].done(d->observers[i].userdata, job);
	ksched_done(d->sched, job);
	update_flow(d, src);
	kdaemon_maybe_exit(d);
}

static int spawn_handler(void *userdata, const struct kplan *plan, const struct krule *r,
			 struct kproc *p, const char **what)
{
	struct kdaemon *d = userdata;
	int rc = d->cfg.spawn ? d->cfg.spawn(d->cfg.spawn_userdata, plan, r, p, what)
			      : kexec_spawn(plan, r, p, what);
	if (rc >= 0)
		kfault("spawned");
	return rc;
}

static const struct krunner_ops runner_ops = {
	.spawn = spawn_handler,
	.report = on_run_report,
	.done = on_job_done,
};

static void start_job(struct ksched *s, struct kjob *job, void *userdata)
{
	struct kdaemon *d = userdata;
	(void)s;
	kdaemon_journal_flush(d); /* nothing runs that the journal has not */
	krunner_run(d->runner, job);
}

int kdaemon_init(struct kdaemon *d)
{
	for (size_t i = 0; i < ARRAY_SIZE(d->reject_log); i++) {
		const char *name = kevent_source_name((enum kevent_source)i);
		d->reject_log[i] = (struct klog_throttle){
			.name = name, .what = "rejected inputs", .counted = true};
		d->overrun_log[i] = (struct klog_throttle){
			.name = name, .what = "receive buffer overruns", .counted = true};
	}
	int rc = kstats_init(&d->stats);
	if (rc < 0)
		return rc;
	rc = kratelimit_new(&d->rl);
	if (rc < 0)
		return rc;
	rc = krunner_new(d->loop, d->rl, d->cfg.dry_run, &runner_ops, d, &d->runner);
	if (rc < 0)
		return rc;
	rc = ksched_new(d->cfg.max_children, kdaemon_share(&d->cfg), start_job, d, &d->sched);
	if (rc < 0)
		return rc;
	rc = kdebounce_new(d->loop, &debounce_ops, d, &d->debounce);
	if (rc < 0)
		return rc;
	rc = kdaemon_reload(d, NULL);
	if (rc < 0)
		return rc;
	d->stats.reloads = 0;
	d->stats.reload_errors = 0;
	return 0;
}

/* The journal holds every event submitted: the sources' positions may
 * cover them now (source.h: journaled()). */
static void sources_journaled(struct kdaemon *d)
{
	if (kjournal_pending(d->journal))
		return;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (d->source[i] && d->source[i]->journaled)
			d->source[i]->journaled(d->source[i]);
}

void kdaemon_journal_flush(struct kdaemon *d)
{
	if (!kjournal_pending(d->journal)) {
		sources_journaled(d);
		return;
	}
	if (kjournal_flush(d->journal) == 0)
		kfault("journaled");
	journal_flow(d);
	sources_journaled(d);
}

static int replay_submit(void *userdata, struct kevent *ev)
{
	return kdaemon_submit(userdata, ev);
}

/* Whether the queue has room for a replayed event: its source's share,
 * as for a live one. */
static bool replay_may(void *userdata, const struct kevent *ev)
{
	struct kdaemon *d = userdata;
	return !d->stopping && ksched_room(d->sched, ev->source) > 0;
}

/* Feeds the queue the last run's unfinished events while it has room;
 * once they are all in, the journaled sources read again. */
void kdaemon_replay_more(struct kdaemon *d)
{
	if (!kjournal_replaying(d->journal))
		return;
	d->replayed += kjournal_replay_more(d->journal, replay_may, replay_submit, d);
	if (kjournal_replaying(d->journal))
		return;
	struct kjournal_status js;
	kjournal_status(d->journal, &js);
	if (js.corrupt)
		log_warning("journal: %zu unfinished events handled again; damaged records "
			    "skipped: %" PRIu64,
			    d->replayed, js.corrupt);
	else if (d->replayed)
		log_notice("journal: %zu unfinished events handled again", d->replayed);
	flow_journaled(d, "the last run's events are all in");
}

static void journal_round_end(void *userdata)
{
	struct kdaemon *d = userdata;
	if (d->resolve_staged)
		d->resolve_staged(d->resolve_userdata);
	kdaemon_journal_flush(d);
	kdaemon_replay_more(d);
	if (d->cond_hooks) /* the condition table, after the journal */
		d->cond_hooks->round_end(d);
}

/* Opens path, keventd's own directory of what (kstatedir_open()); a
 * refusal is logged: keventd does not start without it. */
static int open_own_dir(const char *what, const char *path, struct kstatedir **out)
{
	const char *why = NULL;
	int rc = kstatedir_open(path, out, &why);
	if (rc < 0) {
		/* a refusal says it all; a call that failed says why too */
		bool refused = why && strncmp(why, "cannot", 6) != 0;
		log_error("%s directory %s: %s%s%s; refusing to start", what, path, why ? why : "",
			  refused ? ""
			  : why	  ? ": "
				  : "",
			  refused ? "" : strerror(-rc));
	}
	return rc;
}

int kdaemon_state_open(struct kdaemon *d)
{
	if (!d->cfg.state_dir || d->state)
		return 0;
	return open_own_dir("state", d->cfg.state_dir, &d->state);
}

int kdaemon_lib_open(struct kdaemon *d)
{
	if (!d->cfg.lib_dir)
		return -ENOENT;
	if (d->lib)
		return 0;
	return open_own_dir("lib", d->cfg.lib_dir, &d->lib);
}

static void read_back(void *userdata, const struct kevent *ev)
{
	struct kdaemon *d = userdata;
	d->cond_hooks->read_back(d, ev);
}

int kdaemon_journal_start(struct kdaemon *d)
{
	/* what a round of the loop accepted is written at its end at the
	 * latest, in one write, and the sources' positions follow it; so too
	 * without a journal, where the positions follow the round */
	kloop_set_after(d->loop, journal_round_end, d);
	if (!d->cfg.state_dir)
		return 0;
	int rc = kdaemon_state_open(d);
	if (rc < 0 || d->cfg.no_journal)
		return rc;
	size_t size = d->cfg.journal_size ? d->cfg.journal_size : KJOURNAL_DEFAULT_SIZE;
	rc = kjournal_open(d->state->fd, size, &d->journal);
	if (rc < 0) {
		/* as the MQTT spool: no journal error stops the daemon */
		log_error("cannot open the journal in %s: %s; accepted events are not kept "
			  "across a restart",
			  d->cfg.state_dir, kstatedir_strerror(rc));
		return 0;
	}
	/* the condition table first takes back the changes the journal
	 * holds, so that an event handed again makes none twice */
	if (d->cond_hooks)
		kjournal_peek(d->journal, KEVENT_SOURCE_CONDITION, read_back, d);
	/* fed within the sources' shares (kdaemon_replay_more()), the first
	 * ones now; the sources wait until they are all in */
	kjournal_replay_start(d->journal);
	kdaemon_replay_more(d);
	journal_flow(d);
	return 0;
}

void kdaemon_release(struct kdaemon *d)
{
	kdebounce_free(TAKE_PTR(d->debounce));
	ksched_free(TAKE_PTR(d->sched));
	krunner_free(TAKE_PTR(d->runner));
	kruleset_free(TAKE_PTR(d->rules));
	kratelimit_free(TAKE_PTR(d->rl));
	if (d->loop)
		kloop_set_after(d->loop, NULL, NULL);
	kjournal_free(TAKE_PTR(d->journal)); /* after the runner's last reports */
	ksource_sections_release(&d->taken); /* after the sources, which read them */
	kstats_release(&d->stats);
}

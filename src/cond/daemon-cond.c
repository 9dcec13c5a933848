// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's side of the condition table (daemon-cond.h).  A part of
 * the daemon's library kept beside the table it drives: it calls the core
 * through daemon-internal.h, and the core calls it back only through
 * struct kdaemon_cond_hooks.
 */
#include "daemon-cond.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cond.h"
#include "daemon-internal.h"
#include "journal.h"
#include "log.h"
#include "render.h"
#include "statedir.h"

struct kdaemon_cond {
	struct kdaemon *d;
	struct kcond *c;
	/* the condition events of the event being committed, accepted and
	 * journaled, handed on once it is done (on_committed()) */
	struct kstaged **staged;
	size_t n_staged, cap_staged;
	unsigned fresh; /* the sources that report afresh at this start */
	/* the journal records of the condition events whose change the
	 * table's file does not have yet, held live until it does
	 * (COND.txt): a kill before the write hands them again */
	uint64_t *held;
	size_t n_held, cap_held;
	uint64_t last_write_ns; /* monotonic */
	struct ktimer *save_timer;
};

/* A big table is written at most once a second (a flood of sets would
 * write it whole at every round); a small one at once. */
#define SAVE_INTERVAL_NS (1000000000ull)
#define SAVE_SMALL_ROWS	 1024

/* ev's record stays live until the table holds its change. */
static void hold(struct kdaemon *d, const struct kevent *ev)
{
	struct kdaemon_cond *dc = d->cond;
	if (!d->journal || !ev->journal_ref)
		return;
	if (dc->n_held == dc->cap_held) {
		size_t cap = dc->cap_held ? dc->cap_held * 2 : 16;
		uint64_t *v = realloc(dc->held, cap * sizeof(*v));
		if (!v)
			return; /* unheld: a kill before the write may lose its change */
		dc->held = v;
		dc->cap_held = cap;
	}
	if (kjournal_hold(d->journal, ev->journal_ref) == 0)
		dc->held[dc->n_held++] = ev->journal_ref;
}

static void let_go(struct kdaemon *d)
{
	struct kdaemon_cond *dc = d->cond;
	for (size_t i = 0; i < dc->n_held; i++)
		kjournal_retire(d->journal, dc->held[i], false);
	if (dc->n_held)
		kdaemon_journal_room(d);
	dc->n_held = 0;
}

/* Hands the events the time made (reminders, expiries, the start-up
 * check) on, each as every event. */
static void drain(struct kdaemon *d)
{
	struct kevent *ev;
	while ((ev = kcond_take(d->cond->c))) {
		struct kstaged *st = NULL;
		if (kdaemon_accept(d, ev, &st) < 0) {
			log_error("conditions: a condition event could not be handed on");
			continue;
		}
		hold(d, ev);
		(void)kdaemon_commit(d, st);
	}
}

static void on_ready(void *userdata)
{
	drain(userdata);
}

static const struct kcond_ops cond_ops = {.ready = on_ready};

/* The sources of --sources that report their abnormal states afresh at
 * this start, as their rows say (source-type.h: reports_at_start). */
static unsigned fresh_sources(const struct kdaemon *d)
{
	unsigned fresh = 0;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		const struct ksource_type *t = ksource_types[i];
		if ((d->cfg.sources & (1u << i)) && t->reports_at_start &&
		    t->reports_at_start(d->state))
			fresh |= 1u << i;
	}
	return fresh;
}

static void on_event(void *userdata, const struct kobs_event *e);
static void on_committed(struct kdaemon *d);
static void on_reloaded(struct kdaemon *d);
static void on_round_end(struct kdaemon *d);
static void save(struct kdaemon *d);
static void on_status(void *userdata, struct kstatus_extra *x);

static void on_read_back(struct kdaemon *d, const struct kevent *ev)
{
	kcond_read_back(d->cond->c, ev);
}

static const struct kdaemon_cond_hooks hooks = {
	.committed = on_committed,
	.reloaded = on_reloaded,
	.round_end = on_round_end,
	.read_back = on_read_back,
};

int kdaemon_cond_start(struct kdaemon *d)
{
	/* off: --lib-dir none, or the source condition left out of --sources */
	if (!d->cfg.lib_dir || d->cond || !(d->cfg.sources & (1u << KEVENT_SOURCE_CONDITION)))
		return 0;
	struct kdaemon_cond *dc = calloc(1, sizeof(*dc));
	if (!dc)
		return -ENOMEM;
	dc->d = d;
	int rc = kdaemon_lib_open(d);
	if (rc == 0)
		rc = kcond_new(d->loop, &cond_ops, d, &dc->c);
	if (rc == 0)
		rc = kcond_open(dc->c, d->lib);
	if (rc < 0) {
		kcond_free(dc->c);
		free(dc);
		return rc;
	}
	rc = kdaemon_observe(d, &(struct kobserver){.name = "conditions",
						    .event = on_event,
						    .status = on_status,
						    .userdata = d});
	if (rc < 0) {
		kcond_free(dc->c);
		free(dc);
		return rc;
	}
	d->cond = dc;
	d->cond_hooks = &hooks;
	kcond_set_rules(dc->c, d->rules);
	dc->fresh = fresh_sources(d);
	drain(d);
	return 0;
}

void kdaemon_cond_free(struct kdaemon *d)
{
	struct kdaemon_cond *dc = TAKE_PTR(d->cond);
	d->cond_hooks = NULL;
	if (!dc)
		return;
	ktimer_cancel(dc->save_timer);
	/* the last write, so that a clean stop leaves no record held (a
	 * held one would be handed again at the next start) */
	d->cond = dc;
	(void)kjournal_flush(d->journal); /* the sources are gone: the journal alone */
	save(d);
	d->cond = NULL;
	free(dc->held);
	for (size_t i = 0; i < dc->n_staged; i++)
		kdaemon_refuse(d, dc->staged[i]);
	free(dc->staged);
	kcond_free(dc->c);
	free(dc);
}

static void on_event(void *userdata, const struct kobs_event *e)
{
	struct kdaemon *d = userdata;
	struct kdaemon_cond *dc = d->cond;
	if (!dc)
		return;
	kcond_weigh(dc->c, e->ev);
	struct kevent *cev;
	size_t before = dc->n_staged;
	while ((cev = kcond_take(dc->c))) {
		if (dc->n_staged == dc->cap_staged) {
			size_t cap = dc->cap_staged ? dc->cap_staged * 2 : 8;
			struct kstaged **v = realloc(dc->staged, cap * sizeof(*v));
			if (!v) {
				/* handed on at once: it is only earlier than ev's runs */
				(void)kdaemon_submit(d, cev);
				continue;
			}
			dc->staged = v;
			dc->cap_staged = cap;
		}
		if (kdaemon_accept(d, cev, &dc->staged[dc->n_staged]) == 0) {
			hold(d, cev);
			dc->n_staged++;
		}
	}
	/* the condition events are in the journal before anything runs for
	 * ev, or for them (COND.txt) */
	if (dc->n_staged != before)
		kdaemon_journal_flush(d);
}

static void on_committed(struct kdaemon *d)
{
	struct kdaemon_cond *dc = d->cond;
	if (!dc || !dc->n_staged)
		return;
	/* taken out first: each commit comes back here, finding none */
	struct kstaged **v = TAKE_PTR(dc->staged);
	size_t n = dc->n_staged;
	dc->n_staged = dc->cap_staged = 0;
	for (size_t i = 0; i < n; i++)
		(void)kdaemon_commit(d, v[i]);
	free(v);
}

static void on_reloaded(struct kdaemon *d)
{
	if (!d->cond)
		return;
	kcond_set_rules(d->cond->c, d->rules);
	drain(d);
}

void kdaemon_cond_settle(struct kdaemon *d)
{
	if (!d->cond)
		return;
	kcond_settle(d->cond->c, d->cond->fresh, KCOND_SETTLE_MS);
}

/* Writes the table, after the journal, and lets its events' records go. */
static void save(struct kdaemon *d)
{
	struct kdaemon_cond *dc = d->cond;
	/* never a change whose events the journal has not written -- but
	 * for a journal full of the records held for the table: then the
	 * write lets them go, or nothing would ever move again */
	if (kjournal_pending(d->journal) && !kjournal_full(d->journal))
		return;
	kcond_save(dc->c);
	if (kcond_table(dc->c)->dirty)
		return; /* not written: held until it is */
	dc->last_write_ns = now_monotonic_ns();
	let_go(d);
}

static void on_save_timer(struct ktimer *t, void *userdata)
{
	struct kdaemon *d = userdata;
	(void)t;
	d->cond->save_timer = NULL;
	kdaemon_journal_flush(d);
	save(d);
}

static void on_round_end(struct kdaemon *d)
{
	struct kdaemon_cond *dc = d->cond;
	if (!dc || !kcond_table(dc->c)->dirty)
		return;
	uint64_t now = now_monotonic_ns();
	if (kcond_table(dc->c)->n < SAVE_SMALL_ROWS || kjournal_full(d->journal) ||
	    now - dc->last_write_ns >= SAVE_INTERVAL_NS) {
		save(d);
		return;
	}
	if (!dc->save_timer && kloop_add_timer(d->loop, dc->last_write_ns + SAVE_INTERVAL_NS,
					       on_save_timer, d, &dc->save_timer) < 0)
		save(d);
}

int kdaemon_cond_ack(struct kdaemon *d, const char *name, const char *key, uid_t uid,
		     const char *note)
{
	if (!d->cond)
		return -EOPNOTSUPP;
	char who[64], buf[1024];
	struct passwd pw, *res = NULL;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res &&
	    strlen(res->pw_name) < sizeof(who) && !str_has_control(res->pw_name))
		snprintf(who, sizeof(who), "%s", res->pw_name);
	else
		snprintf(who, sizeof(who), "uid %u", (unsigned)uid);
	int n = kcond_ack(d->cond->c, name, key, who, note);
	if (n > 0)
		log_notice("condition %s%s%s acknowledged by %s: %d row%s", name, key ? " " : "",
			   key ? key : "", who, n, n == 1 ? "" : "s");
	drain(d);
	return n;
}

/* The rows sent as the client reads them: a sorted copy of the table's
 * pointers, taken again (and the place found by the last row's name)
 * when a row was freed meanwhile. */
#define ROWS_PER_PART 64
struct list_stream {
	struct kctl_stream s;
	struct kdaemon *d;
	struct kcond_row **rows;
	size_t n, i;
	uint64_t removals;
	bool json, all, prometheus, head, foot;
	char *last_name, *last_key; /* of the last row sent */
	struct kcond_counts counts;
};

static bool resnap(struct list_stream *ls)
{
	const struct kcond_table *t = kcond_table(ls->d->cond->c);
	free(ls->rows);
	ls->rows = kcond_table_sorted(t);
	ls->n = ls->rows ? t->n : 0;
	ls->removals = t->removals;
	ls->i = 0;
	if (!ls->rows)
		return false;
	if (!ls->last_name)
		return true;
	struct kcond_row key = {.name = ls->last_name, .key = ls->last_key};
	size_t lo = 0, hi = ls->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (kcond_row_cmp(ls->rows[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	ls->i = lo;
	return true;
}

static bool list_next(struct kctl_stream *s, struct strbuf *out)
{
	struct list_stream *ls = container_of(s, struct list_stream, s);
	if (!ls->d->cond)
		return false;
	const struct kcond_table *t = kcond_table(ls->d->cond->c);
	if (!ls->head) {
		ls->head = true;
		if (ls->prometheus)
			kcond_render_prometheus_help(out);
		else if (!ls->json)
			kcond_render_text_head(out);
		return true;
	}
	if (t->removals != ls->removals && !resnap(ls))
		return false;
	if (ls->i >= ls->n) {
		if (ls->foot || ls->json || ls->prometheus)
			return false;
		ls->foot = true;
		kcond_render_text_foot(out, &ls->counts);
		return true;
	}
	for (size_t k = 0; k < ROWS_PER_PART && ls->i < ls->n; ls->i++) {
		const struct kcond_row *r = ls->rows[ls->i];
		if (!kcond_row_listed(r, ls->all))
			continue;
		k++;
		if (ls->prometheus)
			kcond_render_prometheus(out, r);
		else if (ls->json)
			kcond_render_json(out, r);
		else
			kcond_render_text(out, r);
		kcond_count(&ls->counts, r);
	}
	/* where to go on from, should a row be freed meanwhile */
	free(ls->last_name);
	free(ls->last_key);
	ls->last_name = strdup(ls->rows[ls->i - 1]->name);
	ls->last_key = strdup(ls->rows[ls->i - 1]->key);
	if (!ls->last_name || !ls->last_key)
		out->oom = true;
	return true;
}

static void list_end(struct kctl_stream *s, const char **kind, const char **text)
{
	(void)s;
	(void)kind;
	(void)text;
}

static void list_free(struct kctl_stream *s)
{
	struct list_stream *ls = container_of(s, struct list_stream, s);
	free(ls->rows);
	free(ls->last_name);
	free(ls->last_key);
	free(ls);
}

static struct kctl_stream *new_list(struct kdaemon *d, bool json, bool all, bool prometheus)
{
	struct list_stream *ls = calloc(1, sizeof(*ls));
	if (!ls)
		return NULL;
	ls->s = (struct kctl_stream){.next = list_next, .end = list_end, .free = list_free};
	ls->d = d;
	ls->json = json;
	ls->all = all;
	ls->prometheus = prometheus;
	if (d->cond && !resnap(ls)) {
		list_free(&ls->s);
		return NULL;
	}
	return &ls->s;
}

struct kctl_stream *kdaemon_cond_list(struct kdaemon *d, bool json, bool all)
{
	return new_list(d, json, all, false);
}

struct kctl_stream *kdaemon_cond_prometheus(struct kdaemon *d)
{
	return new_list(d, false, false, true);
}

int kdaemon_cond_check(struct kdaemon *d, const char *names, struct strbuf *out)
{
	if (!d->cond) {
		strbuf_puts(out, "CONDITIONS UNKNOWN - keventd keeps no condition table "
				 "(--lib-dir none, or not in --sources)\n");
		return 3;
	}
	const struct kcond_table *t = kcond_table(d->cond->c);
	_cleanup_free_ struct kcond_row **rows = kcond_table_sorted(t);
	if (!rows) {
		strbuf_puts(out, "CONDITIONS UNKNOWN - keventd is out of memory\n");
		return 3;
	}
	return kcond_render_check(out, rows, t->n, names);
}

size_t kdaemon_cond_each(struct kdaemon *d, void (*fn)(void *userdata, const struct kcond_row *r),
			 void *userdata)
{
	if (!d->cond)
		return 0;
	const struct kcond_table *t = kcond_table(d->cond->c);
	if (!fn)
		return t->holding;
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		if (kcond_row_holds(t->v[i])) {
			fn(userdata, t->v[i]);
			n++;
		}
	return n;
}

const struct kcond_row *kdaemon_cond_find(struct kdaemon *d, const char *name, const char *key)
{
	return d->cond ? kcond_table_find(kcond_table(d->cond->c), name, key) : NULL;
}

static void on_status(void *userdata, struct kstatus_extra *x)
{
	struct kdaemon *d = userdata;
	struct kcond_status st;
	kcond_status(d->cond ? d->cond->c : NULL, &st);
	x->cond_off = !st.on;
	x->cond_holding = st.holding;
	x->cond_critical = st.by_severity[KCOND_CRITICAL];
	x->cond_warning = st.by_severity[KCOND_WARNING];
	x->cond_info = st.by_severity[KCOND_INFO];
	x->cond_acked = st.acked;
	x->cond_refused = (size_t)st.refused;
	x->cond_write_errors = (size_t)st.write_errors;
}

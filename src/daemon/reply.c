// SPDX-License-Identifier: GPL-2.0-or-later
/* Replies sent as the client reads them (reply.h). */
#include "reply.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon-cond.h"
#include "daemon-internal.h"
#include "explain.h"
#include "journal.h"
#include "source.h"
#include "table.h"

/* What a reply that reads today's rules ends with when a reload replaced
 * them before it was all sent: the parts of two rule sets would not add
 * up, and keeping the old set alive for a client that does not read
 * would let it hold a rule set's memory. */
#define RELOADED "the rules were reloaded while this reply was sent: ask again"

struct events_stream {
	struct kctl_stream s;
	struct kdaemon *d;
	struct khistory_cursor cur;
	char end[160];
};

static bool events_next(struct kctl_stream *s, struct strbuf *out)
{
	struct events_stream *es = container_of(s, struct events_stream, s);
	return khistory_cursor_next(es->d->history, &es->cur, out);
}

static void events_end(struct kctl_stream *s, const char **kind, const char **text)
{
	struct events_stream *es = container_of(s, struct events_stream, s);
	if (!es->cur.skipped)
		return;
	snprintf(es->end, sizeof(es->end),
		 "%" PRIu64 " of the events asked for left the history before they were sent "
		 "(read more slowly than events came); the others were sent",
		 es->cur.skipped);
	*kind = "err";
	*text = es->end;
}

static void stream_free(struct kctl_stream *s)
{
	free(s);
}

struct kctl_stream *kreply_events(struct kdaemon *d, size_t n, bool json, const struct kfilter *f)
{
	struct events_stream *es = calloc(1, sizeof(*es));
	if (!es)
		return NULL;
	es->s = (struct kctl_stream){.next = events_next, .end = events_end, .free = stream_free};
	es->d = d;
	khistory_cursor_init_filtered(d->history, n, json, f, &es->cur);
	return &es->s;
}

struct status_stream {
	struct kctl_stream s;
	struct kdaemon *d;
	struct kstats_cursor cur;
	struct kstatus_extra x; /* as it was when asked */
	uint64_t generation;
	bool reloaded;
	/* Prometheus: then a sample per condition row that holds */
	struct kctl_stream *conds;
	char *about_json; /* JSON: the verdict (x.about_json) */
};

static bool status_next(struct kctl_stream *s, struct strbuf *out)
{
	struct status_stream *ss = container_of(s, struct status_stream, s);
	if (ss->d->generation != ss->generation) {
		ss->reloaded = true;
		return false;
	}
	if (kstats_render_next(&ss->cur, &ss->d->stats, ss->d->rules, &ss->x, out))
		return true;
	return ss->conds && ss->conds->next(ss->conds, out);
}

static void status_free(struct kctl_stream *s)
{
	struct status_stream *ss = container_of(s, struct status_stream, s);
	if (ss->conds)
		ss->conds->free(ss->conds);
	free(ss->about_json);
	free(ss);
}

static void status_end(struct kctl_stream *s, const char **kind, const char **text)
{
	struct status_stream *ss = container_of(s, struct status_stream, s);
	if (ss->reloaded) {
		*kind = "err";
		*text = RELOADED;
	}
}

struct kctl_stream *kreply_status(struct kdaemon *d, enum kstatus_format format)
{
	struct status_stream *ss = calloc(1, sizeof(*ss));
	if (!ss)
		return NULL;
	ss->s = (struct kctl_stream){.next = status_next, .end = status_end, .free = status_free};
	ss->d = d;
	ss->generation = d->generation;
	if (format == KSTATUS_PROMETHEUS && d->cond && !(ss->conds = kdaemon_cond_prometheus(d))) {
		free(ss);
		return NULL;
	}
	if (format == KSTATUS_JSON && !(ss->about_json = kreply_about_json(d))) {
		free(ss);
		return NULL;
	}
	kstats_cursor_init(&ss->cur, format);
	kdaemon_status_extra(d, &ss->x);
	ss->x.about_json = ss->about_json;
	return &ss->s;
}

struct explain_stream {
	struct kctl_stream s;
	struct kdaemon *d;
	struct kexplain *x;
	uint64_t generation;
	bool reloaded, noted;
	/* the files broken when the event came, what became of its runs */
	struct strbuf notes;
};

/* The files that were broken when the event came, and so not in force
 * (or only as their last good version): said after the rules. */
static void explain_notes(const struct khistory_entry *e, bool json, struct strbuf *out)
{
	size_t n;
	const struct kbroken *b = khistory_entry_broken(e, &n);
	for (size_t i = 0; i < n; i++, b++) {
		if (json) {
			strbuf_puts(out, "{\"broken\":");
			strbuf_json(out, b->name);
			strbuf_puts(out, ",\"error\":");
			strbuf_json(out, b->why);
			strbuf_printf(out, ",\"last_good_in_force\":%s}\n",
				      b->kept ? "true" : "false");
			continue;
		}
		strbuf_puts(out, "note: ");
		strbuf_put_escaped(out, b->name);
		strbuf_puts(out, " was broken at the time (");
		strbuf_put_escaped(out, b->why);
		strbuf_puts(out, b->kept ? ") and only its last good version was in force\n"
					 : ") and its rules were not in force\n");
	}
}

static bool explain_next(struct kctl_stream *s, struct strbuf *out)
{
	struct explain_stream *xs = container_of(s, struct explain_stream, s);
	if (xs->d->generation != xs->generation) {
		xs->reloaded = true;
		return false;
	}
	if (kexplain_next(xs->x, xs->d->rules, out))
		return true;
	if (xs->noted || !xs->notes.len)
		return false;
	xs->noted = true;
	strbuf_puts(out, strbuf_str(&xs->notes));
	return true;
}

static void explain_end(struct kctl_stream *s, const char **kind, const char **text)
{
	struct explain_stream *xs = container_of(s, struct explain_stream, s);
	if (xs->reloaded) {
		*kind = "err";
		*text = RELOADED;
	}
}

static void explain_free(struct kctl_stream *s)
{
	struct explain_stream *xs = container_of(s, struct explain_stream, s);
	kexplain_free(xs->x);
	strbuf_release(&xs->notes);
	free(xs);
}

int kreply_explain(struct kdaemon *d, const struct khistory_entry *e, bool json,
		   struct kctl_stream **out)
{
	struct kevent *ev = NULL;
	size_t n_files;
	struct kfile *const *files = khistory_entry_files(e, &n_files);
	int rc = khistory_entry_event(e, &ev);
	if (rc < 0)
		return rc;
	struct explain_stream *xs = calloc(1, sizeof(*xs));
	if (!xs) {
		kevent_free(ev);
		return -ENOMEM;
	}
	rc = kexplain_new(ev, files, n_files, d->rules, json, &xs->x);
	if (rc < 0) {
		free(xs);
		return rc;
	}
	xs->s = (struct kctl_stream){
		.next = explain_next, .end = explain_end, .free = explain_free};
	xs->d = d;
	xs->generation = d->generation;
	xs->notes = (struct strbuf)STRBUF_INIT;
	khistory_entry_put_runs(e, json, &xs->notes);
	explain_notes(e, json, &xs->notes);
	*out = &xs->s;
	return 0;
}

/* --- about: status's verdict --- */

static void about1(kreply_about_fn *fn, void *ud, const char *key, const char *value)
{
	fn(ud, key, &value, 1);
}

/* The rows that hold, counted by severity, and those shown: the most
 * severe first, then the oldest. */
struct shown_rows {
	const struct kcond_row *v[KREPLY_ABOUT_CONDITIONS];
	size_t n;
	size_t holding, by_severity[3]; /* enum kcond_severity */
};

static bool before(const struct kcond_row *a, const struct kcond_row *b)
{
	return a->severity != b->severity ? a->severity > b->severity : a->since < b->since;
}

static void keep_row(void *ud, const struct kcond_row *r)
{
	struct shown_rows *sr = ud;
	sr->holding++;
	if (r->severity < ARRAY_SIZE(sr->by_severity))
		sr->by_severity[r->severity]++;
	size_t i = sr->n;
	if (i == KREPLY_ABOUT_CONDITIONS) {
		if (!before(r, sr->v[i - 1]))
			return;
		i--;
	} else {
		sr->n++;
	}
	for (; i > 0 && before(r, sr->v[i - 1]); i--)
		sr->v[i] = sr->v[i - 1];
	sr->v[i] = r;
}

static void about_sources(struct kdaemon *d, kreply_about_fn *fn, void *ud)
{
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		if (!(d->cfg.sources & (1u << i)))
			continue;
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct ksource *s = d->source[i];
		if (s && s->describe)
			s->describe(s, &sb);
		else if (i == KEVENT_SOURCE_CONDITION)
			strbuf_puts(&sb, d->cond ? "the condition table in the lib directory"
						 : "no condition table (--lib-dir none)");
		else if (i == KEVENT_SOURCE_MQTT && !s)
			strbuf_puts(&sb, "nothing subscribed (keventd.yaml's mqtt: subscribe)");
		else if (!s)
			strbuf_puts(&sb, "not running: keventd's log says why");
		const char *v[] = {kevent_source_name((enum kevent_source)i),
				   sb.oom ? "" : strbuf_str(&sb)};
		fn(ud, "source", v, 2);
	}
}

static void about_conditions(struct kdaemon *d, kreply_about_fn *fn, void *ud)
{
	if (!d->cond)
		return;
	struct shown_rows sr = {.n = 0};
	kdaemon_cond_each(d, keep_row, &sr);
	char n[4][24];
	snprintf(n[0], sizeof(n[0]), "%zu", sr.holding);
	snprintf(n[1], sizeof(n[1]), "%zu", sr.by_severity[KCOND_CRITICAL]);
	snprintf(n[2], sizeof(n[2]), "%zu", sr.by_severity[KCOND_WARNING]);
	snprintf(n[3], sizeof(n[3]), "%zu", sr.by_severity[KCOND_INFO]);
	const char *counts[] = {n[0], n[1], n[2], n[3]};
	fn(ud, "conditions", counts, 4);
	for (size_t i = 0; i < sr.n; i++) {
		const struct kcond_row *r = sr.v[i];
		char since[24];
		snprintf(since, sizeof(since), "%" PRIu64, r->since);
		const char *v[] = {kcond_severity_name((enum kcond_severity)r->severity), r->name,
				   r->object ? r->object : r->key, since, r->acked_at ? "1" : "0"};
		fn(ud, "condition", v, 5);
	}
}

void kreply_about(struct kdaemon *d, kreply_about_fn *fn, void *ud)
{
	char a[32], b[32];
	about1(fn, ud, "version", KEVENT_VERSION);
	snprintf(a, sizeof(a), "%d", (int)getpid());
	about1(fn, ud, "pid", a);
	snprintf(a, sizeof(a), "%" PRIu64,
		 now_realtime_ns() - (now_monotonic_ns() - d->stats.started_ns));
	about1(fn, ud, "since", a);
	if (d->cfg.config_path)
		about1(fn, ud, "config", d->cfg.config_path);
	for (size_t i = 0; i < d->cfg.n_rule_dirs; i++)
		about1(fn, ud, "rule_dir", d->cfg.rule_dirs[i]);
	if (d->cfg.state_dir)
		about1(fn, ud, "state_dir", d->cfg.state_dir);
	if (d->cfg.lib_dir)
		about1(fn, ud, "lib_dir", d->cfg.lib_dir);
	about_sources(d, fn, ud);
	snprintf(a, sizeof(a), "%zu", d->rules ? d->rules->n_rules : 0);
	snprintf(b, sizeof(b), "%zu", d->rules ? d->rules->n_files : 0);
	const char *rules[] = {a, b};
	fn(ud, "rules", rules, 2);
	for (size_t i = 0; d->rules && i < d->rules->n_broken; i++) {
		const char *v[] = {d->rules->broken[i].name, d->rules->broken[i].why};
		fn(ud, d->rules->broken[i].kept ? "broken_kept" : "broken", v, 2);
	}
	int failing = kjournal_failing(d->journal);
	if (failing)
		about1(fn, ud, "journal_failing", strerror(-failing));
	about_conditions(d, fn, ud);
}

/* The verdict as JSON: status --json's "keventd" member. */
struct about_json {
	struct strbuf head, dirs, sources, rows;
	bool degraded;
};

static void json_member(struct strbuf *o, const char *key, const char *value)
{
	strbuf_printf(o, ",\"%s\":", key);
	strbuf_json(o, value);
}

static void about_json_field(void *ud, const char *key, const char *const *v, size_t n)
{
	struct about_json *j = ud;
	if (strcmp(key, "version") == 0) {
		strbuf_puts(&j->head, "\"version\":");
		strbuf_json(&j->head, v[0]);
	} else if (strcmp(key, "pid") == 0) {
		strbuf_printf(&j->head, ",\"pid\":%s", v[0]);
	} else if (strcmp(key, "since") == 0) {
		int64_t ns = 0;
		(void)parse_int64(v[0], &ns);
		strbuf_puts(&j->head, ",\"since\":\"");
		strbuf_put_time(&j->head, (uint64_t)ns);
		strbuf_putc(&j->head, '"');
	} else if (strcmp(key, "rule_dir") == 0) {
		strbuf_puts(&j->dirs, j->dirs.len ? "," : "");
		strbuf_json(&j->dirs, v[0]);
	} else if (strcmp(key, "source") == 0 && n == 2) {
		strbuf_puts(&j->sources, j->sources.len ? "," : "");
		strbuf_json(&j->sources, v[0]);
		strbuf_putc(&j->sources, ':');
		strbuf_json(&j->sources, v[1]);
	} else if (strcmp(key, "rules") == 0 && n == 2) {
		strbuf_printf(&j->head, ",\"rules\":%s,\"rule_files\":%s", v[0], v[1]);
	} else if (strcmp(key, "conditions") == 0 && n == 4) {
		strbuf_printf(&j->head,
			      ",\"conditions\":{\"holding\":%s,\"critical\":%s,\"warning\":%s,"
			      "\"info\":%s}",
			      v[0], v[1], v[2], v[3]);
	} else if (strcmp(key, "condition") == 0 && n == 5) {
		int64_t ns = 0;
		(void)parse_int64(v[3], &ns);
		strbuf_puts(&j->rows, j->rows.len ? ",{\"severity\":" : "{\"severity\":");
		strbuf_json(&j->rows, v[0]);
		json_member(&j->rows, "condition", v[1]);
		json_member(&j->rows, "object", v[2]);
		strbuf_puts(&j->rows, ",\"since\":\"");
		strbuf_put_time(&j->rows, (uint64_t)ns);
		strbuf_printf(&j->rows, "\",\"acknowledged\":%s}",
			      strcmp(v[4], "1") == 0 ? "true" : "false");
	} else if (strncmp(key, "broken", 6) == 0 || strcmp(key, "journal_failing") == 0) {
		j->degraded = true; /* the files are status's broken_files */
		if (key[0] == 'j')
			json_member(&j->head, key, v[0]);
	} else if (n == 1) { /* config, state_dir, lib_dir */
		json_member(&j->head, key, v[0]);
	}
}

char *kreply_about_json(struct kdaemon *d)
{
	struct about_json j = {STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, false};
	kreply_about(d, about_json_field, &j);
	strbuf_printf(&j.head, ",\"state\":\"%s\",\"rule_dirs\":[%s],\"sources\":{%s}",
		      j.degraded ? "degraded" : "running", strbuf_str(&j.dirs),
		      strbuf_str(&j.sources));
	strbuf_printf(&j.head, ",\"conditions_shown\":[%s]", strbuf_str(&j.rows));
	bool oom = j.head.oom || j.dirs.oom || j.sources.oom || j.rows.oom;
	strbuf_release(&j.dirs);
	strbuf_release(&j.sources);
	strbuf_release(&j.rows);
	if (oom) {
		strbuf_release(&j.head);
		return NULL;
	}
	return j.head.buf ? j.head.buf : strdup("");
}

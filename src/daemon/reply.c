// SPDX-License-Identifier: GPL-2.0-or-later
/* Replies sent as the client reads them (reply.h). */
#include "reply.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon-cond.h"
#include "daemon-internal.h"
#include "explain.h"

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
	kstats_cursor_init(&ss->cur, format);
	kdaemon_status_extra(d, &ss->x);
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

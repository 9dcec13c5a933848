// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl explain's rendering (explain.h). */
#include "explain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

/* The rules of a list of files, in order: a rule set's matching order. */
struct walk {
	struct kfile *const *files;
	size_t n_files, f, j;
	size_t n_rules;
	const struct krule *stopper; /* matched with last: true */
	size_t matched, shown;
};

enum phase { P_HEAD, P_THEN, P_TODAY, P_DONE };

struct kexplain {
	struct kevent *ev;
	struct kfile **then; /* NULL: no longer kept */
	size_t n_then;
	bool json, differs;
	enum phase phase;
	struct walk w; /* through the rules of the phase */
	struct strbuf line, why;
};

static void walk_start(struct walk *w, struct kfile *const *files, size_t n)
{
	*w = (struct walk){.files = files, .n_files = n};
	for (size_t i = 0; i < n; i++)
		w->n_rules += files[i]->n_rules;
}

static const struct krule *walk_next(struct walk *w)
{
	for (; w->f < w->n_files; w->f++, w->j = 0)
		if (w->j < w->files[w->f]->n_rules)
			return &w->files[w->f]->rules[w->j++];
	return NULL;
}

/* The next rule of w that matches ev, none after one with last: true. */
static const struct krule *next_match(struct walk *w, const struct kevent *ev)
{
	const struct krule *r;
	while (!w->stopper && (r = walk_next(w)))
		if (krule_match(r, ev, NULL)) {
			if (r->last)
				w->stopper = r;
			return r;
		}
	return NULL;
}

/* Whether the two lists of files match ev with different rules (by file
 * and name), compared a match at a time. */
static bool decisions_differ(struct kfile *const *a, size_t n_a, struct kfile *const *b, size_t n_b,
			     const struct kevent *ev)
{
	struct walk wa, wb;
	walk_start(&wa, a, n_a);
	walk_start(&wb, b, n_b);
	for (;;) {
		const struct krule *ra = next_match(&wa, ev), *rb = next_match(&wb, ev);
		if (!ra || !rb)
			return ra != rb;
		if (strcmp(ra->file->path, rb->file->path) != 0 || strcmp(ra->name, rb->name) != 0)
			return true;
	}
}

int kexplain_new(struct kevent *ev, struct kfile *const *then, size_t n_then,
		 const struct kruleset *now, bool json, struct kexplain **out)
{
	struct kexplain *x = calloc(1, sizeof(*x));
	if (!x || (then && !(x->then = calloc(n_then + 1, sizeof(*x->then))))) {
		free(x);
		kevent_free(ev);
		return -ENOMEM;
	}
	x->ev = ev;
	x->json = json;
	for (size_t i = 0; then && i < n_then; i++)
		x->then[x->n_then++] = kfile_ref(then[i]);
	x->differs = then && decisions_differ(x->then, x->n_then, now->files, now->n_files, ev);
	*out = x;
	return 0;
}

void kexplain_free(struct kexplain *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n_then; i++)
		kfile_unref(x->then[i]);
	free(x->then);
	kevent_free(x->ev);
	strbuf_release(&x->line);
	strbuf_release(&x->why);
	free(x);
}

/* The event, and what comes before the first list of rules. */
static void head(struct kexplain *x, const struct kruleset *now, struct strbuf *out)
{
	const struct kevent *ev = x->ev;
	if (x->json) {
		strbuf_printf(out,
			      "{\"event\":{\"seqnum\":%" PRIu64 ",\"timestamp\":%" PRIu64
			      ",\"source\":\"%s\",\"type\":\"%s\",\"object\":",
			      ev->seqnum, ev->timestamp, kevent_source_name(ev->source),
			      kevent_type_name(ev->type));
		strbuf_json(out, ev->object);
		strbuf_puts(out, ",\"signal\":");
		strbuf_json(out, ev->signal);
		strbuf_puts(out, ",\"payload\":");
		strbuf_json(out, ev->payload);
		strbuf_puts(out, x->then ? "},\"then\":{\"rules\":["
					 : "},\"then\":null,\"today\":{\"rules\":[");
		return;
	}
	strbuf_reset(&x->line);
	strbuf_printf(&x->line,
		      "event: type=%s object=%s signal=%s source=%s seqnum=%" PRIu64 " payload=",
		      kevent_type_name(ev->type), ev->object, ev->signal,
		      kevent_source_name(ev->source), ev->seqnum);
	strbuf_quote(&x->line, ev->payload);
	strbuf_put_escaped(out, strbuf_str(&x->line));
	strbuf_puts(out, "\ntime: ");
	strbuf_put_time(out, ev->timestamp);
	strbuf_putc(out, '\n');
	if (x->then) {
		struct walk w;
		walk_start(&w, x->then, x->n_then);
		strbuf_printf(out, "rules in force then: %zu in %zu file%s\n\n", w.n_rules,
			      x->n_then, x->n_then == 1 ? "" : "s");
		return;
	}
	strbuf_printf(out,
		      "rules in force then: no longer kept (the history keeps at most %d "
		      "rule sets)\n\ntoday's rules: %zu in %zu file%s\n\n",
		      KHISTORY_GENERATIONS, now->n_rules, now->n_files,
		      now->n_files == 1 ? "" : "s");
}

/* Rule r, the next of the list being walked. */
static void rule_part(struct kexplain *x, const struct krule *r, struct strbuf *out)
{
	struct walk *w = &x->w;
	const struct kevent *ev = x->ev;
	strbuf_reset(&x->why);
	if (x->json) {
		strbuf_puts(out, w->shown ? ",{\"name\":" : "{\"name\":");
		strbuf_json(out, r->name);
		strbuf_puts(out, ",\"file\":");
		strbuf_json(out, r->file->path);
		strbuf_printf(out, ",\"line\":%u,\"column\":%u", r->line, r->col);
		if (w->stopper) {
			strbuf_puts(out, ",\"result\":\"not tried\",\"why\":");
			strbuf_json(out, w->stopper->name);
		} else if (!krule_match(r, ev, &x->why)) {
			strbuf_puts(out, ",\"result\":\"no match\",\"why\":");
			strbuf_json(out, strbuf_str(&x->why));
		} else {
			w->matched++;
			strbuf_printf(out, ",\"result\":\"matched\",\"runs\":%s,\"last\":%s",
				      krule_runs_something(r) ? "true" : "false",
				      r->last ? "true" : "false");
			if (r->last)
				w->stopper = r;
		}
		strbuf_putc(out, '}');
		w->shown++;
		return;
	}
	strbuf_reset(&x->line);
	strbuf_printf(&x->line, "rule %s (%s:%u:%u): ", r->name, r->file->path, r->line, r->col);
	if (w->stopper)
		strbuf_printf(&x->line, "not tried: rule %s matched first with last: true",
			      w->stopper->name);
	else if (!krule_match(r, ev, &x->why))
		strbuf_printf(&x->line, "no match: %s", strbuf_str(&x->why));
	else {
		w->matched++;
		strbuf_printf(&x->line, "matched%s%s",
			      krule_runs_something(r) ? "" : ", runs nothing",
			      r->last ? "; last: later rules do not see the event" : "");
		if (r->last)
			w->stopper = r;
	}
	strbuf_put_escaped(out, strbuf_str(&x->line));
	strbuf_putc(out, '\n');
	w->shown++;
}

/* The end of the list walked (when is "then" or "today"), and what comes
 * after it: the next phase's. */
static enum phase list_end(struct kexplain *x, const struct kruleset *now, struct strbuf *out)
{
	bool then = x->phase == P_THEN;
	if (x->json) {
		strbuf_printf(out, "],\"matched\":%zu}", x->w.matched);
		if (then) {
			strbuf_puts(out, ",\"today\":{\"rules\":[");
			return P_TODAY;
		}
		strbuf_printf(out, ",\"differs\":%s}\n",
			      !x->then	   ? "null"
			      : x->differs ? "true"
					   : "false");
		return P_DONE;
	}
	strbuf_printf(out, "\n%zu of %zu rules matched %s\n", x->w.matched, x->w.n_rules,
		      then ? "then" : "today");
	if (!then)
		return P_DONE;
	if (!x->differs) {
		strbuf_puts(out, "today's rules decide the same\n");
		return P_DONE;
	}
	strbuf_printf(out, "today's rules decide differently: %zu in %zu file%s\n\n", now->n_rules,
		      now->n_files, now->n_files == 1 ? "" : "s");
	return P_TODAY;
}

bool kexplain_next(struct kexplain *x, const struct kruleset *now, struct strbuf *out)
{
	switch (x->phase) {
	case P_HEAD:
		head(x, now, out);
		x->phase = x->then ? P_THEN : P_TODAY;
		if (x->then)
			walk_start(&x->w, x->then, x->n_then);
		else
			walk_start(&x->w, now->files, now->n_files);
		return true;
	case P_THEN:
	case P_TODAY: {
		const struct krule *r = walk_next(&x->w);
		if (r) {
			rule_part(x, r, out);
			return true;
		}
		x->phase = list_end(x, now, out);
		if (x->phase == P_TODAY)
			walk_start(&x->w, now->files, now->n_files);
		return true;
	}
	case P_DONE:
		break;
	}
	return false;
}

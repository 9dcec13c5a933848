// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl explain's rendering (explain.h). */
#include "explain.h"

#include <inttypes.h>
#include <string.h>

#include "history.h"

/* One decision: the rules that matched, "PATH\x1fNAME\n" each, to compare. */
static void decide(const struct kruleset *rs, const struct kevent *ev, struct strbuf *key)
{
	bool stopped = false;
	for (size_t i = 0; i < rs->n_rules && !stopped; i++) {
		const struct krule *r = rs->rules[i];
		if (!krule_match(r, ev, NULL))
			continue;
		strbuf_printf(key, "%s\x1f%s\n", r->file->path, r->name);
		stopped = r->last;
	}
}

static void text_rules(const struct kruleset *rs, const struct kevent *ev, const char *when,
		       struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT, why = STRBUF_INIT;
	const struct krule *stopper = NULL;
	size_t matched = 0;
	for (size_t i = 0; i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		strbuf_reset(&line);
		strbuf_printf(&line, "rule %s (%s:%u:%u): ", r->name, r->file->path, r->line,
			      r->col);
		strbuf_reset(&why);
		if (stopper)
			strbuf_printf(&line, "not tried: rule %s matched first with last: true",
				      stopper->name);
		else if (!krule_match(r, ev, &why))
			strbuf_printf(&line, "no match: %s", strbuf_str(&why));
		else {
			matched++;
			strbuf_printf(&line, "matched%s%s",
				      krule_runs_something(r) ? "" : ", runs nothing",
				      r->last ? "; last: later rules do not see the event" : "");
			if (r->last)
				stopper = r;
		}
		strbuf_put_escaped(out, strbuf_str(&line));
		strbuf_putc(out, '\n');
	}
	strbuf_printf(out, "\n%zu of %zu rules matched %s\n", matched, rs->n_rules, when);
}

static void json_rules(const struct kruleset *rs, const struct kevent *ev, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	const struct krule *stopper = NULL;
	size_t matched = 0;
	strbuf_puts(out, "{\"rules\":[");
	for (size_t i = 0; i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		strbuf_puts(out, i ? ",{\"name\":" : "{\"name\":");
		strbuf_json(out, r->name);
		strbuf_puts(out, ",\"file\":");
		strbuf_json(out, r->file->path);
		strbuf_printf(out, ",\"line\":%u,\"column\":%u", r->line, r->col);
		strbuf_reset(&why);
		if (stopper) {
			strbuf_puts(out, ",\"result\":\"not tried\",\"why\":");
			strbuf_json(out, stopper->name);
		} else if (!krule_match(r, ev, &why)) {
			strbuf_puts(out, ",\"result\":\"no match\",\"why\":");
			strbuf_json(out, strbuf_str(&why));
		} else {
			matched++;
			strbuf_printf(out, ",\"result\":\"matched\",\"runs\":%s,\"last\":%s",
				      krule_runs_something(r) ? "true" : "false",
				      r->last ? "true" : "false");
			if (r->last)
				stopper = r;
		}
		strbuf_putc(out, '}');
	}
	strbuf_printf(out, "],\"matched\":%zu}", matched);
}

void kexplain_render(const struct kevent *ev, const struct kruleset *then,
		     const struct kruleset *now, bool json, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	if (then)
		decide(then, ev, &a);
	decide(now, ev, &b);
	bool differs = then && strcmp(strbuf_str(&a), strbuf_str(&b)) != 0;
	if (json) {
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
		strbuf_puts(out, "},\"then\":");
		if (then)
			json_rules(then, ev, out);
		else
			strbuf_puts(out, "null");
		strbuf_puts(out, ",\"today\":");
		json_rules(now, ev, out);
		strbuf_printf(out, ",\"differs\":%s}\n",
			      !then	? "null"
			      : differs ? "true"
					: "false");
		return;
	}
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	strbuf_printf(&line,
		      "event: type=%s object=%s signal=%s source=%s seqnum=%" PRIu64 " payload=",
		      kevent_type_name(ev->type), ev->object, ev->signal,
		      kevent_source_name(ev->source), ev->seqnum);
	strbuf_quote(&line, ev->payload);
	strbuf_put_escaped(out, strbuf_str(&line));
	strbuf_puts(out, "\ntime: ");
	khistory_put_time(out, ev->timestamp);
	strbuf_putc(out, '\n');
	if (!then) {
		strbuf_printf(out,
			      "rules in force then: no longer kept (the history keeps at most %d "
			      "rule sets)\n\ntoday's rules: %zu in %zu file%s\n\n",
			      KHISTORY_GENERATIONS, now->n_rules, now->n_files,
			      now->n_files == 1 ? "" : "s");
		text_rules(now, ev, "today", out);
		return;
	}
	strbuf_printf(out, "rules in force then: %zu in %zu file%s\n\n", then->n_rules,
		      then->n_files, then->n_files == 1 ? "" : "s");
	text_rules(then, ev, "then", out);
	if (!differs) {
		strbuf_puts(out, "today's rules decide the same\n");
		return;
	}
	strbuf_printf(out, "today's rules decide differently: %zu in %zu file%s\n\n", now->n_rules,
		      now->n_files, now->n_files == 1 ? "" : "s");
	text_rules(now, ev, "today", out);
}

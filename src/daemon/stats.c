// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int kstats_init(struct kstats *s)
{
	*s = (struct kstats){.started_ns = now_monotonic_ns()};
	return hashmap_new(&s->rules);
}

void kstats_release(struct kstats *s)
{
	hashmap_free(s->rules, free);
	s->rules = NULL;
}

static void rule_key(const struct krule *r, struct strbuf *sb)
{
	strbuf_printf(sb, "%s\x1f%s", r->file->name, r->name);
}

/* rule_key() into buf when it fits (every match and every run looks a rule
 * up: no printf and no malloc on that path), else into sb.  NULL: no memory. */
static const char *rule_key_fast(const struct krule *r, char *buf, size_t size, struct strbuf *sb)
{
	size_t f = strlen(r->file->name), n = strlen(r->name);
	if (f + n + 2 > size) {
		rule_key(r, sb);
		return sb->oom ? NULL : sb->buf;
	}
	memcpy(buf, r->file->name, f);
	buf[f] = '\x1f';
	memcpy(buf + f + 1, r->name, n + 1);
	return buf;
}

struct krule_counters *kstats_rule(struct kstats *s, const struct krule *r)
{
	char buf[512];
	struct strbuf sb = STRBUF_INIT;
	const char *key = rule_key_fast(r, buf, sizeof(buf), &sb);
	struct krule_counters *c = key ? hashmap_get(s->rules, key) : NULL;
	if (!c && key) {
		c = calloc(1, sizeof(*c));
		if (c && hashmap_put(s->rules, key, c, NULL) < 0) {
			free(c);
			c = NULL;
		}
	}
	strbuf_release(&sb);
	return c;
}

static const struct krule_counters *lookup(const struct kstats *s, const struct krule *r)
{
	static const struct krule_counters zero;
	char buf[512];
	struct strbuf sb = STRBUF_INIT;
	const char *key = rule_key_fast(r, buf, sizeof(buf), &sb);
	const struct krule_counters *c = key ? hashmap_get(s->rules, key) : NULL;
	strbuf_release(&sb);
	return c ? c : &zero;
}

struct prune_ctx {
	struct hashmap *keep;
};

static int prune_one(const char *key, void *value, void *ud)
{
	struct prune_ctx *ctx = ud;
	if (hashmap_get(ctx->keep, key))
		return 0;
	free(value);
	return 1;
}

void kstats_prune(struct kstats *s, const struct kruleset *rs)
{
	struct prune_ctx ctx = {0};
	if (hashmap_new(&ctx.keep) < 0)
		return;
	struct strbuf key = STRBUF_INIT;
	for (size_t i = 0; i < rs->n_rules; i++) {
		strbuf_reset(&key);
		rule_key(rs->rules[i], &key);
		if (!key.oom)
			hashmap_put(ctx.keep, key.buf, (void *)1, NULL);
	}
	strbuf_release(&key);
	hashmap_sweep(s->rules, prune_one, &ctx);
	hashmap_free(ctx.keep, NULL);
}

void kstats_render_text(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *o)
{
	uint64_t up = (now_monotonic_ns() - s->started_ns) / 1000000000ull;
	strbuf_printf(o, "uptime: %" PRIu64 "s\n", up);
	strbuf_printf(o,
		      "rules: %zu in %zu files (reloads %" PRIu64 ", reload errors %" PRIu64 ")\n",
		      rs ? rs->n_rules : 0, rs ? rs->n_files : 0, s->reloads, s->reload_errors);
	strbuf_printf(o, "queue: %zu pending, %zu running, max %zu children, size %zu%s\n",
		      x->pending, x->running, x->max_children, x->queue_size,
		      x->paused ? " (full: sources paused)" : "");
	strbuf_printf(o, "%-10s %12s %12s %12s %12s\n", "source", "received", "rejected",
		      "overruns", "lost");
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		strbuf_printf(o, "%-10s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
			      kevent_source_name((enum kevent_source)i), s->received[i],
			      s->rejected[i], s->overruns[i], s->lost[i]);
	strbuf_printf(
		o, "events: handled %" PRIu64 ", rate-limited %" PRIu64 ", matched %" PRIu64 "\n",
		s->handled, s->ratelimited, s->matched);
	strbuf_printf(o,
		      "runs: %" PRIu64 ", failures %" PRIu64 ", timeouts %" PRIu64
		      ", rate-limited %" PRIu64 ", dry-run %" PRIu64 "\n",
		      s->runs, s->failures, s->timeouts, s->runs_ratelimited, s->dry_runs);
	strbuf_printf(o,
		      "control: clients %zu, refused %" PRIu64 ", bad requests %" PRIu64
		      ", over limit %" PRIu64 ", monitor drops %" PRIu64 "\n",
		      x->clients, s->ctl_refused, s->ctl_bad, s->ctl_over_limit,
		      s->monitor_dropped);
	for (size_t i = 0; rs && i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		const struct krule_counters *c = lookup(s, r);
		strbuf_printf(o,
			      "rule %s (%s): matched %" PRIu64 ", runs %" PRIu64
			      ", failures %" PRIu64 ", timeouts %" PRIu64 ", rate-limited %" PRIu64
			      "\n",
			      r->name, r->file->name, c->matched, c->runs, c->failures, c->timeouts,
			      c->ratelimited);
	}
}

static void kv(struct strbuf *o, const char *k, uint64_t v, bool comma)
{
	strbuf_printf(o, "\"%s\":%" PRIu64 "%s", k, v, comma ? "," : "");
}

void kstats_render_json(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *o)
{
	strbuf_puts(o, "{");
	kv(o, "uptime_seconds", (now_monotonic_ns() - s->started_ns) / 1000000000ull, true);
	strbuf_puts(o, "\"sources\":{");
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		strbuf_printf(o, "%s\"%s\":{", i ? "," : "",
			      kevent_source_name((enum kevent_source)i));
		kv(o, "received", s->received[i], true);
		kv(o, "rejected", s->rejected[i], true);
		kv(o, "overruns", s->overruns[i], true);
		kv(o, "lost", s->lost[i], false);
		strbuf_puts(o, "}");
	}
	strbuf_puts(o, "},\"events\":{");
	uint64_t received = 0, rejected = 0, overruns = 0;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		received += s->received[i];
		rejected += s->rejected[i];
		overruns += s->overruns[i];
	}
	kv(o, "received", received, true);
	kv(o, "rejected", rejected, true);
	kv(o, "overruns", overruns, true);
	kv(o, "handled", s->handled, true);
	kv(o, "ratelimited", s->ratelimited, true);
	kv(o, "matched", s->matched, true);
	kv(o, "pending", x->pending, false);
	strbuf_puts(o, "},\"runs\":{");
	kv(o, "started", s->runs, true);
	kv(o, "failures", s->failures, true);
	kv(o, "timeouts", s->timeouts, true);
	kv(o, "ratelimited", s->runs_ratelimited, true);
	kv(o, "dry_run", s->dry_runs, true);
	kv(o, "output_dropped_bytes", s->output_dropped_bytes, false);
	strbuf_puts(o, "},\"queue\":{");
	kv(o, "pending", x->pending, true);
	kv(o, "running", x->running, true);
	kv(o, "max_children", x->max_children, true);
	kv(o, "size", x->queue_size, true);
	kv(o, "paused_times", s->paused, true);
	strbuf_printf(o, "\"paused\":%s},\"control\":{", x->paused ? "true" : "false");
	kv(o, "clients", x->clients, true);
	kv(o, "refused", s->ctl_refused, true);
	kv(o, "bad_requests", s->ctl_bad, true);
	kv(o, "over_limit", s->ctl_over_limit, true);
	kv(o, "monitor_dropped", s->monitor_dropped, false);
	strbuf_puts(o, "},\"ruleset\":{");
	kv(o, "rules", rs ? rs->n_rules : 0, true);
	kv(o, "files", rs ? rs->n_files : 0, true);
	kv(o, "reloads", s->reloads, true);
	kv(o, "reload_errors", s->reload_errors, false);
	strbuf_puts(o, "},\"rules\":[");
	for (size_t i = 0; rs && i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		const struct krule_counters *c = lookup(s, r);
		strbuf_puts(o, i ? ",{\"name\":" : "{\"name\":");
		strbuf_json(o, r->name);
		strbuf_puts(o, ",\"file\":");
		strbuf_json(o, r->file->path);
		strbuf_putc(o, ',');
		kv(o, "matched", c->matched, true);
		kv(o, "runs", c->runs, true);
		kv(o, "failures", c->failures, true);
		kv(o, "timeouts", c->timeouts, true);
		kv(o, "ratelimited", c->ratelimited, false);
		strbuf_puts(o, "}");
	}
	strbuf_puts(o, "]}\n");
}

int kstatus_format_from_name(const char *name)
{
	if (strcmp(name, "text") == 0)
		return KSTATUS_TEXT;
	if (strcmp(name, "json") == 0)
		return KSTATUS_JSON;
	if (strcmp(name, "prometheus") == 0)
		return KSTATUS_PROMETHEUS;
	return -1;
}

/* A label value: backslash, double quote and newline escaped. */
static void prom_label(struct strbuf *o, const char *name, const char *value)
{
	strbuf_printf(o, "%s=\"", name);
	for (const char *p = value; *p; p++) {
		if (*p == '\\')
			strbuf_puts(o, "\\\\");
		else if (*p == '"')
			strbuf_puts(o, "\\\"");
		else if (*p == '\n')
			strbuf_puts(o, "\\n");
		else
			strbuf_putc(o, *p);
	}
	strbuf_putc(o, '"');
}

/* HELP and TYPE of a family; its samples follow. */
static void prom_family(struct strbuf *o, const char *name, const char *type, const char *help)
{
	strbuf_printf(o, "# HELP keventd_%s %s\n# TYPE keventd_%s %s\n", name, help, name, type);
}

static void prom_value(struct strbuf *o, const char *name, const char *type, const char *help,
		       uint64_t v)
{
	prom_family(o, name, type, help);
	strbuf_printf(o, "keventd_%s %" PRIu64 "\n", name, v);
}

static void prom_sources(struct strbuf *o, const char *name, const char *help,
			 const uint64_t v[KEVENT_SOURCE_MAX])
{
	prom_family(o, name, "counter", help);
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		strbuf_printf(o, "keventd_%s{", name);
		prom_label(o, "source", kevent_source_name((enum kevent_source)i));
		strbuf_printf(o, "} %" PRIu64 "\n", v[i]);
	}
}

void kstats_render_prometheus(const struct kstats *s, const struct kruleset *rs,
			      const struct kstatus_extra *x, struct strbuf *o)
{
	prom_family(o, "build_info", "gauge", "Always 1; the version label is keventd's.");
	strbuf_puts(o, "keventd_build_info{");
	prom_label(o, "version", KEVENT_VERSION);
	strbuf_puts(o, "} 1\n");
	prom_value(o, "uptime_seconds", "gauge", "Seconds since keventd started.",
		   (now_monotonic_ns() - s->started_ns) / 1000000000ull);

	prom_sources(o, "events_received_total", "Events accepted into keventd, per source.",
		     s->received);
	prom_sources(o, "events_rejected_total",
		     "Invalid input rejected at the edge, never handled, per source.", s->rejected);
	prom_sources(o, "receive_overruns_total",
		     "Receive buffer overruns (ENOBUFS): events lost in the kernel, per source.",
		     s->overruns);
	prom_sources(o, "events_lost_total",
		     "Events known lost (sequence number gaps), per source.", s->lost);

	prom_value(o, "events_handled_total", "counter",
		   "Events done: every handler run, or nothing to run.", s->handled);
	prom_value(o, "events_ratelimited_total", "counter",
		   "Events whose every run was suppressed by a rate limit.", s->ratelimited);
	prom_value(o, "events_matched_total", "counter", "Events that matched at least one rule.",
		   s->matched);
	prom_value(o, "events_pending", "gauge", "Events queued or being handled.", x->pending);

	prom_value(o, "handler_runs_total", "counter", "Handlers started.", s->runs);
	prom_value(o, "handler_failures_total", "counter",
		   "Handler runs that exited non-zero or were killed by a signal.", s->failures);
	prom_value(o, "handler_timeouts_total", "counter", "Handler runs killed on their timeout.",
		   s->timeouts);
	prom_value(o, "handler_ratelimited_total", "counter",
		   "Handler runs suppressed by a rule's rate limit.", s->runs_ratelimited);
	prom_value(o, "handler_dry_runs_total", "counter", "Handler runs only logged (--dry-run).",
		   s->dry_runs);
	prom_value(o, "handler_output_dropped_bytes_total", "counter",
		   "Bytes of handler output over the logging limit, not logged.",
		   s->output_dropped_bytes);

	prom_value(o, "queue_running", "gauge", "Handlers running now.", x->running);
	prom_value(o, "queue_max_children", "gauge", "Handlers allowed to run at once.",
		   x->max_children);
	prom_value(o, "queue_size", "gauge", "Events queued before the sources pause.",
		   x->queue_size);
	prom_value(o, "queue_paused", "gauge", "1 while the sources are paused on a full queue.",
		   x->paused);
	prom_value(o, "queue_pauses_total", "counter",
		   "Times the sources were paused on a full queue.", s->paused);

	prom_value(o, "control_clients", "gauge", "Clients connected to the control socket.",
		   x->clients);
	prom_value(o, "control_refused_total", "counter",
		   "Control socket peers refused by their credentials.", s->ctl_refused);
	prom_value(o, "control_bad_requests_total", "counter",
		   "Malformed or unknown control requests.", s->ctl_bad);
	prom_value(o, "control_over_limit_total", "counter",
		   "Control connections refused over the client limit.", s->ctl_over_limit);
	prom_value(o, "monitor_dropped_total", "counter",
		   "Events not shown to a monitor too slow to read them.", s->monitor_dropped);

	prom_value(o, "rules", "gauge", "Rules loaded.", rs ? rs->n_rules : 0);
	prom_value(o, "rule_files", "gauge", "Rule files loaded.", rs ? rs->n_files : 0);
	prom_value(o, "reloads_total", "counter", "Rule reloads.", s->reloads);
	prom_value(o, "reload_errors_total", "counter", "Rule reloads with a broken file.",
		   s->reload_errors);

	static const struct {
		const char *name, *help;
		size_t off;
	} per_rule[] = {
		{"rule_matched_total", "Events the rule matched.",
		 offsetof(struct krule_counters, matched)},
		{"rule_runs_total", "Handler runs of the rule.",
		 offsetof(struct krule_counters, runs)},
		{"rule_failures_total", "Failed handler runs of the rule.",
		 offsetof(struct krule_counters, failures)},
		{"rule_timeouts_total", "Handler runs of the rule killed on its timeout.",
		 offsetof(struct krule_counters, timeouts)},
		{"rule_ratelimited_total", "Handler runs of the rule suppressed by its rate limit.",
		 offsetof(struct krule_counters, ratelimited)},
	};
	for (size_t k = 0; k < ARRAY_SIZE(per_rule); k++) {
		prom_family(o, per_rule[k].name, "counter", per_rule[k].help);
		for (size_t i = 0; rs && i < rs->n_rules; i++) {
			const struct krule *r = rs->rules[i];
			const struct krule_counters *c = lookup(s, r);
			uint64_t v;
			memcpy(&v, (const char *)c + per_rule[k].off, sizeof(v));
			strbuf_printf(o, "keventd_%s{", per_rule[k].name);
			prom_label(o, "rule", r->name);
			strbuf_putc(o, ',');
			prom_label(o, "file", r->file->path);
			strbuf_printf(o, "} %" PRIu64 "\n", v);
		}
	}
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's counters, and their text and JSON renderings for status. */
#ifndef KEVENT_STATS_H
#define KEVENT_STATS_H

#include <stdint.h>

#include "event.h"
#include "hashmap.h"
#include "ruleset.h"
#include "util.h"

struct krule_counters {
	uint64_t matched, runs, failures, timeouts, ratelimited;
};

struct kstats {
	/* per source, at the edge */
	uint64_t received[KEVENT_SOURCE_MAX]; /* events accepted into the daemon */
	uint64_t rejected[KEVENT_SOURCE_MAX]; /* invalid input, never handled */
	uint64_t overruns[KEVENT_SOURCE_MAX]; /* receive buffer overruns (ENOBUFS) */
	uint64_t lost[KEVENT_SOURCE_MAX];     /* events known lost (seqnum gaps) */
	/* what became of accepted events: handled + ratelimited + queued = received */
	uint64_t handled;     /* every run done (or nothing to run) */
	uint64_t ratelimited; /* every run it would have done was suppressed */
	uint64_t matched;     /* events that matched at least one rule */
	/* handler runs */
	uint64_t runs, failures, timeouts, runs_ratelimited, dry_runs;
	uint64_t output_dropped_bytes;
	/* intake */
	uint64_t paused; /* times the sources were paused on a full queue */
	/* control socket */
	uint64_t ctl_refused, ctl_bad, ctl_over_limit, monitor_dropped;
	/* rules */
	uint64_t reloads, reload_errors;
	uint64_t started_ns;
	struct hashmap *rules; /* "file\x1fname" -> struct krule_counters */
};

int kstats_init(struct kstats *s);
void kstats_release(struct kstats *s);
/* The counters of rule r, created on first use; NULL only on ENOMEM. */
struct krule_counters *kstats_rule(struct kstats *s, const struct krule *r);
/* Drops the counters of rules no longer in rs. */
void kstats_prune(struct kstats *s, const struct kruleset *rs);

struct kstatus_extra {
	size_t pending, running, max_children, queue_size, clients;
	bool paused;
};

enum kstatus_format { KSTATUS_TEXT, KSTATUS_JSON, KSTATUS_PROMETHEUS };

/* "text", "json" or "prometheus"; -1 for anything else. */
int kstatus_format_from_name(const char *name);

void kstats_render_text(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *out);
void kstats_render_json(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *out);
/* The Prometheus text exposition format (version 0.0.4): the counters of
 * the JSON rendering, as keventd_* metric families. */
void kstats_render_prometheus(const struct kstats *s, const struct kruleset *rs,
			      const struct kstatus_extra *x, struct strbuf *out);

#endif

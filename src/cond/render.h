/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A condition row as every output says it (keventctl conditions as text
 * and JSON, its --check line, the Prometheus text): one struct, each
 * rendering from it.  Pure.
 */
#ifndef KEVENT_COND_RENDER_H
#define KEVENT_COND_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "table.h"
#include "util.h"

/* Whether r is listed: it holds, or all and it was cleared. */
static inline bool kcond_row_listed(const struct kcond_row *r, bool all)
{
	return all || kcond_row_holds(r);
}

/* The text: a head line, then a line per row (and its acknowledgement,
 * reminder or clearing under it), then the count of those that hold. */
void kcond_render_text_head(struct strbuf *sb);
void kcond_render_text(struct strbuf *sb, const struct kcond_row *r);
struct kcond_counts {
	size_t holding, acked, by_severity[3];
};
void kcond_count(struct kcond_counts *c, const struct kcond_row *r);
void kcond_render_text_foot(struct strbuf *sb, const struct kcond_counts *c);

/* JSON: one object per row, a line each (JSON Lines). */
void kcond_render_json(struct strbuf *sb, const struct kcond_row *r);

/* The monitoring plugin's line (Nagios/Icinga plugin conventions) of the
 * rows that hold, of the conditions named in names (a comma-separated
 * list; NULL or "": all): its status 0 (none), 1 (a warning or info),
 * 2 (a critical one). */
int kcond_render_check(struct strbuf *sb, struct kcond_row *const *rows, size_t n,
		       const char *names);

/* Prometheus: keventd_condition{condition,object,severity} 1 and
 * keventd_condition_since_seconds{...} of a row that holds. */
void kcond_render_prometheus_help(struct strbuf *sb);
void kcond_render_prometheus(struct strbuf *sb, const struct kcond_row *r);

/* Alertmanager (its API v2, POST /api/v2/alerts): r as one alert object,
 * labels alertname (the condition), instance, object (the row's key),
 * severity and the pairs of extra (name, value, ...: n_extra of them);
 * annotations summary ("SIGNAL on OBJECT" of the last set event) and
 * description (its payload, at most KCOND_ALERT_DESCRIPTION bytes, cut at
 * a character); startsAt its since; endsAt ends_at (ns since the epoch),
 * or the time it cleared when it no longer holds. */
#define KCOND_ALERT_DESCRIPTION 1024
void kcond_render_alert(struct strbuf *sb, const struct kcond_row *r, const char *instance,
			const char *const *extra, size_t n_extra, uint64_t ends_at);

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/* A condition row as every output says it (render.h). */
#include "render.h"

#include <inttypes.h>
#include <string.h>

#include "cond.h"

#define NAME_WIDTH 24

void kcond_render_text_head(struct strbuf *sb)
{
	strbuf_printf(sb, "%-*s %-8s %-20s %6s  %s\n", NAME_WIDTH, "CONDITION", "SEVERITY", "SINCE",
		      "COUNT", "OBJECT");
}

void kcond_render_text(struct strbuf *sb, const struct kcond_row *r)
{
	strbuf_printf(sb, "%-*s %-8s ", NAME_WIDTH, r->name,
		      kcond_row_holds(r) ? kcond_severity_name(r->severity) : "cleared");
	kcond_put_time(sb, r->since);
	strbuf_printf(sb, " %6" PRIu64 "  ", r->count);
	strbuf_put_escaped(sb, r->key);
	strbuf_putc(sb, '\n');
	if (!kcond_row_holds(r)) {
		strbuf_puts(sb, "  cleared at ");
		kcond_put_time(sb, r->cleared);
		strbuf_puts(sb, ": ");
		strbuf_put_escaped(sb, r->reason ? r->reason : "?");
		strbuf_putc(sb, '\n');
		return;
	}
	if (r->acked_at) {
		strbuf_puts(sb, "  acknowledged by ");
		strbuf_put_escaped(sb, r->acked_by ? r->acked_by : "?");
		strbuf_puts(sb, " at ");
		kcond_put_time(sb, r->acked_at);
		if (r->note) {
			strbuf_puts(sb, ": ");
			strbuf_put_escaped(sb, r->note);
		}
		strbuf_putc(sb, '\n');
	}
	if (r->next_remind) {
		strbuf_puts(sb, "  next reminder ");
		kcond_put_time(sb, r->next_remind);
		strbuf_putc(sb, '\n');
	}
}

void kcond_count(struct kcond_counts *c, const struct kcond_row *r)
{
	if (!kcond_row_holds(r))
		return;
	c->holding++;
	c->acked += r->acked_at != 0;
	if (r->severity < ARRAY_SIZE(c->by_severity))
		c->by_severity[r->severity]++;
}

void kcond_render_text_foot(struct strbuf *sb, const struct kcond_counts *c)
{
	if (!c->holding) {
		strbuf_puts(sb, "no condition holds\n");
		return;
	}
	strbuf_printf(sb,
		      "%zu condition%s hold%s: %zu critical, %zu warning, %zu info; %zu "
		      "acknowledged\n",
		      c->holding, c->holding == 1 ? "" : "s", c->holding == 1 ? "s" : "",
		      c->by_severity[KCOND_CRITICAL], c->by_severity[KCOND_WARNING],
		      c->by_severity[KCOND_INFO], c->acked);
}

/* ,"KEY": as one literal, its length known (no printf, no strlen: the
 * rows of a large table are many) */
#define JSON_KEY(key) ",\"" key "\":", sizeof(",\"" key "\":") - 1

static void json_u64(struct strbuf *sb, const char *key, size_t len, uint64_t v)
{
	strbuf_add(sb, key, len);
	strbuf_put_u64(sb, v);
}

static void json_time(struct strbuf *sb, const char *key, size_t len, uint64_t ns)
{
	strbuf_add(sb, key, len);
	if (!ns) {
		strbuf_add(sb, "null", 4);
		return;
	}
	strbuf_putc(sb, '"');
	kcond_put_time(sb, ns);
	strbuf_putc(sb, '"');
}

static void json_str(struct strbuf *sb, const char *key, size_t len, const char *v)
{
	strbuf_add(sb, key, len);
	if (v)
		strbuf_json(sb, v);
	else
		strbuf_add(sb, "null", 4);
}

void kcond_render_json(struct strbuf *sb, const struct kcond_row *r)
{
	strbuf_puts(sb, "{\"condition\":");
	strbuf_json(sb, r->name);
	json_str(sb, JSON_KEY("key"), r->key);
	json_str(sb, JSON_KEY("object"), r->object);
	json_str(sb, JSON_KEY("type"), kevent_type_name(r->type));
	json_str(sb, JSON_KEY("source"), kevent_source_name(r->source));
	json_str(sb, JSON_KEY("severity"), kcond_severity_name(r->severity));
	strbuf_puts(sb, kcond_row_holds(r) ? ",\"holds\":true" : ",\"holds\":false");
	json_time(sb, JSON_KEY("since"), r->since);
	json_u64(sb, JSON_KEY("since_ns"), r->since);
	json_u64(sb, JSON_KEY("count"), r->count);
	strbuf_puts(sb, ",\"last\":{\"seqnum\":");
	strbuf_put_u64(sb, r->last_seqnum);
	json_time(sb, JSON_KEY("time"), r->last_time);
	json_str(sb, JSON_KEY("signal"), r->last_signal);
	json_str(sb, JSON_KEY("payload"), r->last_payload);
	strbuf_puts(sb, "},\"acked\":");
	if (r->acked_at) {
		strbuf_puts(sb, "{\"by\":");
		strbuf_json(sb, r->acked_by ? r->acked_by : "");
		json_time(sb, JSON_KEY("at"), r->acked_at);
		json_str(sb, JSON_KEY("note"), r->note);
		strbuf_putc(sb, '}');
	} else {
		strbuf_puts(sb, "null");
	}
	json_time(sb, JSON_KEY("next_reminder"), r->next_remind);
	json_u64(sb, JSON_KEY("reminders"), r->reminds);
	json_time(sb, JSON_KEY("cleared"), r->cleared);
	json_str(sb, JSON_KEY("reason"), r->reason);
	strbuf_puts(sb, "}\n");
}

/* Whether name is one of the comma-separated names (all when none). */
static bool named(const char *names, const char *name)
{
	if (!names || !*names)
		return true;
	size_t n = strlen(name);
	for (const char *p = names; *p;) {
		size_t l = strcspn(p, ",");
		if (l == n && memcmp(p, name, n) == 0)
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

int kcond_render_check(struct strbuf *sb, struct kcond_row *const *rows, size_t n,
		       const char *names)
{
	struct kcond_counts c = {0};
	for (size_t i = 0; i < n; i++)
		if (kcond_row_holds(rows[i]) && named(names, rows[i]->name))
			kcond_count(&c, rows[i]);
	int status = c.by_severity[KCOND_CRITICAL] ? 2 : c.holding ? 1 : 0;
	static const char *const word[] = {"OK", "WARNING", "CRITICAL"};
	strbuf_printf(sb, "CONDITIONS %s - ", word[status]);
	if (!c.holding) {
		strbuf_puts(sb, "no condition holds");
	} else {
		strbuf_printf(sb,
			      "%zu critical, %zu warning, %zu info:", c.by_severity[KCOND_CRITICAL],
			      c.by_severity[KCOND_WARNING], c.by_severity[KCOND_INFO]);
		/* the worst first, as many as a line takes */
		size_t said = 0;
		for (int sev = KCOND_CRITICAL; sev >= KCOND_INFO; sev--)
			for (size_t i = 0; i < n; i++) {
				const struct kcond_row *r = rows[i];
				if (!kcond_row_holds(r) || r->severity != sev ||
				    !named(names, r->name))
					continue;
				if (said++ == 5) {
					strbuf_printf(sb, " and %zu more", c.holding - 5);
					goto done;
				}
				strbuf_puts(sb, said > 1 ? ", " : " ");
				strbuf_puts(sb, r->name);
				strbuf_putc(sb, ' ');
				strbuf_put_escaped(sb, r->key);
				if (r->acked_at)
					strbuf_puts(sb, " (acknowledged)");
			}
	}
done:
	/* performance data */
	strbuf_printf(sb, " | critical=%zu warning=%zu info=%zu acknowledged=%zu\n",
		      c.by_severity[KCOND_CRITICAL], c.by_severity[KCOND_WARNING],
		      c.by_severity[KCOND_INFO], c.acked);
	return status;
}

/* A label value of the Prometheus text format: \, " and newline escaped. */
static void prom_label(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			strbuf_putc(sb, '\\'), strbuf_putc(sb, *s);
		else if (*s == '\n')
			strbuf_puts(sb, "\\n");
		else
			strbuf_putc(sb, *s);
	}
}

void kcond_render_prometheus_help(struct strbuf *sb)
{
	strbuf_puts(sb,
		    "# HELP keventd_condition A condition that holds (keventd.rules(5)).\n"
		    "# TYPE keventd_condition gauge\n"
		    "# HELP keventd_condition_since_seconds When a condition that holds was set.\n"
		    "# TYPE keventd_condition_since_seconds gauge\n");
}

void kcond_render_prometheus(struct strbuf *sb, const struct kcond_row *r)
{
	if (!kcond_row_holds(r))
		return;
	for (int i = 0; i < 2; i++) {
		strbuf_puts(sb, i ? "keventd_condition_since_seconds{condition=\""
				  : "keventd_condition{condition=\"");
		prom_label(sb, r->name);
		strbuf_puts(sb, "\",object=\"");
		prom_label(sb, r->key);
		strbuf_printf(sb, "\",severity=\"%s\"} ", kcond_severity_name(r->severity));
		if (i)
			strbuf_printf(sb, "%" PRIu64 "\n", (uint64_t)(r->since / KCOND_NS_PER_S));
		else
			strbuf_puts(sb, "1\n");
	}
}

/* An RFC 3339 time in UTC, to the second. */
static void alert_time(struct strbuf *sb, const char *key, uint64_t ns)
{
	strbuf_printf(sb, ",\"%s\":\"", key);
	kcond_put_time(sb, ns);
	strbuf_putc(sb, '"');
}

static void alert_label(struct strbuf *sb, const char *name, const char *value, bool first)
{
	strbuf_puts(sb, first ? "\"" : ",\"");
	strbuf_puts(sb, name);
	strbuf_puts(sb, "\":");
	strbuf_json(sb, value && *value ? value : "-");
}

void kcond_render_alert(struct strbuf *sb, const struct kcond_row *r, const char *instance,
			const char *const *extra, size_t n_extra, uint64_t ends_at)
{
	strbuf_puts(sb, "{\"labels\":{");
	alert_label(sb, "alertname", r->name, true);
	alert_label(sb, "instance", instance, false);
	alert_label(sb, "object", r->key, false);
	alert_label(sb, "severity", kcond_severity_name(r->severity), false);
	for (size_t i = 0; i < n_extra; i++)
		alert_label(sb, extra[2 * i], extra[2 * i + 1], false);
	strbuf_puts(sb, "},\"annotations\":{\"summary\":");
	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;
	strbuf_printf(&t, "%s on %s", r->last_signal && *r->last_signal ? r->last_signal : "set",
		      r->object ? r->object : r->key);
	strbuf_json(sb, strbuf_str(&t));
	strbuf_reset(&t);
	const char *d = r->last_payload ? r->last_payload : "";
	size_t n = strlen(d);
	if (n > KCOND_ALERT_DESCRIPTION) {
		/* cut before a UTF-8 continuation byte's character */
		n = KCOND_ALERT_DESCRIPTION;
		while (n && ((unsigned char)d[n] & 0xc0) == 0x80)
			n--;
	}
	strbuf_add(&t, d, n);
	strbuf_puts(sb, ",\"description\":");
	strbuf_json(sb, strbuf_str(&t));
	strbuf_putc(sb, '}');
	alert_time(sb, "startsAt", r->since);
	alert_time(sb, "endsAt", kcond_row_holds(r) ? ends_at : r->cleared);
	strbuf_putc(sb, '}');
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The counters of status: every one in the text, JSON and Prometheus
 * renderings with its value, spelled as keventctl(8) documents, byte for
 * byte as keventctl status prints them. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "stats.h"
#include "testutil.h"
#include "util.h"

#define POWER "/etc/keventd/rules.d/10-power.yaml"
#define DISK  "/etc/keventd/rules.d/20-disk.yaml"

/* Every counter a distinct three-digit value: none is a prefix of another,
 * and each can be counted in the output. */
enum where { SET_NONE, SET_STATS, SET_EXTRA };

struct counter_case {
	const char *what;
	enum where where; /* SET_NONE: the fixture sets it (uptime, sums, flag) */
	size_t off;	  /* into struct kstats (uint64_t) or kstatus_extra (size_t) */
	uint64_t value;
	/* what each rendering shows, once; NULL: that rendering does not show it */
	const char *text, *json, *prom;
};

#define S(f) SET_STATS, offsetof(struct kstats, f)
#define X(f) SET_EXTRA, offsetof(struct kstatus_extra, f)

/* clang-format off */
static const struct counter_case counters[] = {
	{"uptime", SET_NONE, 0, 42, "uptime: 42s\n", "{\"uptime_seconds\":42,", "keventd_uptime_seconds 42\n"},
	{"received, all sources", SET_NONE, 0, 7518, NULL, "\"events\":{\"received\":7518,", NULL},
	{"rejected, all sources", SET_NONE, 0, 7758, NULL, ",\"rejected\":7758,", NULL},
	{"overruns, all sources", SET_NONE, 0, 7998, NULL, ",\"overruns\":7998,", NULL},
	{"handled", S(handled), 201, "handled 201", "\"handled\":201", "keventd_events_handled_total 201\n"},
	{"events rate-limited", S(ratelimited), 202, "rate-limited 202", "\"ratelimited\":202", "keventd_events_ratelimited_total 202\n"},
	{"events debounced", S(events_debounced), 204, "debounced 204", "\"debounced\":204", "keventd_events_debounced_total 204\n"},
	{"matched", S(matched), 203, "matched 203", "\"matched\":203", "keventd_events_matched_total 203\n"},
	{"pending (events)", X(pending), 301, NULL, ",\"pending\":301}", "keventd_events_pending 301\n"},
	{"runs", S(runs), 211, "runs: 211,", "\"started\":211", "keventd_handler_runs_total 211\n"},
	{"failures", S(failures), 212, "failures 212", "\"failures\":212", "keventd_handler_failures_total 212\n"},
	{"timeouts", S(timeouts), 213, "timeouts 213", "\"timeouts\":213", "keventd_handler_timeouts_total 213\n"},
	{"runs rate-limited", S(runs_ratelimited), 214, "rate-limited 214", "\"ratelimited\":214", "keventd_handler_ratelimited_total 214\n"},
	{"dry runs", S(dry_runs), 215, "dry-run 215", "\"dry_run\":215", "keventd_handler_dry_runs_total 215\n"},
	{"debounced", S(debounced), 219, "debounced 219", "\"debounced\":219", "keventd_handler_debounced_total 219\n"},
	{"oom kills", S(oom_kills), 218, "oom kills 218", "\"oom_kills\":218", "keventd_handler_oom_kills_total 218\n"},
	{"transient", S(transient), 220, "transient 220", "\"transient\":220", "keventd_handler_transient_total 220\n"},
	{"no session", S(session_skipped), 221, "no session 221", "\"session_skipped\":221", "keventd_handler_session_skipped_total 221\n"},
	{"containment: cgroup", SET_NONE, 0, 1, " (containment: cgroup)", "\"containment_cgroup\":true", "keventd_handler_containment_cgroup 1\n"},
	{"containment: process group", SET_NONE, 0, 1, " (containment: process-group)\n", "\"containment_process_group\":true", NULL},
	{"output dropped", S(output_dropped_bytes), 216, NULL, "\"output_dropped_bytes\":216", "keventd_handler_output_dropped_bytes_total 216\n"},
	{"rate-limit table full", S(runs_ratelimit_full), 217, NULL, "\"ratelimit_full\":217", "keventd_handler_ratelimit_full_total 217\n"},
	{"pending (queue)", X(pending), 301, "301 pending", "{\"pending\":301,", NULL},
	{"running", X(running), 302, "302 running", "\"running\":302", "keventd_queue_running 302\n"},
	{"max children", X(max_children), 303, "max 303 children", "\"max_children\":303", "keventd_queue_max_children 303\n"},
	{"queue size", X(queue_size), 304, "size 304", "\"size\":304", "keventd_queue_size 304\n"},
	{"paused now", SET_NONE, 0, 1, " (a source is paused: its share is full)\n", "\"paused\":true}", "keventd_queue_paused 1\n"},
	{"pauses, all sources", SET_NONE, 0, 9198, NULL, "\"paused_times\":9198,", "keventd_queue_pauses_total 9198\n"},
	{"clients", X(clients), 305, "clients 305", "\"clients\":305", "keventd_control_clients 305\n"},
	{"refused", S(ctl_refused), 231, "refused 231", "\"refused\":231", "keventd_control_refused_total 231\n"},
	{"bad requests", S(ctl_bad), 232, "bad requests 232", "\"bad_requests\":232", "keventd_control_bad_requests_total 232\n"},
	{"over limit", S(ctl_over_limit), 233, "over limit 233", "\"over_limit\":233", "keventd_control_over_limit_total 233\n"},
	{"monitor drops", X(monitor_dropped), 234, "monitor drops 234", "\"monitor_dropped\":234", "keventd_monitor_dropped_total 234\n"},
	{"over user limit", S(ctl_over_user), 235, "over user limit 235", "\"over_user_limit\":235", "keventd_control_over_user_limit_total 235\n"},
	{"root slot refusals", S(ctl_root_slot), 236, "root slot refusals 236", "\"root_slot_refused\":236", "keventd_control_root_slot_refused_total 236\n"},
	{"idle dropped", S(ctl_idle_dropped), 237, "idle dropped 237", "\"idle_dropped\":237", "keventd_control_idle_dropped_total 237\n"},
	{"triggers refused", S(ctl_trigger_refused), 249, "triggers refused 249", "\"triggers_refused\":249", "keventd_control_triggers_refused_total 249\n"},
	{"history entries", X(history_len), 306, "history: 306 of", "\"entries\":306", "keventd_history_entries 306\n"},
	{"history capacity", X(history_capacity), 307, "of 307 events", "\"capacity\":307", "keventd_history_capacity 307\n"},
	{"history bytes", X(history_bytes), 308, "308 bytes", "\"bytes\":308", "keventd_history_bytes 308\n"},
	{"history not kept", X(history_lost), 238, "not kept 238", "\"not_kept\":238", "keventd_history_not_kept_total 238\n"},
	{"journal failing", SET_NONE, 0, 1, "journal: failing (No space left on device), 311 bytes", "{\"failing\":\"No space left on device\",", "keventd_journal_failing 1\n"},
	{"journal bytes", X(journal_bytes), 311, "311 bytes", "\"bytes\":311,", "keventd_journal_bytes 311\n"},
	{"journal unfinished", X(journal_live), 312, "(312 unfinished)", "\"unfinished\":312", "keventd_journal_unfinished 312\n"},
	{"journal corrupt", X(journal_corrupt), 313, "corrupt 313", "\"corrupt\":313", "keventd_journal_corrupt_total 313\n"},
	{"journal writes", X(journal_writes), 314, "314 writes", "\"writes\":314", "keventd_journal_writes_total 314\n"},
	{"journal refused", S(journal_refused), 259, "refused 259", "\"refused\":259", "keventd_journal_refused_total 259\n"},
	{"journal full times", S(journal_full), 239, "full 239 times", "\"full_times\":239", "keventd_journal_full_total 239\n"},
	{"journal full now", SET_NONE, 0, 1, " (full: intake paused)\n", "\"full\":true}", "keventd_journal_full 1\n"},
	{"mqtt off", SET_NONE, 0, 1, "mqtt: off", NULL, NULL},
	{"mqtt enabled", SET_NONE, 0, 1, NULL, "{\"enabled\":true,", "keventd_mqtt_enabled 1\n"},
	{"mqtt connected", SET_NONE, 0, 1, "offconnected", "\"connected\":true,", "keventd_mqtt_connected 1\n"},
	{"mqtt disconnected", SET_NONE, 0, 1, "connecteddisconnected (", NULL, NULL},
	{"mqtt published", X(mqtt_published), 251, "(published 251", "\"published\":251", "keventd_mqtt_published_total 251\n"},
	{"mqtt acknowledged", X(mqtt_acked), 252, "acknowledged 252", "\"acknowledged\":252", "keventd_mqtt_acknowledged_total 252\n"},
	{"mqtt spooled", X(mqtt_spooled), 309, "spooled 309", "\"spooled\":309", "keventd_mqtt_spooled 309\n"},
	{"mqtt dropped", X(mqtt_dropped), 253, "dropped 253", "\"dropped\":253", "keventd_mqtt_dropped_total 253\n"},
	{"mqtt received", X(mqtt_received), 254, "received 254", "\"received\":254", "keventd_mqtt_received_total 254\n"},
	{"mqtt duplicates", X(mqtt_duplicates), 257, "duplicates 257", "\"duplicates\":257", "keventd_mqtt_duplicates_total 257\n"},
	{"mqtt corrupt", X(mqtt_corrupt), 256, "corrupt 256", "\"corrupt\":256", "keventd_mqtt_spool_corrupt_total 256\n"},
	{"mqtt connection attempts", X(mqtt_attempts), 255, "connection attempts 255)", "\"connection_attempts\":255,", "keventd_mqtt_connection_attempts_total 255\n"},
	{"mqtt publishing", SET_NONE, 0, 1, "; publishing off (spool /x: \\x1b broken)\n", "\"publishing\":\"off (spool /x: \\u001b broken)\"}", "keventd_mqtt_publishing 1\n"},
	{"conditions off", SET_NONE, 0, 1, "conditions: off (--lib-dir none, or not in --sources)", NULL, NULL},
	{"conditions holding", X(cond_holding), 501, "501 holding", "\"holding\":501", "keventd_conditions_holding 501\n"},
	{"conditions critical", X(cond_critical), 502, "502 critical", "\"critical\":502", "keventd_conditions_critical 502\n"},
	{"conditions warning", X(cond_warning), 503, "503 warning", "\"warning\":503", "keventd_conditions_warning 503\n"},
	{"conditions info", X(cond_info), 504, "504 info", "\"info\":504", "keventd_conditions_info 504\n"},
	{"conditions acknowledged", X(cond_acked), 505, "505 acknowledged", "\"acknowledged\":505", "keventd_conditions_acknowledged 505\n"},
	{"conditions refused", X(cond_refused), 506, "refused 506", "\"refused\":506", "keventd_conditions_refused_total 506\n"},
	{"conditions write errors", X(cond_write_errors), 507, "write errors 507", "\"write_errors\":507", "keventd_conditions_write_errors_total 507\n"},
	{"rules", SET_NONE, 0, 3, "rules: 3 in", "\"rules\":3,", "keventd_rules 3\n"},
	{"rule files", SET_NONE, 0, 2, "in 2 files", "\"files\":2,", "keventd_rule_files 2\n"},
	{"reloads", S(reloads), 241, "reloads 241", "\"reloads\":241", "keventd_reloads_total 241\n"},
	{"reload errors", S(reload_errors), 242, "reload errors 242", "\"reload_errors\":242", "keventd_reload_errors_total 242\n"},
};
/* clang-format on */

/* Per source: source i holds base + i, the bases 20 apart (room for 20
 * sources, no value twice); column of the text table from 0 (-1: not in
 * the text). */
struct source_case {
	enum where where; /* uint64_t[] in struct kstats, or size_t[] in kstatus_extra */
	size_t off;
	uint64_t base;
	int column;
	const char *json, *prom;
};

/* clang-format off */
static const struct source_case per_source[] = {
	{S(received), 621, 0, "received", "events_received_total"},
	{S(recovered), 781, 1, "recovered", "events_recovered_total"},
	{S(redelivered), 601, 2, "redelivered", "events_redelivered_total"},
	{S(rejected), 641, 3, "rejected", "events_rejected_total"},
	{S(overruns), 661, 4, "overruns", "receive_overruns_total"},
	{S(lost), 681, 5, "lost", "events_lost_total"},
	{S(truncated), 701, 6, "truncated", "events_truncated_total"},
	{X(source_pending), 721, 7, "pending", "queue_source_pending"},
	{X(source_share), 741, 8, "share", "queue_source_share"},
	{S(paused), 761, -1, "paused_times", "queue_source_pauses_total"},
	{S(resynced), 801, -1, "resynced", "events_resynced_total"},
	{S(handled_by), 821, -1, "handled", "source_events_handled_total"},
	{S(ratelimited_by), 841, -1, "ratelimited", "source_events_ratelimited_total"},
	{S(debounced_by), 861, -1, "debounced", "source_events_debounced_total"},
};
/* clang-format on */

/* The column of the per-source flag "paused", and the source that has it set. */
#define PAUSED_COLUMN 9
#define PAUSED_SOURCE KEVENT_SOURCE_SOCKET

/* Per rule: rule i of the fixture holds base[i] + k, 0 for none. */
struct rule_case {
	size_t off;
	unsigned k;
	const char *text, *json, *prom;
};

/* clang-format off */
static const struct rule_case per_rule[] = {
	{offsetof(struct krule_counters, matched), 1, "matched", "matched", "rule_matched_total"},
	{offsetof(struct krule_counters, runs), 2, "runs", "runs", "rule_runs_total"},
	{offsetof(struct krule_counters, failures), 3, "failures", "failures", "rule_failures_total"},
	{offsetof(struct krule_counters, timeouts), 4, "timeouts", "timeouts", "rule_timeouts_total"},
	{offsetof(struct krule_counters, ratelimited), 5, "rate-limited", "ratelimited", "rule_ratelimited_total"},
	{offsetof(struct krule_counters, debounced), 6, "debounced", "debounced", "rule_debounced_total"},
};
/* clang-format on */

static const uint64_t rule_base[] = {400, 0, 410}; /* on-high, on-low, spin-down */

struct fixture {
	struct kstats s;
	struct kstatus_extra x;
	struct kruleset *rs;
	struct strbuf text, json, prom;
};

static struct kruleset *ruleset(bool with_disk)
{
	struct kfile *f[2] = {
		tu_parse("rules:\n  - name: on-high\n  - name: 'on-low \"q\" \\ end'\n", POWER),
		with_disk ? tu_parse("rules:\n  - name: spin-down\n", DISK) : NULL,
	};
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_from_files(f, with_disk ? 2 : 1, &rs), 0);
	kfile_unref(f[0]);
	kfile_unref(f[1]);
	return rs;
}

static void render(struct fixture *fx)
{
	strbuf_reset(&fx->text);
	strbuf_reset(&fx->json);
	strbuf_reset(&fx->prom);
	/* 42 s ago: the uptime reads 42 for a second to come */
	fx->s.started_ns = now_monotonic_ns() - 42000000000ull;
	kstats_render_text(&fx->s, fx->rs, &fx->x, &fx->text);
	kstats_render_json(&fx->s, fx->rs, &fx->x, &fx->json);
	kstats_render_prometheus(&fx->s, fx->rs, &fx->x, &fx->prom);
	assert_false(fx->text.oom || fx->json.oom || fx->prom.oom);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	assert_int_equal(kstats_init(&fx->s), 0);
	fx->text = fx->json = fx->prom = (struct strbuf)STRBUF_INIT;
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
		const struct counter_case *c = &counters[i];
		if (c->where == SET_STATS)
			*(uint64_t *)((char *)&fx->s + c->off) = c->value;
		else if (c->where == SET_EXTRA)
			*(size_t *)((char *)&fx->x + c->off) = c->value;
	}
	for (size_t k = 0; k < ARRAY_SIZE(per_source); k++)
		for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
			if (per_source[k].where == SET_STATS)
				((uint64_t *)((char *)&fx->s + per_source[k].off))[i] =
					per_source[k].base + i;
			else
				((size_t *)((char *)&fx->x + per_source[k].off))[i] =
					per_source[k].base + i;
		}
	fx->x.paused = true;
	fx->x.journal_full = true;
	fx->x.journal_failing = "No space left on device";
	fx->x.journal_failing_flag = true;
	fx->x.cgroup = true; /* both, so that every row shows */
	fx->x.process_group = true;
	fx->x.mqtt_off = fx->x.mqtt_enabled = true; /* all of them, likewise */
	fx->x.mqtt_connected = fx->x.mqtt_disconnected = true;
	fx->x.mqtt_publishing = true; /* and the words of off: every row shows */
	fx->x.cond_off = true;
	fx->x.mqtt_off_why = "spool /x: \x1b broken";
	fx->x.mqtt_publishing_text = "off (spool /x: \x1b broken)";
	fx->x.source_paused[PAUSED_SOURCE] = true;
	/* two notification targets: one sends, one is off with its words */
	fx->x.notify_enabled = true;
	fx->x.notify_n = 2;
	fx->x.notify_damaged = 261;
	fx->x.notify_unknown = 262;
	fx->x.notify[0] = (struct kstatus_notify){.name = "ops-mail",
						  .sent = 263,
						  .queued = 264,
						  .retried = 265,
						  .failed = 266,
						  .dropped = 267,
						  .sending = true,
						  .off = "password_file /x: \x1b unreadable",
						  .last_error = "535 5.7.8 \x1b no"};
	fx->x.notify[1] = (struct kstatus_notify){.name = "phone",
						  .sent = 268,
						  .queued = 269,
						  .retried = 270,
						  .failed = 271,
						  .dropped = 272,
						  .off = "token_file /x: may be read by others"};
	/* the Alertmanager output: up and down both, so that every row shows */
	fx->x.am_enabled = fx->x.am_up = fx->x.am_down = true;
	fx->x.am_posts = 281;
	fx->x.am_failed = 282;
	fx->x.am_alerts = 283;
	fx->x.am_resolved = 284;
	fx->x.am_off = "password_file /a: \x1b unreadable";
	fx->x.am_last_error = "HTTP 500: \x1b boom";
	/* the users socket: the system's side shown in the text */
	fx->x.users_server = true;
	fx->x.users_peers = 291;
	fx->x.users_sent = 292;
	fx->x.users_withheld = 293;
	fx->x.users_dropped = 294;
	fx->x.users_refused = 295;
	fx->x.users_connected = 1;
	fx->x.users_received = 296;
	fx->x.users_dropped_at_system = 297;
	fx->x.users_bad = 298;
	fx->rs = ruleset(true);
	/* a file that is broken now: a line of its own, and its error */
	fx->rs->broken = calloc(1, sizeof(*fx->rs->broken));
	assert_non_null(fx->rs->broken);
	fx->rs->broken[0].name = strdup("30-bad.yaml");
	fx->rs->broken[0].why = strdup("/etc/keventd/rules.d/30-bad.yaml:3:5: error: unknown key "
				       "'timout' in rule: did you mean timeout?");
	fx->rs->n_broken = 1;
	for (size_t i = 0; i < fx->rs->n_rules; i++) {
		if (!rule_base[i])
			continue; /* never counted: renders zeros */
		struct krule_counters *rc = kstats_rule(&fx->s, fx->rs->rules[i]);
		assert_non_null(rc);
		for (size_t k = 0; k < ARRAY_SIZE(per_rule); k++)
			*(uint64_t *)((char *)rc + per_rule[k].off) = rule_base[i] + per_rule[k].k;
	}
	render(fx);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	kruleset_free(fx->rs);
	kstats_release(&fx->s);
	strbuf_release(&fx->text);
	strbuf_release(&fx->json);
	strbuf_release(&fx->prom);
	free(fx);
	return 0;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Occurrences of the decimal number v, not as part of a longer number. */
static size_t count_number(const char *hay, uint64_t v)
{
	char num[24];
	snprintf(num, sizeof(num), "%" PRIu64, v);
	size_t n = 0, len = strlen(num);
	for (const char *p = hay; (p = strstr(p, num)); p += len)
		if ((p == hay || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[len]))
			n++;
	return n;
}

static void check_once(const char *format, const char *out, const char *what, const char *want)
{
	if (count(out, want) != 1)
		fail_msg("%s: %s shows \"%s\" %zu times, not once:\n%s", what, format, want,
			 count(out, want), out);
}

/* Each counter with its value, once, in each rendering that shows it; and
 * its value nowhere else. */
static void test_counters(void **state)
{
	struct fixture *fx = *state;
	const char *out[3] = {strbuf_str(&fx->text), strbuf_str(&fx->json), strbuf_str(&fx->prom)};
	static const char *const format[3] = {"text", "JSON", "Prometheus"};
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
		const struct counter_case *c = &counters[i];
		const char *want[3] = {c->text, c->json, c->prom};
		for (int f = 0; f < 3; f++) {
			if (want[f])
				check_once(format[f], out[f], c->what, want[f]);
			if (c->value < 100)
				continue; /* small numbers are everywhere */
			size_t n = 0;	  /* cases sharing the value: pending */
			for (size_t j = 0; j < ARRAY_SIZE(counters); j++) {
				const char *w[3] = {counters[j].text, counters[j].json,
						    counters[j].prom};
				n += counters[j].value == c->value && w[f];
			}
			if (count_number(out[f], c->value) != n)
				fail_msg("%s: %s shows %" PRIu64 " %zu times, not %zu:\n%s",
					 c->what, format[f], c->value,
					 count_number(out[f], c->value), n, out[f]);
		}
	}
}

/* The line of out that starts with prefix, the nth such from 0 (malloc'd). */
static char *line_of(const char *out, const char *prefix, size_t nth)
{
	size_t len = strlen(prefix);
	for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
		if (strncmp(p, prefix, len) == 0 && nth-- == 0)
			return strndup(p, strcspn(p, "\n"));
		if (!strchr(p, '\n'))
			break;
	}
	fail_msg("no line %zu starting \"%s\" in:\n%s", nth, prefix, out);
	return NULL;
}

/* The JSON object that starts at the nth occurrence of start (malloc'd). */
static char *object_of(const char *out, const char *start, size_t nth)
{
	const char *p = out;
	for (size_t i = 0; p && i <= nth; i++)
		p = strstr(i ? p + 1 : p, start);
	if (!p)
		fail_msg("no %zuth %s in %s", nth, start, out);
	return strndup(p, strcspn(p, "}") + 1);
}

static void test_per_source(void **state)
{
	struct fixture *fx = *state;
	char *header = line_of(strbuf_str(&fx->text), "source ", 0);
	for (size_t k = 0; k < ARRAY_SIZE(per_source); k++) {
		const struct source_case *c = &per_source[k];
		if (c->column >= 0)
			assert_non_null(
				strstr(header, c->json)); /* the column is called the same */
		for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
			const char *src = kevent_source_name((enum kevent_source)i);
			uint64_t v = c->base + i;
			/* text: a row per source, a column per counter */
			char *row = line_of(strbuf_str(&fx->text), src, 0);
			char *want = tu_printf("%" PRIu64, v);
			char *tok = strtok(row, " ");
			for (int col = 0; col <= c->column; col++)
				tok = strtok(NULL, " ");
			if (c->column >= 0)
				assert_string_equal(tok, want);
			/* JSON: an object per source */
			char *key = tu_printf("\"%s\":{", src);
			char *obj = object_of(strbuf_str(&fx->json), key, 0);
			char *kv = tu_printf("\"%s\":%" PRIu64, c->json, v);
			assert_non_null(strstr(obj, kv));
			/* Prometheus: a sample per source */
			char *sample = tu_printf("keventd_%s{source=\"%s\"} %" PRIu64 "\n", c->prom,
						 src, v);
			check_once("Prometheus", strbuf_str(&fx->prom), c->prom, sample);
			assert_int_equal(count_number(strbuf_str(&fx->text), v), c->column >= 0);
			assert_int_equal(count_number(strbuf_str(&fx->json), v), 1);
			assert_int_equal(count_number(strbuf_str(&fx->prom), v), 1);
			free(row);
			free(want);
			free(key);
			free(obj);
			free(kv);
			free(sample);
		}
	}
	free(header);
}

/* The per-source flag: "yes" or "no" in its column, a JSON boolean, 1 or 0. */
static void test_per_source_paused(void **state)
{
	struct fixture *fx = *state;
	char *header = line_of(strbuf_str(&fx->text), "source ", 0);
	char *tok = strtok(header, " ");
	for (int col = 0; col <= PAUSED_COLUMN; col++)
		tok = strtok(NULL, " ");
	assert_string_equal(tok, "paused");
	free(header);
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		const char *src = kevent_source_name((enum kevent_source)i);
		bool on = i == PAUSED_SOURCE;
		char *row = line_of(strbuf_str(&fx->text), src, 0);
		tok = strtok(row, " ");
		for (int col = 0; col <= PAUSED_COLUMN; col++)
			tok = strtok(NULL, " ");
		assert_string_equal(tok, on ? "yes" : "no");
		char *key = tu_printf("\"%s\":{", src);
		char *obj = object_of(strbuf_str(&fx->json), key, 0);
		assert_non_null(strstr(obj, on ? "\"paused\":true," : "\"paused\":false,"));
		char *sample =
			tu_printf("keventd_queue_source_paused{source=\"%s\"} %d\n", src, on);
		check_once("Prometheus", strbuf_str(&fx->prom), "queue_source_paused", sample);
		free(row);
		free(key);
		free(obj);
		free(sample);
	}
}

/* How each rendering names rule i of the fixture. */
static const struct {
	const char *text, *json, *prom;
} rule_names[] = {
	{"rule on-high (10-power.yaml): ", "{\"name\":\"on-high\",\"file\":\"" POWER "\"",
	 "{rule=\"on-high\",file=\"" POWER "\"} "},
	{"rule on-low \"q\" \\ end (10-power.yaml): ",
	 "{\"name\":\"on-low \\\"q\\\" \\\\ end\",\"file\":\"" POWER "\"",
	 "{rule=\"on-low \\\"q\\\" \\\\ end\",file=\"" POWER "\"} "},
	{"rule spin-down (20-disk.yaml): ", "{\"name\":\"spin-down\",\"file\":\"" DISK "\"",
	 "{rule=\"spin-down\",file=\"" DISK "\"} "},
};

/* Renders fx's ruleset with counters of rule i at rule_base[i] (or zero
 * when gone), and checks every rendering of each. */
static void check_rules(struct fixture *fx, const uint64_t *base)
{
	render(fx);
	assert_int_equal(fx->rs->n_rules, 3);
	for (size_t i = 0; i < fx->rs->n_rules; i++) {
		char *line = line_of(strbuf_str(&fx->text), rule_names[i].text, 0);
		char *obj = object_of(strbuf_str(&fx->json), rule_names[i].json, 0);
		for (size_t k = 0; k < ARRAY_SIZE(per_rule); k++) {
			const struct rule_case *c = &per_rule[k];
			uint64_t v = base[i] ? base[i] + c->k : 0;
			char *text = tu_printf("%s %" PRIu64, c->text, v);
			char *json = tu_printf("\"%s\":%" PRIu64, c->json, v);
			char *prom = tu_printf("keventd_%s%s%" PRIu64 "\n", c->prom,
					       rule_names[i].prom, v);
			assert_non_null(strstr(line, text));
			assert_non_null(strstr(obj, json));
			check_once("Prometheus", strbuf_str(&fx->prom), c->prom, prom);
			free(text);
			free(json);
			free(prom);
		}
		free(line);
		free(obj);
	}
}

static void test_per_rule(void **state)
{
	struct fixture *fx = *state;
	check_rules(fx, rule_base);

	/* a reload of the same files keeps the counters: they follow the
	 * file's name and the rule's */
	kruleset_free(fx->rs);
	fx->rs = ruleset(true);
	kstats_prune(&fx->s, fx->rs);
	check_rules(fx, rule_base);

	/* a rule pruned away starts again from zero when it comes back */
	kruleset_free(fx->rs);
	fx->rs = ruleset(false);
	kstats_prune(&fx->s, fx->rs);
	kruleset_free(fx->rs);
	fx->rs = ruleset(true);
	check_rules(fx, (const uint64_t[]){400, 0, 0});
}

/* The rows some rendering leaves out, as keventctl status always has:
 * any other row missing from a rendering is a counter forgotten there. */
static const struct gap {
	enum kstats_section section;
	const char *row;     /* its JSON key, or else its Prometheus name, or its text */
	const char *missing; /* the renderings without it */
} gaps[] = {
	{KSTATS_SOURCES, "paused_times", "text"},
	{KSTATS_SOURCES, "resynced", "text"}, /* a column of the text only if it earns one */
	{KSTATS_SOURCES, "handled", "text"},  /* the text's events line has their sums */
	{KSTATS_SOURCES, "ratelimited", "text"},
	{KSTATS_SOURCES, "debounced", "text"},
	{KSTATS_EVENTS, "received", "text prom"}, /* the sum of the sources' */
	{KSTATS_EVENTS, "rejected", "text prom"},
	{KSTATS_EVENTS, "overruns", "text prom"},
	{KSTATS_EVENTS, "pending", "text"}, /* the text shows it with the queue */
	{KSTATS_RUNS, "output_dropped_bytes", "text"},
	{KSTATS_RULESET, "broken", "text"},	 /* the text has a line per broken file */
	{KSTATS_RUNS, "ratelimit_full", "text"}, /* rare: JSON and Prometheus only */
	{KSTATS_RUNS, "containment_process_group", "prom"}, /* the cgroup gauge's 0 */
	{KSTATS_QUEUE, "pending", "prom"},		    /* keventd_events_pending */
	{KSTATS_QUEUE, "queue_paused", "text json"},
	{KSTATS_QUEUE, "paused_times", "text"},
	{KSTATS_QUEUE, "paused", "prom"}, /* keventd_queue_paused */
	/* failing: the words and the string, the gauge */
	{KSTATS_JOURNAL, "failing", "prom"},
	{KSTATS_JOURNAL, "journal_failing", "text json"},
	{KSTATS_MQTT, "off", "json prom"}, /* the text's words for enabled false */
	{KSTATS_MQTT, "enabled", "text"},
	{KSTATS_MQTT, "disconnected", "json prom"}, /* connected false */
	/* publishing: the words of off, the string, the gauge */
	{KSTATS_MQTT, "; publishing off (#)", "json prom"},
	{KSTATS_MQTT, "publishing", "text prom"},
	{KSTATS_MQTT, "mqtt_publishing", "text json"},
	{KSTATS_CONDITIONS, "off (--lib-dir none, or not in --sources); ",
	 "json prom"}, /* the text's words only */
	/* the text's words for enabled false ("notify: off") are text_head()'s */
	{KSTATS_NOTIFY, "enabled", "text"},
	{KSTATS_NOTIFY, "targets", "prom"},
	/* a target's: the gauge, and the words and the string of off */
	{KSTATS_NOTIFY_TARGETS, "notify_sending", "text json"},
	{KSTATS_NOTIFY_TARGETS, "off", "prom"},
	{KSTATS_NOTIFY_TARGETS, "last_error", "prom"},
	/* likewise "alertmanager: off"; up false: the words down */
	{KSTATS_ALERTMANAGER, "enabled", "text"},
	{KSTATS_ALERTMANAGER, "down", "json prom"},
	{KSTATS_ALERTMANAGER, "off", "prom"},
	{KSTATS_ALERTMANAGER, "last_error", "prom"},
	/* the text's users line is text_users()'s: one side's words */
	{KSTATS_USERS, "instances", "text"},
	{KSTATS_USERS, "sent", "text"},
	{KSTATS_USERS, "withheld", "text"},
	{KSTATS_USERS, "dropped", "text"},
	{KSTATS_USERS, "refused", "text"},
	{KSTATS_USERS, "connected", "text"},
	{KSTATS_USERS, "received", "text"},
	{KSTATS_USERS, "dropped_at_system", "text"},
	{KSTATS_USERS, "bad", "text"},
};

/* The text line of each section (the per-rule one: of the first rule) and
 * where its JSON object starts. */
static const struct {
	const char *text, *json;
} where_shown[KSTATS_NSECTIONS] = {
	[KSTATS_UPTIME] = {"uptime: ", "{"}, /* the top level, up to the first '}' */
	[KSTATS_SOURCES] = {"source ", "\"kernel\":{"},
	[KSTATS_EVENTS] = {"events: ", "\"events\":{"},
	[KSTATS_RUNS] = {"runs: ", "\"runs\":{"},
	[KSTATS_QUEUE] = {"queue: ", "\"queue\":{"},
	[KSTATS_CONTROL] = {"control: ", "\"control\":{"},
	[KSTATS_HISTORY] = {"history: ", "\"history\":{"},
	[KSTATS_JOURNAL] = {"journal: ", "\"journal\":{"},
	[KSTATS_MQTT] = {"mqtt: ", ",\"mqtt\":{\"enabled\""},
	[KSTATS_CONDITIONS] = {"conditions: ", "\"conditions\":{"},
	[KSTATS_NOTIFY] = {"notify: ", "\"notify\":{"},
	[KSTATS_NOTIFY_TARGETS] = {"notify ops-mail: ", "\"ops-mail\":{"},
	[KSTATS_ALERTMANAGER] = {"alertmanager: ", "\"alertmanager\":{"},
	[KSTATS_USERS] = {"users: ", "\"users\":{"},
	[KSTATS_RULESET] = {"rules: ", "\"ruleset\":{"},
	[KSTATS_RULES] = {"rule on-high ", "{\"name\":\"on-high\""},
};

/* Whether line has the words of text with a number in place of its '#'. */
static bool has_words(const char *line, const char *text)
{
	const char *hash = strchr(text, '#');
	if (!hash)
		return strstr(line, text) != NULL;
	char *before = strndup(text, (size_t)(hash - text));
	bool found = false;
	for (const char *p = line; !found && (p = strstr(p, before)); p++) {
		const char *q = p + strlen(before);
		if (!isdigit((unsigned char)*q))
			continue;
		while (isdigit((unsigned char)*q))
			q++;
		found = strncmp(q, hash + 1, strlen(hash + 1)) == 0;
	}
	free(before);
	return found;
}

/* Every row of the table is in every rendering but for the gaps above,
 * with its value where its section is shown. */
static void test_every_row_rendered(void **state)
{
	struct fixture *fx = *state;
	bool used[ARRAY_SIZE(gaps)] = {0};
	for (size_t k = 0; k < kstats_n_rows; k++) {
		const struct kstats_row *r = &kstats_rows[k];
		const char *id = r->json ? r->json : r->prom ? r->prom : r->text;
		char *missing = tu_printf("%s%s%s", r->text ? "" : " text", r->json ? "" : " json",
					  r->prom ? "" : " prom");
		assert_non_null(id);
		if (k > 0)
			assert_true(kstats_rows[k - 1].section <= r->section); /* grouped */
		for (size_t j = 0; j < k; j++) /* a key once in each object */
			assert_false(r->json && kstats_rows[j].json &&
				     kstats_rows[j].section == r->section &&
				     strcmp(kstats_rows[j].json, r->json) == 0);
		if (*missing) {
			size_t g = 0;
			while (g < ARRAY_SIZE(gaps) &&
			       (gaps[g].section != r->section || strcmp(gaps[g].row, id) != 0 ||
				strcmp(gaps[g].missing, missing + 1) != 0))
				g++;
			if (g == ARRAY_SIZE(gaps))
				fail_msg("row %s is not in:%s", id, missing);
			used[g] = true;
		}
		free(missing);

		if (r->text) {
			char *line =
				line_of(strbuf_str(&fx->text), where_shown[r->section].text, 0);
			if (r->section ==
			    KSTATS_SOURCES) /* a column heading; the cells are numbers */
				assert_non_null(strstr(line, r->text));
			else if (r->from == KSTATS_FROM_EXTRA_TEXT ||
				 r->from == KSTATS_FROM_NOTIFY_TEXT) /* words, then text */
				assert_non_null(
					memmem(line, strlen(line), r->text, strcspn(r->text, "#")));
			else if (!has_words(line, r->text))
				fail_msg("text: no \"%s\" in \"%s\"", r->text, line);
			free(line);
		}
		if (r->json) {
			char *obj =
				object_of(strbuf_str(&fx->json), where_shown[r->section].json, 0);
			char *key = tu_printf("\"%s\":", r->json);
			const char *p = strstr(obj, key);
			if (!p || !strchr("{,", p[-1]) ||
			    !strchr(r->from == KSTATS_FROM_EXTRA_TEXT ||
						    r->from == KSTATS_FROM_NOTIFY_TEXT
					    ? "\"n"
					    : "0123456789tf",
				    p[strlen(key)]))
				fail_msg("JSON: no %s in %s", key, obj);
			free(obj);
			free(key);
		}
		if (r->prom) {
			assert_true(strcmp(r->type, "counter") == 0 ||
				    strcmp(r->type, "gauge") == 0);
			size_t len = strlen(r->prom);
			bool total = len > 6 && strcmp(r->prom + len - 6, "_total") == 0;
			assert_int_equal(total, strcmp(r->type, "counter") == 0);
			assert_non_null(r->help);
			char *family = tu_printf("# HELP keventd_%s %s\n# TYPE keventd_%s %s\n"
						 "keventd_%s%c",
						 r->prom, r->help, r->prom, r->type, r->prom,
						 r->section == KSTATS_SOURCES ||
								 r->section == KSTATS_RULES ||
								 r->section == KSTATS_NOTIFY_TARGETS
							 ? '{'
							 : ' ');
			check_once("Prometheus", strbuf_str(&fx->prom), r->prom, family);
			free(family);
		}
	}
	for (size_t g = 0; g < ARRAY_SIZE(gaps); g++)
		if (!used[g])
			fail_msg("gap %s: no such row", gaps[g].row);
}

/* Byte for byte what keventctl status prints, in each format. */
static void test_golden(void **state)
{
	struct fixture *fx = *state;
	/* clang-format off */
	assert_string_equal(strbuf_str(&fx->text),
		"uptime: 42s\n"
		"rules: 3 in 2 files (reloads 241, reload errors 242)\n"
		"broken: 30-bad.yaml (not loaded): /etc/keventd/rules.d/30-bad.yaml:3:5: error: unknown key 'timout' in rule: did you mean timeout?\n"
		"queue: 301 pending, 302 running, max 303 children, size 304 (a source is paused: its share is full)\n"
		"source         received    recovered  redelivered     rejected     overruns         lost    truncated      pending        share       paused\n"
		"kernel              621          781          601          641          661          681          701          721          741           no\n"
		"udev                622          782          602          642          662          682          702          722          742           no\n"
		"thermal             623          783          603          643          663          683          703          723          743           no\n"
		"socket              624          784          604          644          664          684          704          724          744          yes\n"
		"acpi                625          785          605          645          665          685          705          725          745           no\n"
		"input               626          786          606          646          666          686          706          726          746           no\n"
		"fs                  627          787          607          647          667          687          707          727          747           no\n"
		"mqtt                628          788          608          648          668          688          708          728          748           no\n"
		"trace               629          789          609          649          669          689          709          729          749           no\n"
		"md                  630          790          610          650          670          690          710          730          750           no\n"
		"kmsg                631          791          611          651          671          691          711          731          751           no\n"
		"condition           632          792          612          652          672          692          712          732          752           no\n"
		"events: handled 201, rate-limited 202, debounced 204, matched 203\n"
		"runs: 211, failures 212, timeouts 213, rate-limited 214, dry-run 215, debounced 219, oom kills 218, transient 220, no session 221 (containment: cgroup) (containment: process-group)\n"
		"control: clients 305, refused 231, bad requests 232, over limit 233, monitor drops 234, over user limit 235, root slot refusals 236, idle dropped 237, triggers refused 249\n"
		"history: 306 of 307 events, 308 bytes, not kept 238\n"
		"journal: failing (No space left on device), 311 bytes (312 unfinished), corrupt 313, 314 writes, refused 259, full 239 times (full: intake paused)\n"
		"mqtt: offconnecteddisconnected (published 251, acknowledged 252, spooled 309, dropped 253, corrupt 256, received 254, duplicates 257, connection attempts 255); publishing off (spool /x: \\x1b broken)\n"
		"conditions: off (--lib-dir none, or not in --sources); 501 holding: 502 critical, 503 warning, 504 info; 505 acknowledged, refused 506, write errors 507\n"
		"notify: 2 targets, queue damaged 261, unknown targets 262\n"
		"notify ops-mail: sent 263, queued 264, retried 265, failed 266, dropped 267; off (password_file /x: \\x1b unreadable); last error: 535 5.7.8 \\x1b no\n"
		"notify phone: sent 268, queued 269, retried 270, failed 271, dropped 272; off (token_file /x: may be read by others)\n"
		"alertmanager: updown (posts 281, failed 282, alerts 283, resolved pending 284); off (password_file /a: \\x1b unreadable); last error: HTTP 500: \\x1b boom\n"
		"users: listening, 291 connected, sent 292, withheld 293, dropped 294, refused 295\n"
		"rule on-high (10-power.yaml): matched 401, runs 402, failures 403, timeouts 404, rate-limited 405, debounced 406\n"
		"rule on-low \"q\" \\ end (10-power.yaml): matched 0, runs 0, failures 0, timeouts 0, rate-limited 0, debounced 0\n"
		"rule spin-down (20-disk.yaml): matched 411, runs 412, failures 413, timeouts 414, rate-limited 415, debounced 416\n");
	assert_string_equal(strbuf_str(&fx->json),
		"{\"uptime_seconds\":42,\"sources\":{\"kernel\":{\"received\":621,\"recovered\":781,\"redelivered\":601,\"rejected\":641,\"overruns\":661,\"lost\":681,\"truncated\":701,\"pending\":721,\"share\":741,\"paused\":false,\"paused_times\":761,\"resynced\":801,\"handled\":821,\"ratelimited\":841,\"debounced\":861},"
		"\"udev\":{\"received\":622,\"recovered\":782,\"redelivered\":602,\"rejected\":642,\"overruns\":662,\"lost\":682,\"truncated\":702,\"pending\":722,\"share\":742,\"paused\":false,\"paused_times\":762,\"resynced\":802,\"handled\":822,\"ratelimited\":842,\"debounced\":862},"
		"\"thermal\":{\"received\":623,\"recovered\":783,\"redelivered\":603,\"rejected\":643,\"overruns\":663,\"lost\":683,\"truncated\":703,\"pending\":723,\"share\":743,\"paused\":false,\"paused_times\":763,\"resynced\":803,\"handled\":823,\"ratelimited\":843,\"debounced\":863},"
		"\"socket\":{\"received\":624,\"recovered\":784,\"redelivered\":604,\"rejected\":644,\"overruns\":664,\"lost\":684,\"truncated\":704,\"pending\":724,\"share\":744,\"paused\":true,\"paused_times\":764,\"resynced\":804,\"handled\":824,\"ratelimited\":844,\"debounced\":864},"
		"\"acpi\":{\"received\":625,\"recovered\":785,\"redelivered\":605,\"rejected\":645,\"overruns\":665,\"lost\":685,\"truncated\":705,\"pending\":725,\"share\":745,\"paused\":false,\"paused_times\":765,\"resynced\":805,\"handled\":825,\"ratelimited\":845,\"debounced\":865},"
		"\"input\":{\"received\":626,\"recovered\":786,\"redelivered\":606,\"rejected\":646,\"overruns\":666,\"lost\":686,\"truncated\":706,\"pending\":726,\"share\":746,\"paused\":false,\"paused_times\":766,\"resynced\":806,\"handled\":826,\"ratelimited\":846,\"debounced\":866},"
		"\"fs\":{\"received\":627,\"recovered\":787,\"redelivered\":607,\"rejected\":647,\"overruns\":667,\"lost\":687,\"truncated\":707,\"pending\":727,\"share\":747,\"paused\":false,\"paused_times\":767,\"resynced\":807,\"handled\":827,\"ratelimited\":847,\"debounced\":867},"
		"\"mqtt\":{\"received\":628,\"recovered\":788,\"redelivered\":608,\"rejected\":648,\"overruns\":668,\"lost\":688,\"truncated\":708,\"pending\":728,\"share\":748,\"paused\":false,\"paused_times\":768,\"resynced\":808,\"handled\":828,\"ratelimited\":848,\"debounced\":868},"
		"\"trace\":{\"received\":629,\"recovered\":789,\"redelivered\":609,\"rejected\":649,\"overruns\":669,\"lost\":689,\"truncated\":709,\"pending\":729,\"share\":749,\"paused\":false,\"paused_times\":769,\"resynced\":809,\"handled\":829,\"ratelimited\":849,\"debounced\":869},"
		"\"md\":{\"received\":630,\"recovered\":790,\"redelivered\":610,\"rejected\":650,\"overruns\":670,\"lost\":690,\"truncated\":710,\"pending\":730,\"share\":750,\"paused\":false,\"paused_times\":770,\"resynced\":810,\"handled\":830,\"ratelimited\":850,\"debounced\":870},"
		"\"kmsg\":{\"received\":631,\"recovered\":791,\"redelivered\":611,\"rejected\":651,\"overruns\":671,\"lost\":691,\"truncated\":711,\"pending\":731,\"share\":751,\"paused\":false,\"paused_times\":771,\"resynced\":811,\"handled\":831,\"ratelimited\":851,\"debounced\":871},"
		"\"condition\":{\"received\":632,\"recovered\":792,\"redelivered\":612,\"rejected\":652,\"overruns\":672,\"lost\":692,\"truncated\":712,\"pending\":732,\"share\":752,\"paused\":false,\"paused_times\":772,\"resynced\":812,\"handled\":832,\"ratelimited\":852,\"debounced\":872}},"
		"\"events\":{\"received\":7518,\"rejected\":7758,\"overruns\":7998,\"handled\":201,\"ratelimited\":202,\"debounced\":204,\"matched\":203,\"pending\":301},"
		"\"runs\":{\"started\":211,\"failures\":212,\"timeouts\":213,\"ratelimited\":214,\"dry_run\":215,\"debounced\":219,\"oom_kills\":218,\"transient\":220,\"session_skipped\":221,\"containment_cgroup\":true,\"containment_process_group\":true,\"output_dropped_bytes\":216,\"ratelimit_full\":217},"
		"\"queue\":{\"pending\":301,\"running\":302,\"max_children\":303,\"size\":304,\"paused_times\":9198,\"paused\":true},"
		"\"control\":{\"clients\":305,\"refused\":231,\"bad_requests\":232,\"over_limit\":233,\"monitor_dropped\":234,\"over_user_limit\":235,\"root_slot_refused\":236,\"idle_dropped\":237,\"triggers_refused\":249},"
		"\"history\":{\"entries\":306,\"capacity\":307,\"bytes\":308,\"not_kept\":238},"
		"\"journal\":{\"failing\":\"No space left on device\",\"bytes\":311,\"unfinished\":312,\"corrupt\":313,\"writes\":314,\"refused\":259,\"full_times\":239,\"full\":true},"
		"\"mqtt\":{\"enabled\":true,\"connected\":true,\"published\":251,\"acknowledged\":252,\"spooled\":309,\"dropped\":253,\"corrupt\":256,\"received\":254,\"duplicates\":257,\"connection_attempts\":255,\"publishing\":\"off (spool /x: \\u001b broken)\"},"
		"\"conditions\":{\"holding\":501,\"critical\":502,\"warning\":503,\"info\":504,\"acknowledged\":505,\"refused\":506,\"write_errors\":507},"
		"\"notify\":{\"targets\":2,\"enabled\":true,\"damaged\":261,\"unknown_targets\":262},\"notify_targets\":{\"ops-mail\":{\"sent\":263,\"queued\":264,\"retried\":265,\"failed\":266,\"dropped\":267,\"off\":\"password_file /x: \\u001b unreadable\",\"last_error\":\"535 5.7.8 \\u001b no\"},\"phone\":{\"sent\":268,\"queued\":269,\"retried\":270,\"failed\":271,\"dropped\":272,\"off\":\"token_file /x: may be read by others\",\"last_error\":null}},"
		"\"alertmanager\":{\"up\":true,\"enabled\":true,\"posts\":281,\"failed\":282,\"alerts\":283,\"resolved_pending\":284,\"off\":\"password_file /a: \\u001b unreadable\",\"last_error\":\"HTTP 500: \\u001b boom\"},"
		"\"users\":{\"instances\":291,\"sent\":292,\"withheld\":293,\"dropped\":294,\"refused\":295,\"connected\":1,\"received\":296,\"dropped_at_system\":297,\"bad\":298},"
		"\"ruleset\":{\"rules\":3,\"files\":2,\"reloads\":241,\"reload_errors\":242,\"broken\":1},"
		"\"broken_files\":[{\"file\":\"30-bad.yaml\",\"error\":\"/etc/keventd/rules.d/30-bad.yaml:3:5: error: unknown key 'timout' in rule: did you mean timeout?\",\"last_good_in_force\":false}],\"rules\":[{\"name\":\"on-high\",\"file\":\"/etc/keventd/rules.d/10-power.yaml\",\"matched\":401,\"runs\":402,\"failures\":403,\"timeouts\":404,\"ratelimited\":405,\"debounced\":406},"
		"{\"name\":\"on-low \\\"q\\\" \\\\ end\",\"file\":\"/etc/keventd/rules.d/10-power.yaml\",\"matched\":0,\"runs\":0,\"failures\":0,\"timeouts\":0,\"ratelimited\":0,\"debounced\":0},"
		"{\"name\":\"spin-down\",\"file\":\"/etc/keventd/rules.d/20-disk.yaml\",\"matched\":411,\"runs\":412,\"failures\":413,\"timeouts\":414,\"ratelimited\":415,\"debounced\":416}]}\n");
	assert_string_equal(strbuf_str(&fx->prom),
		"# HELP keventd_build_info Always 1; the version label is keventd's.\n"
		"# TYPE keventd_build_info gauge\n"
		"keventd_build_info{version=\"0.1.0\"} 1\n"
		"# HELP keventd_uptime_seconds Seconds since keventd started.\n"
		"# TYPE keventd_uptime_seconds gauge\n"
		"keventd_uptime_seconds 42\n"
		"# HELP keventd_events_received_total Events accepted into keventd, per source.\n"
		"# TYPE keventd_events_received_total counter\n"
		"keventd_events_received_total{source=\"kernel\"} 621\n"
		"keventd_events_received_total{source=\"udev\"} 622\n"
		"keventd_events_received_total{source=\"thermal\"} 623\n"
		"keventd_events_received_total{source=\"socket\"} 624\n"
		"keventd_events_received_total{source=\"acpi\"} 625\n"
		"keventd_events_received_total{source=\"input\"} 626\n"
		"keventd_events_received_total{source=\"fs\"} 627\n"
		"keventd_events_received_total{source=\"mqtt\"} 628\n"
		"keventd_events_received_total{source=\"trace\"} 629\n"
		"keventd_events_received_total{source=\"md\"} 630\n"
		"keventd_events_received_total{source=\"kmsg\"} 631\n"
		"keventd_events_received_total{source=\"condition\"} 632\n"
		"# HELP keventd_events_recovered_total Of the events received, those fetched from the kernel's ring after they were missed, per source.\n"
		"# TYPE keventd_events_recovered_total counter\n"
		"keventd_events_recovered_total{source=\"kernel\"} 781\n"
		"keventd_events_recovered_total{source=\"udev\"} 782\n"
		"keventd_events_recovered_total{source=\"thermal\"} 783\n"
		"keventd_events_recovered_total{source=\"socket\"} 784\n"
		"keventd_events_recovered_total{source=\"acpi\"} 785\n"
		"keventd_events_recovered_total{source=\"input\"} 786\n"
		"keventd_events_recovered_total{source=\"fs\"} 787\n"
		"keventd_events_recovered_total{source=\"mqtt\"} 788\n"
		"keventd_events_recovered_total{source=\"trace\"} 789\n"
		"keventd_events_recovered_total{source=\"md\"} 790\n"
		"keventd_events_recovered_total{source=\"kmsg\"} 791\n"
		"keventd_events_recovered_total{source=\"condition\"} 792\n"
		"# HELP keventd_events_redelivered_total Of the events received, those read back from the journal at start-up, accepted before keventd stopped or died and not finished then, per source.\n"
		"# TYPE keventd_events_redelivered_total counter\n"
		"keventd_events_redelivered_total{source=\"kernel\"} 601\n"
		"keventd_events_redelivered_total{source=\"udev\"} 602\n"
		"keventd_events_redelivered_total{source=\"thermal\"} 603\n"
		"keventd_events_redelivered_total{source=\"socket\"} 604\n"
		"keventd_events_redelivered_total{source=\"acpi\"} 605\n"
		"keventd_events_redelivered_total{source=\"input\"} 606\n"
		"keventd_events_redelivered_total{source=\"fs\"} 607\n"
		"keventd_events_redelivered_total{source=\"mqtt\"} 608\n"
		"keventd_events_redelivered_total{source=\"trace\"} 609\n"
		"keventd_events_redelivered_total{source=\"md\"} 610\n"
		"keventd_events_redelivered_total{source=\"kmsg\"} 611\n"
		"keventd_events_redelivered_total{source=\"condition\"} 612\n"
		"# HELP keventd_events_rejected_total Invalid input rejected at the edge, never handled, per source.\n"
		"# TYPE keventd_events_rejected_total counter\n"
		"keventd_events_rejected_total{source=\"kernel\"} 641\n"
		"keventd_events_rejected_total{source=\"udev\"} 642\n"
		"keventd_events_rejected_total{source=\"thermal\"} 643\n"
		"keventd_events_rejected_total{source=\"socket\"} 644\n"
		"keventd_events_rejected_total{source=\"acpi\"} 645\n"
		"keventd_events_rejected_total{source=\"input\"} 646\n"
		"keventd_events_rejected_total{source=\"fs\"} 647\n"
		"keventd_events_rejected_total{source=\"mqtt\"} 648\n"
		"keventd_events_rejected_total{source=\"trace\"} 649\n"
		"keventd_events_rejected_total{source=\"md\"} 650\n"
		"keventd_events_rejected_total{source=\"kmsg\"} 651\n"
		"keventd_events_rejected_total{source=\"condition\"} 652\n"
		"# HELP keventd_receive_overruns_total Receive buffer overruns (ENOBUFS): events lost in the kernel, per source.\n"
		"# TYPE keventd_receive_overruns_total counter\n"
		"keventd_receive_overruns_total{source=\"kernel\"} 661\n"
		"keventd_receive_overruns_total{source=\"udev\"} 662\n"
		"keventd_receive_overruns_total{source=\"thermal\"} 663\n"
		"keventd_receive_overruns_total{source=\"socket\"} 664\n"
		"keventd_receive_overruns_total{source=\"acpi\"} 665\n"
		"keventd_receive_overruns_total{source=\"input\"} 666\n"
		"keventd_receive_overruns_total{source=\"fs\"} 667\n"
		"keventd_receive_overruns_total{source=\"mqtt\"} 668\n"
		"keventd_receive_overruns_total{source=\"trace\"} 669\n"
		"keventd_receive_overruns_total{source=\"md\"} 670\n"
		"keventd_receive_overruns_total{source=\"kmsg\"} 671\n"
		"keventd_receive_overruns_total{source=\"condition\"} 672\n"
		"# HELP keventd_events_lost_total Events known lost (sequence number gaps), per source.\n"
		"# TYPE keventd_events_lost_total counter\n"
		"keventd_events_lost_total{source=\"kernel\"} 681\n"
		"keventd_events_lost_total{source=\"udev\"} 682\n"
		"keventd_events_lost_total{source=\"thermal\"} 683\n"
		"keventd_events_lost_total{source=\"socket\"} 684\n"
		"keventd_events_lost_total{source=\"acpi\"} 685\n"
		"keventd_events_lost_total{source=\"input\"} 686\n"
		"keventd_events_lost_total{source=\"fs\"} 687\n"
		"keventd_events_lost_total{source=\"mqtt\"} 688\n"
		"keventd_events_lost_total{source=\"trace\"} 689\n"
		"keventd_events_lost_total{source=\"md\"} 690\n"
		"keventd_events_lost_total{source=\"kmsg\"} 691\n"
		"keventd_events_lost_total{source=\"condition\"} 692\n"
		"# HELP keventd_events_truncated_total Events whose longest values were cut to fit the limits, per source.\n"
		"# TYPE keventd_events_truncated_total counter\n"
		"keventd_events_truncated_total{source=\"kernel\"} 701\n"
		"keventd_events_truncated_total{source=\"udev\"} 702\n"
		"keventd_events_truncated_total{source=\"thermal\"} 703\n"
		"keventd_events_truncated_total{source=\"socket\"} 704\n"
		"keventd_events_truncated_total{source=\"acpi\"} 705\n"
		"keventd_events_truncated_total{source=\"input\"} 706\n"
		"keventd_events_truncated_total{source=\"fs\"} 707\n"
		"keventd_events_truncated_total{source=\"mqtt\"} 708\n"
		"keventd_events_truncated_total{source=\"trace\"} 709\n"
		"keventd_events_truncated_total{source=\"md\"} 710\n"
		"keventd_events_truncated_total{source=\"kmsg\"} 711\n"
		"keventd_events_truncated_total{source=\"condition\"} 712\n"
		"# HELP keventd_queue_source_pending Events of the source queued or being handled.\n"
		"# TYPE keventd_queue_source_pending gauge\n"
		"keventd_queue_source_pending{source=\"kernel\"} 721\n"
		"keventd_queue_source_pending{source=\"udev\"} 722\n"
		"keventd_queue_source_pending{source=\"thermal\"} 723\n"
		"keventd_queue_source_pending{source=\"socket\"} 724\n"
		"keventd_queue_source_pending{source=\"acpi\"} 725\n"
		"keventd_queue_source_pending{source=\"input\"} 726\n"
		"keventd_queue_source_pending{source=\"fs\"} 727\n"
		"keventd_queue_source_pending{source=\"mqtt\"} 728\n"
		"keventd_queue_source_pending{source=\"trace\"} 729\n"
		"keventd_queue_source_pending{source=\"md\"} 730\n"
		"keventd_queue_source_pending{source=\"kmsg\"} 731\n"
		"keventd_queue_source_pending{source=\"condition\"} 732\n"
		"# HELP keventd_queue_source_share The source's share of the queue: its events queued before it pauses.\n"
		"# TYPE keventd_queue_source_share gauge\n"
		"keventd_queue_source_share{source=\"kernel\"} 741\n"
		"keventd_queue_source_share{source=\"udev\"} 742\n"
		"keventd_queue_source_share{source=\"thermal\"} 743\n"
		"keventd_queue_source_share{source=\"socket\"} 744\n"
		"keventd_queue_source_share{source=\"acpi\"} 745\n"
		"keventd_queue_source_share{source=\"input\"} 746\n"
		"keventd_queue_source_share{source=\"fs\"} 747\n"
		"keventd_queue_source_share{source=\"mqtt\"} 748\n"
		"keventd_queue_source_share{source=\"trace\"} 749\n"
		"keventd_queue_source_share{source=\"md\"} 750\n"
		"keventd_queue_source_share{source=\"kmsg\"} 751\n"
		"keventd_queue_source_share{source=\"condition\"} 752\n"
		"# HELP keventd_queue_source_paused 1 while the source is paused on its full share of the queue.\n"
		"# TYPE keventd_queue_source_paused gauge\n"
		"keventd_queue_source_paused{source=\"kernel\"} 0\n"
		"keventd_queue_source_paused{source=\"udev\"} 0\n"
		"keventd_queue_source_paused{source=\"thermal\"} 0\n"
		"keventd_queue_source_paused{source=\"socket\"} 1\n"
		"keventd_queue_source_paused{source=\"acpi\"} 0\n"
		"keventd_queue_source_paused{source=\"input\"} 0\n"
		"keventd_queue_source_paused{source=\"fs\"} 0\n"
		"keventd_queue_source_paused{source=\"mqtt\"} 0\n"
		"keventd_queue_source_paused{source=\"trace\"} 0\n"
		"keventd_queue_source_paused{source=\"md\"} 0\n"
		"keventd_queue_source_paused{source=\"kmsg\"} 0\n"
		"keventd_queue_source_paused{source=\"condition\"} 0\n"
		"# HELP keventd_queue_source_pauses_total Times the source was paused on its full share of the queue.\n"
		"# TYPE keventd_queue_source_pauses_total counter\n"
		"keventd_queue_source_pauses_total{source=\"kernel\"} 761\n"
		"keventd_queue_source_pauses_total{source=\"udev\"} 762\n"
		"keventd_queue_source_pauses_total{source=\"thermal\"} 763\n"
		"keventd_queue_source_pauses_total{source=\"socket\"} 764\n"
		"keventd_queue_source_pauses_total{source=\"acpi\"} 765\n"
		"keventd_queue_source_pauses_total{source=\"input\"} 766\n"
		"keventd_queue_source_pauses_total{source=\"fs\"} 767\n"
		"keventd_queue_source_pauses_total{source=\"mqtt\"} 768\n"
		"keventd_queue_source_pauses_total{source=\"trace\"} 769\n"
		"keventd_queue_source_pauses_total{source=\"md\"} 770\n"
		"keventd_queue_source_pauses_total{source=\"kmsg\"} 771\n"
		"keventd_queue_source_pauses_total{source=\"condition\"} 772\n"
		"# HELP keventd_events_resynced_total Of the events received, those keventd made up for what it could not see (KEVENT_SYNTHETIC=1: a resynchronisation at start-up or after an overrun, or keventctl trigger), per source.\n"
		"# TYPE keventd_events_resynced_total counter\n"
		"keventd_events_resynced_total{source=\"kernel\"} 801\n"
		"keventd_events_resynced_total{source=\"udev\"} 802\n"
		"keventd_events_resynced_total{source=\"thermal\"} 803\n"
		"keventd_events_resynced_total{source=\"socket\"} 804\n"
		"keventd_events_resynced_total{source=\"acpi\"} 805\n"
		"keventd_events_resynced_total{source=\"input\"} 806\n"
		"keventd_events_resynced_total{source=\"fs\"} 807\n"
		"keventd_events_resynced_total{source=\"mqtt\"} 808\n"
		"keventd_events_resynced_total{source=\"trace\"} 809\n"
		"keventd_events_resynced_total{source=\"md\"} 810\n"
		"keventd_events_resynced_total{source=\"kmsg\"} 811\n"
		"keventd_events_resynced_total{source=\"condition\"} 812\n"
		"# HELP keventd_source_events_handled_total Of the events received, those handled: every run done, or nothing to run, per source.\n"
		"# TYPE keventd_source_events_handled_total counter\n"
		"keventd_source_events_handled_total{source=\"kernel\"} 821\n"
		"keventd_source_events_handled_total{source=\"udev\"} 822\n"
		"keventd_source_events_handled_total{source=\"thermal\"} 823\n"
		"keventd_source_events_handled_total{source=\"socket\"} 824\n"
		"keventd_source_events_handled_total{source=\"acpi\"} 825\n"
		"keventd_source_events_handled_total{source=\"input\"} 826\n"
		"keventd_source_events_handled_total{source=\"fs\"} 827\n"
		"keventd_source_events_handled_total{source=\"mqtt\"} 828\n"
		"keventd_source_events_handled_total{source=\"trace\"} 829\n"
		"keventd_source_events_handled_total{source=\"md\"} 830\n"
		"keventd_source_events_handled_total{source=\"kmsg\"} 831\n"
		"keventd_source_events_handled_total{source=\"condition\"} 832\n"
		"# HELP keventd_source_events_ratelimited_total Of the events received, those whose every run was suppressed by a rate limit, per source.\n"
		"# TYPE keventd_source_events_ratelimited_total counter\n"
		"keventd_source_events_ratelimited_total{source=\"kernel\"} 841\n"
		"keventd_source_events_ratelimited_total{source=\"udev\"} 842\n"
		"keventd_source_events_ratelimited_total{source=\"thermal\"} 843\n"
		"keventd_source_events_ratelimited_total{source=\"socket\"} 844\n"
		"keventd_source_events_ratelimited_total{source=\"acpi\"} 845\n"
		"keventd_source_events_ratelimited_total{source=\"input\"} 846\n"
		"keventd_source_events_ratelimited_total{source=\"fs\"} 847\n"
		"keventd_source_events_ratelimited_total{source=\"mqtt\"} 848\n"
		"keventd_source_events_ratelimited_total{source=\"trace\"} 849\n"
		"keventd_source_events_ratelimited_total{source=\"md\"} 850\n"
		"keventd_source_events_ratelimited_total{source=\"kmsg\"} 851\n"
		"keventd_source_events_ratelimited_total{source=\"condition\"} 852\n"
		"# HELP keventd_source_events_debounced_total Of the events received, those whose only runs were debounced and each replaced by a later event, per source.\n"
		"# TYPE keventd_source_events_debounced_total counter\n"
		"keventd_source_events_debounced_total{source=\"kernel\"} 861\n"
		"keventd_source_events_debounced_total{source=\"udev\"} 862\n"
		"keventd_source_events_debounced_total{source=\"thermal\"} 863\n"
		"keventd_source_events_debounced_total{source=\"socket\"} 864\n"
		"keventd_source_events_debounced_total{source=\"acpi\"} 865\n"
		"keventd_source_events_debounced_total{source=\"input\"} 866\n"
		"keventd_source_events_debounced_total{source=\"fs\"} 867\n"
		"keventd_source_events_debounced_total{source=\"mqtt\"} 868\n"
		"keventd_source_events_debounced_total{source=\"trace\"} 869\n"
		"keventd_source_events_debounced_total{source=\"md\"} 870\n"
		"keventd_source_events_debounced_total{source=\"kmsg\"} 871\n"
		"keventd_source_events_debounced_total{source=\"condition\"} 872\n"
		"# HELP keventd_events_handled_total Events done: every handler run, or nothing to run.\n"
		"# TYPE keventd_events_handled_total counter\n"
		"keventd_events_handled_total 201\n"
		"# HELP keventd_events_ratelimited_total Events whose every run was suppressed by a rate limit.\n"
		"# TYPE keventd_events_ratelimited_total counter\n"
		"keventd_events_ratelimited_total 202\n"
		"# HELP keventd_events_debounced_total Events whose only runs were debounced and each replaced by a later event.\n"
		"# TYPE keventd_events_debounced_total counter\n"
		"keventd_events_debounced_total 204\n"
		"# HELP keventd_events_matched_total Events that matched at least one rule.\n"
		"# TYPE keventd_events_matched_total counter\n"
		"keventd_events_matched_total 203\n"
		"# HELP keventd_events_pending Events queued or being handled.\n"
		"# TYPE keventd_events_pending gauge\n"
		"keventd_events_pending 301\n"
		"# HELP keventd_handler_runs_total Handlers started.\n"
		"# TYPE keventd_handler_runs_total counter\n"
		"keventd_handler_runs_total 211\n"
		"# HELP keventd_handler_failures_total Handler runs that exited non-zero or were killed by a signal.\n"
		"# TYPE keventd_handler_failures_total counter\n"
		"keventd_handler_failures_total 212\n"
		"# HELP keventd_handler_timeouts_total Handler runs killed on their timeout.\n"
		"# TYPE keventd_handler_timeouts_total counter\n"
		"keventd_handler_timeouts_total 213\n"
		"# HELP keventd_handler_ratelimited_total Handler runs suppressed by a rule's rate limit.\n"
		"# TYPE keventd_handler_ratelimited_total counter\n"
		"keventd_handler_ratelimited_total 214\n"
		"# HELP keventd_handler_dry_runs_total Handler runs only logged (--dry-run).\n"
		"# TYPE keventd_handler_dry_runs_total counter\n"
		"keventd_handler_dry_runs_total 215\n"
		"# HELP keventd_handler_debounced_total Handler runs replaced by a later event within the rule's debounce.\n"
		"# TYPE keventd_handler_debounced_total counter\n"
		"keventd_handler_debounced_total 219\n"
		"# HELP keventd_handler_oom_kills_total Handler runs in which the rule's memory_max killed a process.\n"
		"# TYPE keventd_handler_oom_kills_total counter\n"
		"keventd_handler_oom_kills_total 218\n"
		"# HELP keventd_handler_transient_total Handler runs started as transient systemd units.\n"
		"# TYPE keventd_handler_transient_total counter\n"
		"keventd_handler_transient_total 220\n"
		"# HELP keventd_handler_session_skipped_total Runs of session rules skipped: no session was active on seat0.\n"
		"# TYPE keventd_handler_session_skipped_total counter\n"
		"keventd_handler_session_skipped_total 221\n"
		"# HELP keventd_handler_containment_cgroup 1 while each handler run gets a cgroup of its own.\n"
		"# TYPE keventd_handler_containment_cgroup gauge\n"
		"keventd_handler_containment_cgroup 1\n"
		"# HELP keventd_handler_output_dropped_bytes_total Bytes of handler output over the logging limit, not logged.\n"
		"# TYPE keventd_handler_output_dropped_bytes_total counter\n"
		"keventd_handler_output_dropped_bytes_total 216\n"
		"# HELP keventd_handler_ratelimit_full_total Rate-limited runs suppressed by a window the rule's objects share while the rate-limit table is full.\n"
		"# TYPE keventd_handler_ratelimit_full_total counter\n"
		"keventd_handler_ratelimit_full_total 217\n"
		"# HELP keventd_queue_running Handlers running now.\n"
		"# TYPE keventd_queue_running gauge\n"
		"keventd_queue_running 302\n"
		"# HELP keventd_queue_max_children Handlers allowed to run at once.\n"
		"# TYPE keventd_queue_max_children gauge\n"
		"keventd_queue_max_children 303\n"
		"# HELP keventd_queue_size Events queued, all sources together, before they pause: each has an even share.\n"
		"# TYPE keventd_queue_size gauge\n"
		"keventd_queue_size 304\n"
		"# HELP keventd_queue_paused 1 while some source is paused on its full share of the queue.\n"
		"# TYPE keventd_queue_paused gauge\n"
		"keventd_queue_paused 1\n"
		"# HELP keventd_queue_pauses_total Times a source was paused on its full share of the queue, all sources.\n"
		"# TYPE keventd_queue_pauses_total counter\n"
		"keventd_queue_pauses_total 9198\n"
		"# HELP keventd_control_clients Clients connected to the control socket.\n"
		"# TYPE keventd_control_clients gauge\n"
		"keventd_control_clients 305\n"
		"# HELP keventd_control_refused_total Control socket peers refused by their credentials.\n"
		"# TYPE keventd_control_refused_total counter\n"
		"keventd_control_refused_total 231\n"
		"# HELP keventd_control_bad_requests_total Malformed or unknown control requests.\n"
		"# TYPE keventd_control_bad_requests_total counter\n"
		"keventd_control_bad_requests_total 232\n"
		"# HELP keventd_control_over_limit_total Control connections refused over the client limit.\n"
		"# TYPE keventd_control_over_limit_total counter\n"
		"keventd_control_over_limit_total 233\n"
		"# HELP keventd_monitor_dropped_total Events not shown to a monitor too slow to read them.\n"
		"# TYPE keventd_monitor_dropped_total counter\n"
		"keventd_monitor_dropped_total 234\n"
		"# HELP keventd_control_over_user_limit_total Control connections refused over the limit of connections per user.\n"
		"# TYPE keventd_control_over_user_limit_total counter\n"
		"keventd_control_over_user_limit_total 235\n"
		"# HELP keventd_control_root_slot_refused_total Control connections refused because only the slot kept for root was left.\n"
		"# TYPE keventd_control_root_slot_refused_total counter\n"
		"keventd_control_root_slot_refused_total 236\n"
		"# HELP keventd_control_idle_dropped_total Idle control connections closed to make room for a new one.\n"
		"# TYPE keventd_control_idle_dropped_total counter\n"
		"keventd_control_idle_dropped_total 237\n"
		"# HELP keventd_control_triggers_refused_total keventctl triggers refused: the udev source's share was full, or the connection's last trigger still waited.\n"
		"# TYPE keventd_control_triggers_refused_total counter\n"
		"keventd_control_triggers_refused_total 249\n"
		"# HELP keventd_history_entries Events in the history (keventctl events) now.\n"
		"# TYPE keventd_history_entries gauge\n"
		"keventd_history_entries 306\n"
		"# HELP keventd_history_capacity Events the history keeps at most (--history).\n"
		"# TYPE keventd_history_capacity gauge\n"
		"keventd_history_capacity 307\n"
		"# HELP keventd_history_bytes Memory the history holds, in bytes.\n"
		"# TYPE keventd_history_bytes gauge\n"
		"keventd_history_bytes 308\n"
		"# HELP keventd_history_not_kept_total Events the history could not keep for lack of memory.\n"
		"# TYPE keventd_history_not_kept_total counter\n"
		"keventd_history_not_kept_total 238\n"
		"# HELP keventd_journal_failing 1 while the journal cannot write: send and post are refused.\n"
		"# TYPE keventd_journal_failing gauge\n"
		"keventd_journal_failing 1\n"
		"# HELP keventd_journal_bytes Bytes of the journal's segments in the state directory.\n"
		"# TYPE keventd_journal_bytes gauge\n"
		"keventd_journal_bytes 311\n"
		"# HELP keventd_journal_unfinished Events in the journal not finished yet.\n"
		"# TYPE keventd_journal_unfinished gauge\n"
		"keventd_journal_unfinished 312\n"
		"# HELP keventd_journal_corrupt_total Damaged journal records skipped at start-up: each an event lost.\n"
		"# TYPE keventd_journal_corrupt_total counter\n"
		"keventd_journal_corrupt_total 313\n"
		"# HELP keventd_journal_writes_total Writes of records to the journal: each holds the events accepted in one round of the loop.\n"
		"# TYPE keventd_journal_writes_total counter\n"
		"keventd_journal_writes_total 314\n"
		"# HELP keventd_journal_refused_total Events of send and post refused: the journal could not write them.\n"
		"# TYPE keventd_journal_refused_total counter\n"
		"keventd_journal_refused_total 259\n"
		"# HELP keventd_journal_full_total Times the journal was full and paused intake.\n"
		"# TYPE keventd_journal_full_total counter\n"
		"keventd_journal_full_total 239\n"
		"# HELP keventd_journal_full 1 while the journal is full and intake is paused.\n"
		"# TYPE keventd_journal_full gauge\n"
		"keventd_journal_full 1\n"
		"# HELP keventd_mqtt_enabled 1 when keventd.yaml names a broker.\n"
		"# TYPE keventd_mqtt_enabled gauge\n"
		"keventd_mqtt_enabled 1\n"
		"# HELP keventd_mqtt_connected 1 while connected to the broker.\n"
		"# TYPE keventd_mqtt_connected gauge\n"
		"keventd_mqtt_connected 1\n"
		"# HELP keventd_mqtt_published_total Messages sent to the broker, each once.\n"
		"# TYPE keventd_mqtt_published_total counter\n"
		"keventd_mqtt_published_total 251\n"
		"# HELP keventd_mqtt_acknowledged_total QoS 1 messages the broker acknowledged.\n"
		"# TYPE keventd_mqtt_acknowledged_total counter\n"
		"keventd_mqtt_acknowledged_total 252\n"
		"# HELP keventd_mqtt_spooled Messages waiting for the broker or its acknowledgement now.\n"
		"# TYPE keventd_mqtt_spooled gauge\n"
		"keventd_mqtt_spooled 309\n"
		"# HELP keventd_mqtt_dropped_total Messages never sent: the spool was full, or QoS 0 while offline.\n"
		"# TYPE keventd_mqtt_dropped_total counter\n"
		"keventd_mqtt_dropped_total 253\n"
		"# HELP keventd_mqtt_spool_corrupt_total Spooled messages lost with damaged records of the spool, skipped by their numbers.\n"
		"# TYPE keventd_mqtt_spool_corrupt_total counter\n"
		"keventd_mqtt_spool_corrupt_total 256\n"
		"# HELP keventd_mqtt_received_total Messages taken from the broker's subscriptions.\n"
		"# TYPE keventd_mqtt_received_total counter\n"
		"keventd_mqtt_received_total 254\n"
		"# HELP keventd_mqtt_duplicates_total Of the messages received, those dropped as delivered again: an event already taken.\n"
		"# TYPE keventd_mqtt_duplicates_total counter\n"
		"keventd_mqtt_duplicates_total 257\n"
		"# HELP keventd_mqtt_connection_attempts_total Attempts to connect to the broker.\n"
		"# TYPE keventd_mqtt_connection_attempts_total counter\n"
		"keventd_mqtt_connection_attempts_total 255\n"
		"# HELP keventd_mqtt_publishing 1 while events are published; 0 when publishing is off (keventctl status says why).\n"
		"# TYPE keventd_mqtt_publishing gauge\n"
		"keventd_mqtt_publishing 1\n"
		"# HELP keventd_conditions_holding Condition rows that hold now (keventctl conditions).\n"
		"# TYPE keventd_conditions_holding gauge\n"
		"keventd_conditions_holding 501\n"
		"# HELP keventd_conditions_critical Condition rows of severity critical that hold now.\n"
		"# TYPE keventd_conditions_critical gauge\n"
		"keventd_conditions_critical 502\n"
		"# HELP keventd_conditions_warning Condition rows of severity warning that hold now.\n"
		"# TYPE keventd_conditions_warning gauge\n"
		"keventd_conditions_warning 503\n"
		"# HELP keventd_conditions_info Condition rows of severity info that hold now.\n"
		"# TYPE keventd_conditions_info gauge\n"
		"keventd_conditions_info 504\n"
		"# HELP keventd_conditions_acknowledged Condition rows that hold and were acknowledged (keventctl ack).\n"
		"# TYPE keventd_conditions_acknowledged gauge\n"
		"keventd_conditions_acknowledged 505\n"
		"# HELP keventd_conditions_refused_total Condition sets refused: the table held its bound of rows.\n"
		"# TYPE keventd_conditions_refused_total counter\n"
		"keventd_conditions_refused_total 506\n"
		"# HELP keventd_conditions_write_errors_total Failed writes of the condition table.\n"
		"# TYPE keventd_conditions_write_errors_total counter\n"
		"keventd_conditions_write_errors_total 507\n"
		"# HELP keventd_notify_enabled 1 when keventd.yaml names notification targets.\n"
		"# TYPE keventd_notify_enabled gauge\n"
		"keventd_notify_enabled 1\n"
		"# HELP keventd_notify_queue_damaged_total Queued notifications lost with damaged files of the queue, each set aside.\n"
		"# TYPE keventd_notify_queue_damaged_total counter\n"
		"keventd_notify_queue_damaged_total 261\n"
		"# HELP keventd_notify_unknown_targets_total Notifications not made: the rule names a target keventd.yaml has not.\n"
		"# TYPE keventd_notify_unknown_targets_total counter\n"
		"keventd_notify_unknown_targets_total 262\n"
		"# HELP keventd_notify_sent_total Notifications the target's server took, per target.\n"
		"# TYPE keventd_notify_sent_total counter\n"
		"keventd_notify_sent_total{target=\"ops-mail\"} 263\n"
		"keventd_notify_sent_total{target=\"phone\"} 268\n"
		"# HELP keventd_notify_queued Notifications waiting to be sent now, per target.\n"
		"# TYPE keventd_notify_queued gauge\n"
		"keventd_notify_queued{target=\"ops-mail\"} 264\n"
		"keventd_notify_queued{target=\"phone\"} 269\n"
		"# HELP keventd_notify_retried_total Tries of a notification after its first, per target.\n"
		"# TYPE keventd_notify_retried_total counter\n"
		"keventd_notify_retried_total{target=\"ops-mail\"} 265\n"
		"keventd_notify_retried_total{target=\"phone\"} 270\n"
		"# HELP keventd_notify_failed_total Tries that failed, per target.\n"
		"# TYPE keventd_notify_failed_total counter\n"
		"keventd_notify_failed_total{target=\"ops-mail\"} 266\n"
		"keventd_notify_failed_total{target=\"phone\"} 271\n"
		"# HELP keventd_notify_dropped_total Notifications given up, per target: past max_age, refused by the server, or the queue full.\n"
		"# TYPE keventd_notify_dropped_total counter\n"
		"keventd_notify_dropped_total{target=\"ops-mail\"} 267\n"
		"keventd_notify_dropped_total{target=\"phone\"} 272\n"
		"# HELP keventd_notify_sending 1 while the target sends; 0 when it is off (keventctl status says why).\n"
		"# TYPE keventd_notify_sending gauge\n"
		"keventd_notify_sending{target=\"ops-mail\"} 1\n"
		"keventd_notify_sending{target=\"phone\"} 0\n"
		"# HELP keventd_alertmanager_up 1 when the last post to Alertmanager succeeded.\n"
		"# TYPE keventd_alertmanager_up gauge\n"
		"keventd_alertmanager_up 1\n"
		"# HELP keventd_alertmanager_enabled 1 when keventd.yaml has an alertmanager: section.\n"
		"# TYPE keventd_alertmanager_enabled gauge\n"
		"keventd_alertmanager_enabled 1\n"
		"# HELP keventd_alertmanager_posts_total Posts of the alerts that Alertmanager took.\n"
		"# TYPE keventd_alertmanager_posts_total counter\n"
		"keventd_alertmanager_posts_total 281\n"
		"# HELP keventd_alertmanager_failed_total Posts to Alertmanager that failed: no connection, or an answer not 2xx.\n"
		"# TYPE keventd_alertmanager_failed_total counter\n"
		"keventd_alertmanager_failed_total 282\n"
		"# HELP keventd_alertmanager_alerts Alerts posted now: the condition rows that hold.\n"
		"# TYPE keventd_alertmanager_alerts gauge\n"
		"keventd_alertmanager_alerts 283\n"
		"# HELP keventd_alertmanager_resolved_pending Resolved alerts (conditions cleared) that no post has delivered yet.\n"
		"# TYPE keventd_alertmanager_resolved_pending gauge\n"
		"keventd_alertmanager_resolved_pending 284\n"
		"# HELP keventd_users_instances User instances connected to the system instance's users socket.\n"
		"# TYPE keventd_users_instances gauge\n"
		"keventd_users_instances 291\n"
		"# HELP keventd_users_sent_total Events sent to user instances.\n"
		"# TYPE keventd_users_sent_total counter\n"
		"keventd_users_sent_total 292\n"
		"# HELP keventd_users_withheld_total Events a user instance was not sent: the forwarding policy kept them from its user.\n"
		"# TYPE keventd_users_withheld_total counter\n"
		"keventd_users_withheld_total 293\n"
		"# HELP keventd_users_dropped_total Events dropped, the oldest, from a user instance's full queue (it did not read).\n"
		"# TYPE keventd_users_dropped_total counter\n"
		"keventd_users_dropped_total 294\n"
		"# HELP keventd_users_refused_total Connections to the users socket refused (too many).\n"
		"# TYPE keventd_users_refused_total counter\n"
		"keventd_users_refused_total 295\n"
		"# HELP keventd_users_connected 1 while this user instance is connected to the system's.\n"
		"# TYPE keventd_users_connected gauge\n"
		"keventd_users_connected 1\n"
		"# HELP keventd_users_received_total Events this user instance received from the system's.\n"
		"# TYPE keventd_users_received_total counter\n"
		"keventd_users_received_total 296\n"
		"# HELP keventd_users_dropped_at_system_total Events the system instance dropped for this user (its queue for us was full).\n"
		"# TYPE keventd_users_dropped_at_system_total counter\n"
		"keventd_users_dropped_at_system_total 297\n"
		"# HELP keventd_users_bad_total Messages of the system instance that were not an event.\n"
		"# TYPE keventd_users_bad_total counter\n"
		"keventd_users_bad_total 298\n"
		"# HELP keventd_rules Rules loaded.\n"
		"# TYPE keventd_rules gauge\n"
		"keventd_rules 3\n"
		"# HELP keventd_rule_files Rule files loaded.\n"
		"# TYPE keventd_rule_files gauge\n"
		"keventd_rule_files 2\n"
		"# HELP keventd_reloads_total Rule reloads.\n"
		"# TYPE keventd_reloads_total counter\n"
		"keventd_reloads_total 241\n"
		"# HELP keventd_reload_errors_total Rule reloads with a broken file.\n"
		"# TYPE keventd_reload_errors_total counter\n"
		"keventd_reload_errors_total 242\n"
		"# HELP keventd_rule_files_broken Rule files broken now: not in force, or only as their last good version.\n"
		"# TYPE keventd_rule_files_broken gauge\n"
		"keventd_rule_files_broken 1\n"
		"# HELP keventd_rule_matched_total Events the rule matched.\n"
		"# TYPE keventd_rule_matched_total counter\n"
		"keventd_rule_matched_total{rule=\"on-high\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 401\n"
		"keventd_rule_matched_total{rule=\"on-low \\\"q\\\" \\\\ end\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 0\n"
		"keventd_rule_matched_total{rule=\"spin-down\",file=\"/etc/keventd/rules.d/20-disk.yaml\"} 411\n"
		"# HELP keventd_rule_runs_total Handler runs of the rule.\n"
		"# TYPE keventd_rule_runs_total counter\n"
		"keventd_rule_runs_total{rule=\"on-high\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 402\n"
		"keventd_rule_runs_total{rule=\"on-low \\\"q\\\" \\\\ end\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 0\n"
		"keventd_rule_runs_total{rule=\"spin-down\",file=\"/etc/keventd/rules.d/20-disk.yaml\"} 412\n"
		"# HELP keventd_rule_failures_total Failed handler runs of the rule.\n"
		"# TYPE keventd_rule_failures_total counter\n"
		"keventd_rule_failures_total{rule=\"on-high\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 403\n"
		"keventd_rule_failures_total{rule=\"on-low \\\"q\\\" \\\\ end\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 0\n"
		"keventd_rule_failures_total{rule=\"spin-down\",file=\"/etc/keventd/rules.d/20-disk.yaml\"} 413\n"
		"# HELP keventd_rule_timeouts_total Handler runs of the rule killed on its timeout.\n"
		"# TYPE keventd_rule_timeouts_total counter\n"
		"keventd_rule_timeouts_total{rule=\"on-high\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 404\n"
		"keventd_rule_timeouts_total{rule=\"on-low \\\"q\\\" \\\\ end\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 0\n"
		"keventd_rule_timeouts_total{rule=\"spin-down\",file=\"/etc/keventd/rules.d/20-disk.yaml\"} 414\n"
		"# HELP keventd_rule_ratelimited_total Handler runs of the rule suppressed by its rate limit.\n"
		"# TYPE keventd_rule_ratelimited_total counter\n"
		"keventd_rule_ratelimited_total{rule=\"on-high\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 405\n"
		"keventd_rule_ratelimited_total{rule=\"on-low \\\"q\\\" \\\\ end\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 0\n"
		"keventd_rule_ratelimited_total{rule=\"spin-down\",file=\"/etc/keventd/rules.d/20-disk.yaml\"} 415\n"
		"# HELP keventd_rule_debounced_total Handler runs of the rule replaced by a later event (debounce).\n"
		"# TYPE keventd_rule_debounced_total counter\n"
		"keventd_rule_debounced_total{rule=\"on-high\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 406\n"
		"keventd_rule_debounced_total{rule=\"on-low \\\"q\\\" \\\\ end\",file=\"/etc/keventd/rules.d/10-power.yaml\"} 0\n"
		"keventd_rule_debounced_total{rule=\"spin-down\",file=\"/etc/keventd/rules.d/20-disk.yaml\"} 416\n");
	/* clang-format on */
}

/* Before the first load there are no rules: each rendering says so. */
static void test_no_ruleset(void **state)
{
	(void)state;
	struct kstats s;
	struct kstatus_extra x = {0};
	assert_int_equal(kstats_init(&s), 0);
	struct strbuf text = STRBUF_INIT, json = STRBUF_INIT, prom = STRBUF_INIT;
	kstats_render_text(&s, NULL, &x, &text);
	kstats_render_json(&s, NULL, &x, &json);
	kstats_render_prometheus(&s, NULL, &x, &prom);
	assert_non_null(strstr(strbuf_str(&text),
			       "\nrules: 0 in 0 files (reloads 0, reload errors 0)\n"
			       "queue: 0 pending, 0 running, max 0 children, size 0\n"));
	assert_null(strstr(strbuf_str(&text), "\nrule "));
	assert_non_null(strstr(strbuf_str(&json), "\"paused\":false}"));
	assert_non_null(strstr(strbuf_str(&json), "\"ruleset\":{\"rules\":0,\"files\":0,"
						  "\"reloads\":0,\"reload_errors\":0,\"broken\":0},"
						  "\"broken_files\":[],\"rules\":[]}\n"));
	assert_non_null(strstr(strbuf_str(&prom), "keventd_queue_paused 0\n"));
	assert_non_null(strstr(strbuf_str(&prom), "keventd_rules 0\n"));
	/* the rule families are there, with no samples */
	assert_non_null(
		strstr(strbuf_str(&prom), "# TYPE keventd_rule_ratelimited_total counter\n"));
	assert_null(strstr(strbuf_str(&prom), "keventd_rule_matched_total{"));
	strbuf_release(&text);
	strbuf_release(&json);
	strbuf_release(&prom);
	kstats_release(&s);
}

static void test_format_names(void **state)
{
	(void)state;
	assert_int_equal(kstatus_format_from_name("text"), KSTATUS_TEXT);
	assert_int_equal(kstatus_format_from_name("json"), KSTATUS_JSON);
	assert_int_equal(kstatus_format_from_name("prometheus"), KSTATUS_PROMETHEUS);
	assert_int_equal(kstatus_format_from_name("JSON"), -1);
	assert_int_equal(kstatus_format_from_name(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_source_paused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_row_rendered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_golden, setup, teardown),
		cmocka_unit_test(test_no_ruleset),
		cmocka_unit_test(test_format_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

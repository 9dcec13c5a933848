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

/* The counters of r; NULL when it has none yet (create: on ENOMEM only). */
static struct krule_counters *find(struct hashmap *rules, const struct krule *r, bool create)
{
	char buf[512];
	struct strbuf sb = STRBUF_INIT;
	const char *key = rule_key_fast(r, buf, sizeof(buf), &sb);
	struct krule_counters *c = key ? hashmap_get(rules, key) : NULL;
	if (!c && key && create) {
		c = calloc(1, sizeof(*c));
		if (c && hashmap_put(rules, key, c, NULL) < 0) {
			free(c);
			c = NULL;
		}
	}
	strbuf_release(&sb);
	return c;
}

struct krule_counters *kstats_rule(struct kstats *s, const struct krule *r)
{
	return find(s->rules, r, true);
}

static const struct krule_counters *lookup(const struct kstats *s, const struct krule *r)
{
	static const struct krule_counters zero;
	const struct krule_counters *c = find(s->rules, r, false);
	return c ? c : &zero;
}

static int prune_one(const char *key, void *value, void *keep)
{
	if (hashmap_get(keep, key))
		return 0;
	free(value);
	return 1;
}

void kstats_prune(struct kstats *s, const struct kruleset *rs)
{
	struct hashmap *keep;
	if (hashmap_new(&keep) < 0)
		return;
	struct strbuf key = STRBUF_INIT;
	for (size_t i = 0; i < rs->n_rules; i++) {
		strbuf_reset(&key);
		rule_key(rs->rules[i], &key);
		if (!key.oom)
			hashmap_put(keep, key.buf, (void *)1, NULL);
	}
	strbuf_release(&key);
	hashmap_sweep(s->rules, prune_one, keep);
	hashmap_free(keep, NULL);
}

#define STAT(f)	    KSTATS_FROM_STATS, offsetof(struct kstats, f)
#define SOURCES(f)  KSTATS_FROM_SOURCES, offsetof(struct kstats, f)
#define SUM(f)	    KSTATS_FROM_SOURCES_SUM, offsetof(struct kstats, f)
#define EXTRA(f)    KSTATS_FROM_EXTRA, offsetof(struct kstatus_extra, f)
#define FLAG(f)	    KSTATS_FROM_EXTRA_FLAG, offsetof(struct kstatus_extra, f)
#define TEXT(f)	    KSTATS_FROM_EXTRA_TEXT, offsetof(struct kstatus_extra, f)
#define XSOURCES(f) KSTATS_FROM_EXTRA_SOURCES, offsetof(struct kstatus_extra, f)
#define XFLAGS(f)   KSTATS_FROM_EXTRA_SOURCES_FLAG, offsetof(struct kstatus_extra, f)
#define NOTIFY(f)   KSTATS_FROM_NOTIFY, offsetof(struct kstatus_notify, f)
#define NFLAG(f)    KSTATS_FROM_NOTIFY_FLAG, offsetof(struct kstatus_notify, f)
#define NTEXT(f)    KSTATS_FROM_NOTIFY_TEXT, offsetof(struct kstatus_notify, f)
#define RULESET(f)  KSTATS_FROM_RULESET, offsetof(struct kruleset, f)
#define RULE(f)	    KSTATS_FROM_RULE, offsetof(struct krule_counters, f)

/* The spellings are those of keventctl(8), and users' scripts and scrapes
 * read them: the JSON keys and the Prometheus names never change. */
const struct kstats_row kstats_rows[] = {
	{KSTATS_UPTIME, "#s", "uptime_seconds", "uptime_seconds", "gauge", KSTATS_FROM_UPTIME, 0,
	 "Seconds since keventd started."},

	{KSTATS_SOURCES, "received", "received", "events_received_total", "counter",
	 SOURCES(received), "Events accepted into keventd, per source."},
	{KSTATS_SOURCES, "recovered", "recovered", "events_recovered_total", "counter",
	 SOURCES(recovered),
	 "Of the events received, those fetched from the kernel's ring after they were missed, "
	 "per source."},
	{KSTATS_SOURCES, "redelivered", "redelivered", "events_redelivered_total", "counter",
	 SOURCES(redelivered),
	 "Of the events received, those read back from the journal at start-up, accepted "
	 "before keventd stopped or died and not finished then, per source."},
	{KSTATS_SOURCES, "rejected", "rejected", "events_rejected_total", "counter",
	 SOURCES(rejected), "Invalid input rejected at the edge, never handled, per source."},
	{KSTATS_SOURCES, "overruns", "overruns", "receive_overruns_total", "counter",
	 SOURCES(overruns),
	 "Receive buffer overruns (ENOBUFS): events lost in the kernel, per source."},
	{KSTATS_SOURCES, "lost", "lost", "events_lost_total", "counter", SOURCES(lost),
	 "Events known lost (sequence number gaps), per source."},
	{KSTATS_SOURCES, "truncated", "truncated", "events_truncated_total", "counter",
	 SOURCES(truncated), "Events whose longest values were cut to fit the limits, per source."},
	{KSTATS_SOURCES, "pending", "pending", "queue_source_pending", "gauge",
	 XSOURCES(source_pending), "Events of the source queued or being handled."},
	{KSTATS_SOURCES, "share", "share", "queue_source_share", "gauge", XSOURCES(source_share),
	 "The source's share of the queue: its events queued before it pauses."},
	{KSTATS_SOURCES, "paused", "paused", "queue_source_paused", "gauge", XFLAGS(source_paused),
	 "1 while the source is paused on its full share of the queue."},
	{KSTATS_SOURCES, NULL, "paused_times", "queue_source_pauses_total", "counter",
	 SOURCES(paused), "Times the source was paused on its full share of the queue."},
	{KSTATS_SOURCES, NULL, "resynced", "events_resynced_total", "counter", SOURCES(resynced),
	 "Of the events received, those keventd made up for what it could not see "
	 "(KEVENT_SYNTHETIC=1: "
	 "a resynchronisation at start-up or after an overrun, or keventctl trigger), per source."},
	{KSTATS_SOURCES, NULL, "handled", "source_events_handled_total", "counter",
	 SOURCES(handled_by),
	 "Of the events received, those handled: every run done, or nothing to run, per source."},
	{KSTATS_SOURCES, NULL, "ratelimited", "source_events_ratelimited_total", "counter",
	 SOURCES(ratelimited_by),
	 "Of the events received, those whose every run was suppressed by a rate limit, per "
	 "source."},
	{KSTATS_SOURCES, NULL, "debounced", "source_events_debounced_total", "counter",
	 SOURCES(debounced_by),
	 "Of the events received, those whose only runs were debounced and each replaced by a "
	 "later event, per source."},

	{KSTATS_EVENTS, NULL, "received", NULL, "counter", SUM(received), NULL},
	{KSTATS_EVENTS, NULL, "rejected", NULL, "counter", SUM(rejected), NULL},
	{KSTATS_EVENTS, NULL, "overruns", NULL, "counter", SUM(overruns), NULL},
	{KSTATS_EVENTS, "handled #", "handled", "events_handled_total", "counter", STAT(handled),
	 "Events done: every handler run, or nothing to run."},
	{KSTATS_EVENTS, ", rate-limited #", "ratelimited", "events_ratelimited_total", "counter",
	 STAT(ratelimited), "Events whose every run was suppressed by a rate limit."},
	{KSTATS_EVENTS, ", debounced #", "debounced", "events_debounced_total", "counter",
	 STAT(events_debounced),
	 "Events whose only runs were debounced and each replaced by a later event."},
	{KSTATS_EVENTS, ", matched #", "matched", "events_matched_total", "counter", STAT(matched),
	 "Events that matched at least one rule."},
	/* the text rendering shows it with the queue */
	{KSTATS_EVENTS, NULL, "pending", "events_pending", "gauge", EXTRA(pending),
	 "Events queued or being handled."},

	{KSTATS_RUNS, "#", "started", "handler_runs_total", "counter", STAT(runs),
	 "Handlers started."},
	{KSTATS_RUNS, ", failures #", "failures", "handler_failures_total", "counter",
	 STAT(failures), "Handler runs that exited non-zero or were killed by a signal."},
	{KSTATS_RUNS, ", timeouts #", "timeouts", "handler_timeouts_total", "counter",
	 STAT(timeouts), "Handler runs killed on their timeout."},
	{KSTATS_RUNS, ", rate-limited #", "ratelimited", "handler_ratelimited_total", "counter",
	 STAT(runs_ratelimited), "Handler runs suppressed by a rule's rate limit."},
	{KSTATS_RUNS, ", dry-run #", "dry_run", "handler_dry_runs_total", "counter", STAT(dry_runs),
	 "Handler runs only logged (--dry-run)."},
	{KSTATS_RUNS, ", debounced #", "debounced", "handler_debounced_total", "counter",
	 STAT(debounced), "Handler runs replaced by a later event within the rule's debounce."},
	{KSTATS_RUNS, ", oom kills #", "oom_kills", "handler_oom_kills_total", "counter",
	 STAT(oom_kills), "Handler runs in which the rule's memory_max killed a process."},
	{KSTATS_RUNS, ", transient #", "transient", "handler_transient_total", "counter",
	 STAT(transient), "Handler runs started as transient systemd units."},
	{KSTATS_RUNS, ", no session #", "session_skipped", "handler_session_skipped_total",
	 "counter", STAT(session_skipped),
	 "Runs of session rules skipped: no session was active on seat0."},
	{KSTATS_RUNS, " (containment: cgroup)", "containment_cgroup", "handler_containment_cgroup",
	 "gauge", FLAG(cgroup), "1 while each handler run gets a cgroup of its own."},
	{KSTATS_RUNS, " (containment: process-group)", "containment_process_group", NULL, "gauge",
	 FLAG(process_group), NULL},
	{KSTATS_RUNS, NULL, "output_dropped_bytes", "handler_output_dropped_bytes_total", "counter",
	 STAT(output_dropped_bytes), "Bytes of handler output over the logging limit, not logged."},
	{KSTATS_RUNS, NULL, "ratelimit_full", "handler_ratelimit_full_total", "counter",
	 STAT(runs_ratelimit_full),
	 "Rate-limited runs suppressed by a window the rule's objects share while the "
	 "rate-limit table is full."},

	{KSTATS_QUEUE, "# pending", "pending", NULL, "gauge", EXTRA(pending), NULL},
	{KSTATS_QUEUE, ", # running", "running", "queue_running", "gauge", EXTRA(running),
	 "Handlers running now."},
	{KSTATS_QUEUE, ", max # children", "max_children", "queue_max_children", "gauge",
	 EXTRA(max_children), "Handlers allowed to run at once."},
	{KSTATS_QUEUE, ", size #", "size", "queue_size", "gauge", EXTRA(queue_size),
	 "Events queued, all sources together, before they pause: each has an even share."},
	/* paused twice: Prometheus has it before the count of pauses, JSON after */
	{KSTATS_QUEUE, NULL, NULL, "queue_paused", "gauge", FLAG(paused),
	 "1 while some source is paused on its full share of the queue."},
	{KSTATS_QUEUE, NULL, "paused_times", "queue_pauses_total", "counter", SUM(paused),
	 "Times a source was paused on its full share of the queue, all sources."},
	{KSTATS_QUEUE, " (a source is paused: its share is full)", "paused", NULL, "gauge",
	 FLAG(paused), NULL},

	{KSTATS_CONTROL, "clients #", "clients", "control_clients", "gauge", EXTRA(clients),
	 "Clients connected to the control socket."},
	{KSTATS_CONTROL, ", refused #", "refused", "control_refused_total", "counter",
	 STAT(ctl_refused), "Control socket peers refused by their credentials."},
	{KSTATS_CONTROL, ", bad requests #", "bad_requests", "control_bad_requests_total",
	 "counter", STAT(ctl_bad), "Malformed or unknown control requests."},
	{KSTATS_CONTROL, ", over limit #", "over_limit", "control_over_limit_total", "counter",
	 STAT(ctl_over_limit), "Control connections refused over the client limit."},
	{KSTATS_CONTROL, ", monitor drops #", "monitor_dropped", "monitor_dropped_total", "counter",
	 EXTRA(monitor_dropped), "Events not shown to a monitor too slow to read them."},
	{KSTATS_CONTROL, ", over user limit #", "over_user_limit", "control_over_user_limit_total",
	 "counter", STAT(ctl_over_user),
	 "Control connections refused over the limit of connections per user."},
	{KSTATS_CONTROL, ", root slot refusals #", "root_slot_refused",
	 "control_root_slot_refused_total", "counter", STAT(ctl_root_slot),
	 "Control connections refused because only the slot kept for root was left."},
	{KSTATS_CONTROL, ", idle dropped #", "idle_dropped", "control_idle_dropped_total",
	 "counter", STAT(ctl_idle_dropped),
	 "Idle control connections closed to make room for a new one."},
	{KSTATS_CONTROL, ", triggers refused #", "triggers_refused",
	 "control_triggers_refused_total", "counter", STAT(ctl_trigger_refused),
	 "keventctl triggers refused: the udev source's share was full, or the "
	 "connection's last trigger still waited."},

	{KSTATS_HISTORY, "# of", "entries", "history_entries", "gauge", EXTRA(history_len),
	 "Events in the history (keventctl events) now."},
	{KSTATS_HISTORY, " # events", "capacity", "history_capacity", "gauge",
	 EXTRA(history_capacity), "Events the history keeps at most (--history)."},
	{KSTATS_HISTORY, ", # bytes", "bytes", "history_bytes", "gauge", EXTRA(history_bytes),
	 "Memory the history holds, in bytes."},
	{KSTATS_HISTORY, ", not kept #", "not_kept", "history_not_kept_total", "counter",
	 EXTRA(history_lost), "Events the history could not keep for lack of memory."},

	/* failing: words in the text while it cannot write, a string in JSON */
	{KSTATS_JOURNAL, "failing (#), ", "failing", NULL, "gauge", TEXT(journal_failing), NULL},
	{KSTATS_JOURNAL, NULL, NULL, "journal_failing", "gauge", FLAG(journal_failing_flag),
	 "1 while the journal cannot write: send and post are refused."},
	{KSTATS_JOURNAL, "# bytes", "bytes", "journal_bytes", "gauge", EXTRA(journal_bytes),
	 "Bytes of the journal's segments in the state directory."},
	{KSTATS_JOURNAL, " (# unfinished)", "unfinished", "journal_unfinished", "gauge",
	 EXTRA(journal_live), "Events in the journal not finished yet."},
	{KSTATS_JOURNAL, ", corrupt #", "corrupt", "journal_corrupt_total", "counter",
	 EXTRA(journal_corrupt),
	 "Damaged journal records skipped at start-up: each an event lost."},
	{KSTATS_JOURNAL, ", # writes", "writes", "journal_writes_total", "counter",
	 EXTRA(journal_writes),
	 "Writes of records to the journal: each holds the events accepted in one round of the "
	 "loop."},
	{KSTATS_JOURNAL, ", refused #", "refused", "journal_refused_total", "counter",
	 STAT(journal_refused),
	 "Events of send and post refused: the journal could not write them."},
	{KSTATS_JOURNAL, ", full # times", "full_times", "journal_full_total", "counter",
	 STAT(journal_full), "Times the journal was full and paused intake."},
	{KSTATS_JOURNAL, " (full: intake paused)", "full", "journal_full", "gauge",
	 FLAG(journal_full), "1 while the journal is full and intake is paused."},

	{KSTATS_MQTT, "off", NULL, NULL, "gauge", FLAG(mqtt_off), NULL},
	{KSTATS_MQTT, NULL, "enabled", "mqtt_enabled", "gauge", FLAG(mqtt_enabled),
	 "1 when keventd.yaml names a broker."},
	{KSTATS_MQTT, "connected", "connected", "mqtt_connected", "gauge", FLAG(mqtt_connected),
	 "1 while connected to the broker."},
	{KSTATS_MQTT, "disconnected", NULL, NULL, "gauge", FLAG(mqtt_disconnected), NULL},
	{KSTATS_MQTT, " (published #", "published", "mqtt_published_total", "counter",
	 EXTRA(mqtt_published), "Messages sent to the broker, each once."},
	{KSTATS_MQTT, ", acknowledged #", "acknowledged", "mqtt_acknowledged_total", "counter",
	 EXTRA(mqtt_acked), "QoS 1 messages the broker acknowledged."},
	{KSTATS_MQTT, ", spooled #", "spooled", "mqtt_spooled", "gauge", EXTRA(mqtt_spooled),
	 "Messages waiting for the broker or its acknowledgement now."},
	{KSTATS_MQTT, ", dropped #", "dropped", "mqtt_dropped_total", "counter",
	 EXTRA(mqtt_dropped), "Messages never sent: the spool was full, or QoS 0 while offline."},
	{KSTATS_MQTT, ", corrupt #", "corrupt", "mqtt_spool_corrupt_total", "counter",
	 EXTRA(mqtt_corrupt),
	 "Spooled messages lost with damaged records of the spool, skipped by their numbers."},
	{KSTATS_MQTT, ", received #", "received", "mqtt_received_total", "counter",
	 EXTRA(mqtt_received), "Messages taken from the broker's subscriptions."},
	{KSTATS_MQTT, ", duplicates #", "duplicates", "mqtt_duplicates_total", "counter",
	 EXTRA(mqtt_duplicates),
	 "Of the messages received, those dropped as delivered again: an event already taken."},
	{KSTATS_MQTT, ", connection attempts #)", "connection_attempts",
	 "mqtt_connection_attempts_total", "counter", EXTRA(mqtt_attempts),
	 "Attempts to connect to the broker."},
	/* publishing: words in the text while it is off, a string in JSON, a gauge */
	{KSTATS_MQTT, "; publishing off (#)", NULL, NULL, "gauge", TEXT(mqtt_off_why), NULL},
	{KSTATS_MQTT, NULL, "publishing", NULL, "gauge", TEXT(mqtt_publishing_text), NULL},
	{KSTATS_MQTT, NULL, NULL, "mqtt_publishing", "gauge", FLAG(mqtt_publishing),
	 "1 while events are published; 0 when publishing is off (keventctl status says why)."},

	{KSTATS_CONDITIONS, "off (--lib-dir none, or not in --sources); ", NULL, NULL, "gauge",
	 FLAG(cond_off), NULL},
	{KSTATS_CONDITIONS, "# holding", "holding", "conditions_holding", "gauge",
	 EXTRA(cond_holding), "Condition rows that hold now (keventctl conditions)."},
	{KSTATS_CONDITIONS, ": # critical", "critical", "conditions_critical", "gauge",
	 EXTRA(cond_critical), "Condition rows of severity critical that hold now."},
	{KSTATS_CONDITIONS, ", # warning", "warning", "conditions_warning", "gauge",
	 EXTRA(cond_warning), "Condition rows of severity warning that hold now."},
	{KSTATS_CONDITIONS, ", # info", "info", "conditions_info", "gauge", EXTRA(cond_info),
	 "Condition rows of severity info that hold now."},
	{KSTATS_CONDITIONS, "; # acknowledged", "acknowledged", "conditions_acknowledged", "gauge",
	 EXTRA(cond_acked), "Condition rows that hold and were acknowledged (keventctl ack)."},
	{KSTATS_CONDITIONS, ", refused #", "refused", "conditions_refused_total", "counter",
	 EXTRA(cond_refused), "Condition sets refused: the table held its bound of rows."},
	{KSTATS_CONDITIONS, ", write errors #", "write_errors", "conditions_write_errors_total",
	 "counter", EXTRA(cond_write_errors), "Failed writes of the condition table."},
	/* the text says "off" alone without targets (text_head()) */
	{KSTATS_NOTIFY, "# targets", "targets", NULL, "gauge", EXTRA(notify_n), NULL},
	{KSTATS_NOTIFY, NULL, "enabled", "notify_enabled", "gauge", FLAG(notify_enabled),
	 "1 when keventd.yaml names notification targets."},
	{KSTATS_NOTIFY, ", queue damaged #", "damaged", "notify_queue_damaged_total", "counter",
	 EXTRA(notify_damaged),
	 "Queued notifications lost with damaged files of the queue, each set aside."},
	{KSTATS_NOTIFY, ", unknown targets #", "unknown_targets", "notify_unknown_targets_total",
	 "counter", EXTRA(notify_unknown),
	 "Notifications not made: the rule names a target keventd.yaml has not."},

	{KSTATS_NOTIFY_TARGETS, "sent #", "sent", "notify_sent_total", "counter", NOTIFY(sent),
	 "Notifications the target's server took, per target."},
	{KSTATS_NOTIFY_TARGETS, ", queued #", "queued", "notify_queued", "gauge", NOTIFY(queued),
	 "Notifications waiting to be sent now, per target."},
	{KSTATS_NOTIFY_TARGETS, ", retried #", "retried", "notify_retried_total", "counter",
	 NOTIFY(retried), "Tries of a notification after its first, per target."},
	{KSTATS_NOTIFY_TARGETS, ", failed #", "failed", "notify_failed_total", "counter",
	 NOTIFY(failed), "Tries that failed, per target."},
	{KSTATS_NOTIFY_TARGETS, ", dropped #", "dropped", "notify_dropped_total", "counter",
	 NOTIFY(dropped),
	 "Notifications given up, per target: past max_age, refused by the server, or the "
	 "queue full."},
	{KSTATS_NOTIFY_TARGETS, NULL, NULL, "notify_sending", "gauge", NFLAG(sending),
	 "1 while the target sends; 0 when it is off (keventctl status says why)."},
	{KSTATS_NOTIFY_TARGETS, "; off (#)", "off", NULL, "gauge", NTEXT(off), NULL},
	{KSTATS_NOTIFY_TARGETS, "; last error: #", "last_error", NULL, "gauge", NTEXT(last_error),
	 NULL},

	/* the text says "off" alone without the section (text_head()) */
	{KSTATS_ALERTMANAGER, "up", "up", "alertmanager_up", "gauge", FLAG(am_up),
	 "1 when the last post to Alertmanager succeeded."},
	{KSTATS_ALERTMANAGER, NULL, "enabled", "alertmanager_enabled", "gauge", FLAG(am_enabled),
	 "1 when keventd.yaml has an alertmanager: section."},
	{KSTATS_ALERTMANAGER, "down", NULL, NULL, "gauge", FLAG(am_down), NULL},
	{KSTATS_ALERTMANAGER, " (posts #", "posts", "alertmanager_posts_total", "counter",
	 EXTRA(am_posts), "Posts of the alerts that Alertmanager took."},
	{KSTATS_ALERTMANAGER, ", failed #", "failed", "alertmanager_failed_total", "counter",
	 EXTRA(am_failed),
	 "Posts to Alertmanager that failed: no connection, or an answer not 2xx."},
	{KSTATS_ALERTMANAGER, ", alerts #", "alerts", "alertmanager_alerts", "gauge",
	 EXTRA(am_alerts), "Alerts posted now: the condition rows that hold."},
	{KSTATS_ALERTMANAGER, ", resolved pending #)", "resolved_pending",
	 "alertmanager_resolved_pending", "gauge", EXTRA(am_resolved),
	 "Resolved alerts (conditions cleared) that no post has delivered yet."},
	{KSTATS_ALERTMANAGER, "; off (#)", "off", NULL, "gauge", TEXT(am_off), NULL},
	{KSTATS_ALERTMANAGER, "; last error: #", "last_error", NULL, "gauge", TEXT(am_last_error),
	 NULL},

	/* the text has a line of its own (text_users()) */
	{KSTATS_USERS, NULL, "instances", "users_instances", "gauge", EXTRA(users_peers),
	 "User instances connected to the system instance's users socket."},
	{KSTATS_USERS, NULL, "sent", "users_sent_total", "counter", EXTRA(users_sent),
	 "Events sent to user instances."},
	{KSTATS_USERS, NULL, "withheld", "users_withheld_total", "counter", EXTRA(users_withheld),
	 "Events a user instance was not sent: the forwarding policy kept them from its user."},
	{KSTATS_USERS, NULL, "dropped", "users_dropped_total", "counter", EXTRA(users_dropped),
	 "Events dropped, the oldest, from a user instance's full queue (it did not read)."},
	{KSTATS_USERS, NULL, "refused", "users_refused_total", "counter", EXTRA(users_refused),
	 "Connections to the users socket refused (too many)."},
	{KSTATS_USERS, NULL, "connected", "users_connected", "gauge", EXTRA(users_connected),
	 "1 while this user instance is connected to the system's."},
	{KSTATS_USERS, NULL, "received", "users_received_total", "counter", EXTRA(users_received),
	 "Events this user instance received from the system's."},
	{KSTATS_USERS, NULL, "dropped_at_system", "users_dropped_at_system_total", "counter",
	 EXTRA(users_dropped_at_system),
	 "Events the system instance dropped for this user (its queue for us was full)."},
	{KSTATS_USERS, NULL, "bad", "users_bad_total", "counter", EXTRA(users_bad),
	 "Messages of the system instance that were not an event."},

	{KSTATS_RULESET, "#", "rules", "rules", "gauge", RULESET(n_rules), "Rules loaded."},
	{KSTATS_RULESET, " in # files", "files", "rule_files", "gauge", RULESET(n_files),
	 "Rule files loaded."},
	{KSTATS_RULESET, " (reloads #", "reloads", "reloads_total", "counter", STAT(reloads),
	 "Rule reloads."},
	{KSTATS_RULESET, ", reload errors #)", "reload_errors", "reload_errors_total", "counter",
	 STAT(reload_errors), "Rule reloads with a broken file."},
	{KSTATS_RULESET, NULL, "broken", "rule_files_broken", "gauge", RULESET(n_broken),
	 "Rule files broken now: not in force, or only as their last good version."},

	{KSTATS_RULES, "matched #", "matched", "rule_matched_total", "counter", RULE(matched),
	 "Events the rule matched."},
	{KSTATS_RULES, ", runs #", "runs", "rule_runs_total", "counter", RULE(runs),
	 "Handler runs of the rule."},
	{KSTATS_RULES, ", failures #", "failures", "rule_failures_total", "counter", RULE(failures),
	 "Failed handler runs of the rule."},
	{KSTATS_RULES, ", timeouts #", "timeouts", "rule_timeouts_total", "counter", RULE(timeouts),
	 "Handler runs of the rule killed on its timeout."},
	{KSTATS_RULES, ", rate-limited #", "ratelimited", "rule_ratelimited_total", "counter",
	 RULE(ratelimited), "Handler runs of the rule suppressed by its rate limit."},
	{KSTATS_RULES, ", debounced #", "debounced", "rule_debounced_total", "counter",
	 RULE(debounced), "Handler runs of the rule replaced by a later event (debounce)."},
};
const size_t kstats_n_rows = ARRAY_SIZE(kstats_rows);

/* Index into this table == enum kstats_section. */
static const struct {
	const char *text; /* starts its line; NULL: sources and rules have their own */
	const char *json; /* its key; NULL: its rows are at the top level */
} sections[KSTATS_NSECTIONS] = {
	[KSTATS_UPTIME] = {"uptime: ", NULL},
	[KSTATS_SOURCES] = {NULL, "sources"},
	[KSTATS_EVENTS] = {"events: ", "events"},
	[KSTATS_RUNS] = {"runs: ", "runs"},
	[KSTATS_QUEUE] = {"queue: ", "queue"},
	[KSTATS_CONTROL] = {"control: ", "control"},
	[KSTATS_HISTORY] = {"history: ", "history"},
	[KSTATS_MQTT] = {"mqtt: ", "mqtt"},
	[KSTATS_JOURNAL] = {"journal: ", "journal"},
	[KSTATS_CONDITIONS] = {"conditions: ", "conditions"},
	[KSTATS_NOTIFY] = {"notify: ", "notify"},
	[KSTATS_NOTIFY_TARGETS] = {NULL, "notify_targets"},
	[KSTATS_ALERTMANAGER] = {"alertmanager: ", "alertmanager"},
	[KSTATS_USERS] = {"users: ", "users"},
	[KSTATS_RULESET] = {"rules: ", "ruleset"},
	[KSTATS_RULES] = {NULL, "rules"},
};

/* The text rendering has the rule set and the queue first. */
static const enum kstats_section text_order[] = {
	KSTATS_UPTIME,	       KSTATS_RULESET,	    KSTATS_QUEUE,      KSTATS_SOURCES,
	KSTATS_EVENTS,	       KSTATS_RUNS,	    KSTATS_CONTROL,    KSTATS_HISTORY,
	KSTATS_JOURNAL,	       KSTATS_MQTT,	    KSTATS_CONDITIONS, KSTATS_NOTIFY,
	KSTATS_NOTIFY_TARGETS, KSTATS_ALERTMANAGER, KSTATS_USERS,      KSTATS_RULES,
};

/* What a rendering reads. */
struct view {
	const struct kstats *s;
	const struct kruleset *rs; /* NULL before the first load */
	const struct kstatus_extra *x;
};

/* How many times sec is shown: once per source, once per rule, or once. */
static size_t count(const struct view *v, enum kstats_section sec)
{
	if (sec == KSTATS_SOURCES)
		return KEVENT_SOURCE_MAX;
	if (sec == KSTATS_RULES)
		return v->rs ? v->rs->n_rules : 0;
	if (sec == KSTATS_NOTIFY_TARGETS)
		return v->x->notify_n;
	return 1;
}

#define AT(type, base, off) (*(const type *)((const char *)(base) + (off)))

/* The value of row r; of source or rule i in the per-source and per-rule sections. */
static uint64_t value(const struct kstats_row *r, const struct view *v, size_t i)
{
	uint64_t sum = 0;
	switch (r->from) {
	case KSTATS_FROM_STATS:
		return AT(uint64_t, v->s, r->off);
	case KSTATS_FROM_SOURCES:
		return AT(uint64_t, v->s, r->off + i * sizeof(uint64_t));
	case KSTATS_FROM_SOURCES_SUM:
		for (i = 0; i < KEVENT_SOURCE_MAX; i++)
			sum += AT(uint64_t, v->s, r->off + i * sizeof(uint64_t));
		return sum;
	case KSTATS_FROM_EXTRA:
		return AT(size_t, v->x, r->off);
	case KSTATS_FROM_EXTRA_FLAG:
		return AT(bool, v->x, r->off);
	case KSTATS_FROM_EXTRA_SOURCES:
		return AT(size_t, v->x, r->off + i * sizeof(size_t));
	case KSTATS_FROM_EXTRA_SOURCES_FLAG:
		return AT(bool, v->x, r->off + i * sizeof(bool));
	case KSTATS_FROM_RULESET:
		return v->rs ? AT(size_t, v->rs, r->off) : 0;
	case KSTATS_FROM_UPTIME:
		return (now_monotonic_ns() - v->s->started_ns) / 1000000000ull;
	case KSTATS_FROM_RULE:
		return AT(uint64_t, lookup(v->s, v->rs->rules[i]), r->off);
	case KSTATS_FROM_NOTIFY:
		return AT(size_t, &v->x->notify[i], r->off);
	case KSTATS_FROM_NOTIFY_FLAG:
		return AT(bool, &v->x->notify[i], r->off);
	case KSTATS_FROM_EXTRA_TEXT:
	case KSTATS_FROM_NOTIFY_TEXT:
		return 0; /* not a number: its renderings read it themselves */
	}
	return 0;
}

static bool is_flag(const struct kstats_row *r)
{
	return r->from == KSTATS_FROM_EXTRA_FLAG || r->from == KSTATS_FROM_EXTRA_SOURCES_FLAG ||
	       r->from == KSTATS_FROM_NOTIFY_FLAG;
}

/* A text row's string (KSTATS_FROM_EXTRA_TEXT, KSTATS_FROM_NOTIFY_TEXT) of
 * line i; NULL: none now. */
static const char *row_text(const struct kstats_row *r, const struct view *v, size_t i)
{
	if (r->from == KSTATS_FROM_NOTIFY_TEXT)
		return AT(char *, &v->x->notify[i], r->off);
	return AT(char *, v->x, r->off);
}

static bool is_text(const struct kstats_row *r)
{
	return r->from == KSTATS_FROM_EXTRA_TEXT || r->from == KSTATS_FROM_NOTIFY_TEXT;
}

/* The rest of line i of sec: each row's words with its value in place of
 * the '#'; for the sources, a column each (i < 0: their headings). */
static void text_line(struct strbuf *o, const struct view *v, enum kstats_section sec, long i)
{
	for (const struct kstats_row *r = kstats_rows; r < kstats_rows + kstats_n_rows; r++) {
		if (r->section != sec || !r->text)
			continue;
		const char *hash = strchr(r->text, '#');
		if (is_text(r)) {
			const char *t = row_text(r, v, i < 0 ? 0 : (size_t)i);
			if (t) {
				strbuf_add(o, r->text, (size_t)(hash - r->text));
				strbuf_put_escaped(o, t);
				strbuf_puts(o, hash + 1);
			}
			continue;
		}
		uint64_t n = i < 0 ? 0 : value(r, v, (size_t)i);
		if (sec == KSTATS_SOURCES && i < 0)
			strbuf_printf(o, " %12s", r->text);
		else if (sec == KSTATS_SOURCES && is_flag(r))
			strbuf_printf(o, " %12s", n ? "yes" : "no");
		else if (sec == KSTATS_SOURCES)
			strbuf_printf(o, " %12" PRIu64, n);
		else if (hash)
			strbuf_printf(o, "%.*s%" PRIu64 "%s", (int)(hash - r->text), r->text, n,
				      hash + 1);
		else if (n) /* a flag, shown while set */
			strbuf_puts(o, r->text);
	}
	strbuf_putc(o, '\n');
}

/* "rule NAME (FILE): ", escaped: a default name is made of its file's name,
 * which nothing keeps free of control characters. */
static void rule_heading(struct strbuf *o, const struct krule *r)
{
	strbuf_puts(o, "rule ");
	strbuf_put_escaped(o, r->name);
	strbuf_puts(o, " (");
	strbuf_put_escaped(o, r->file->name);
	strbuf_puts(o, "): ");
}

/* Everything before the rules' lines (the last section). */
/* A line per rule file that is broken now: not in force, or only as its
 * last good version (keventctl(8), status). */
static void text_broken(struct strbuf *o, const struct kruleset *rs)
{
	for (size_t i = 0; rs && i < rs->n_broken; i++) {
		strbuf_puts(o, "broken: ");
		strbuf_put_escaped(o, rs->broken[i].name);
		strbuf_puts(o, rs->broken[i].kept ? " (its last good version is in force): "
						  : " (not loaded): ");
		strbuf_put_escaped(o, rs->broken[i].why);
		strbuf_putc(o, '\n');
	}
}

/* The users socket's line: the side this instance is on. */
static void text_users(struct strbuf *o, const struct kstatus_extra *x)
{
	if (x->users_server)
		strbuf_printf(
			o,
			"users: listening, %zu connected, sent %zu, withheld %zu, dropped %zu, "
			"refused %zu\n",
			x->users_peers, x->users_sent, x->users_withheld, x->users_dropped,
			x->users_refused);
	else if (x->users_client)
		strbuf_printf(o,
			      "users: %s the system instance, received %zu, dropped there %zu, "
			      "bad %zu\n",
			      x->users_connected ? "connected to" : "waiting for",
			      x->users_received, x->users_dropped_at_system, x->users_bad);
	else
		strbuf_puts(o, "users: off\n");
}

static void text_head(struct strbuf *o, const struct view *v)
{
	for (size_t k = 0; k < ARRAY_SIZE(text_order) && text_order[k] != KSTATS_RULES; k++) {
		enum kstats_section sec = text_order[k];
		if (sec == KSTATS_NOTIFY && !v->x->notify_enabled) {
			strbuf_puts(o, "notify: off\n"); /* and no counters */
			continue;
		}
		if (sec == KSTATS_ALERTMANAGER && !v->x->am_enabled) {
			strbuf_puts(o, "alertmanager: off\n");
			continue;
		}
		if (sec == KSTATS_USERS) {
			text_users(o, v->x);
			continue;
		}
		for (long i = sec == KSTATS_SOURCES ? -1 : 0; i < (long)count(v, sec); i++) {
			if (sec == KSTATS_SOURCES) {
				strbuf_printf(o, "%-10s",
					      i < 0 ? "source"
						    : kevent_source_name((enum kevent_source)i));
			} else if (sec == KSTATS_NOTIFY_TARGETS) {
				strbuf_puts(o, "notify ");
				strbuf_put_escaped(o, v->x->notify[i].name);
				strbuf_puts(o, ": ");
			} else {
				strbuf_puts(o, sections[sec].text);
			}
			text_line(o, v, sec, i);
		}
		if (sec == KSTATS_RULESET)
			text_broken(o, v->rs);
	}
}

/* Rule i's line. */
static void text_rule(struct strbuf *o, const struct view *v, size_t i)
{
	rule_heading(o, v->rs->rules[i]);
	text_line(o, v, KSTATS_RULES, (long)i);
}

/* "key":value for each row of sec, the first after sep. */
static void json_members(struct strbuf *o, const struct view *v, enum kstats_section sec, size_t i,
			 const char *sep)
{
	for (const struct kstats_row *r = kstats_rows; r < kstats_rows + kstats_n_rows; r++) {
		if (r->section != sec || !r->json)
			continue;
		uint64_t n = value(r, v, i);
		strbuf_printf(o, "%s\"%s\":", sep, r->json);
		sep = ",";
		if (is_text(r)) {
			const char *t = row_text(r, v, i);
			if (t)
				strbuf_json(o, t);
			else
				strbuf_puts(o, "null");
			continue;
		}
		if (is_flag(r))
			strbuf_puts(o, n ? "true" : "false");
		else
			strbuf_printf(o, "%" PRIu64, n);
	}
}

/* {"uptime_seconds":N,"sources":{"kernel":{...},...},"events":{...},...,
 *  "rules":[{"name":"...","file":"...",...},...]}: everything before the
 * rules' objects (the rules, the last section, are streamed). */
static void json_head(struct strbuf *o, const struct view *v)
{
	strbuf_putc(o, '{');
	if (v->x->about_json)
		strbuf_printf(o, "\"keventd\":{%s},", v->x->about_json);
	json_members(o, v, KSTATS_UPTIME, 0, "");
	for (int sec = KSTATS_UPTIME + 1; sec < KSTATS_RULES; sec++) {
		strbuf_printf(o, ",\"%s\":{", sections[sec].json);
		for (size_t i = 0; i < count(v, sec); i++) {
			if (sec == KSTATS_SOURCES)
				strbuf_printf(o, "%s\"%s\":{", i ? "," : "",
					      kevent_source_name((enum kevent_source)i));
			if (sec == KSTATS_NOTIFY_TARGETS) {
				strbuf_puts(o, i ? "," : "");
				strbuf_json(o, v->x->notify[i].name);
				strbuf_putc(o, ':');
				strbuf_putc(o, '{');
			}
			json_members(o, v, sec, i, "");
			if (sec == KSTATS_SOURCES || sec == KSTATS_NOTIFY_TARGETS)
				strbuf_putc(o, '}');
		}
		strbuf_putc(o, '}');
	}
	strbuf_puts(o, ",\"broken_files\":[");
	for (size_t i = 0; v->rs && i < v->rs->n_broken; i++) {
		const struct kbroken *b = &v->rs->broken[i];
		strbuf_puts(o, i ? ",{\"file\":" : "{\"file\":");
		strbuf_json(o, b->name);
		strbuf_puts(o, ",\"error\":");
		strbuf_json(o, b->why);
		strbuf_printf(o, ",\"last_good_in_force\":%s}", b->kept ? "true" : "false");
	}
	strbuf_putc(o, ']');
	strbuf_printf(o, ",\"%s\":[", sections[KSTATS_RULES].json);
}

/* Rule i's object. */
static void json_rule(struct strbuf *o, const struct view *v, size_t i)
{
	strbuf_puts(o, i ? ",{\"name\":" : "{\"name\":");
	strbuf_json(o, v->rs->rules[i]->name);
	strbuf_puts(o, ",\"file\":");
	strbuf_json(o, v->rs->rules[i]->file->path);
	json_members(o, v, KSTATS_RULES, i, ",");
	strbuf_putc(o, '}');
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

/* sep, then a label: its value with backslash, double quote and newline escaped. */
static void prom_label(struct strbuf *o, char sep, const char *name, const char *value)
{
	strbuf_printf(o, "%c%s=\"", sep, name);
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

static void prom_help(struct strbuf *o, const struct kstats_row *r)
{
	strbuf_printf(o, "# HELP keventd_%s %s\n# TYPE keventd_%s %s\n", r->prom, r->help, r->prom,
		      r->type);
}

/* Row r's sample for source or rule i. */
static void prom_sample(struct strbuf *o, const struct view *v, const struct kstats_row *r,
			size_t i)
{
	strbuf_printf(o, "keventd_%s", r->prom);
	if (r->section == KSTATS_SOURCES) {
		prom_label(o, '{', "source", kevent_source_name((enum kevent_source)i));
		strbuf_putc(o, '}');
	} else if (r->section == KSTATS_NOTIFY_TARGETS) {
		prom_label(o, '{', "target", v->x->notify[i].name);
		strbuf_putc(o, '}');
	} else if (r->section == KSTATS_RULES) {
		prom_label(o, '{', "rule", v->rs->rules[i]->name);
		prom_label(o, ',', "file", v->rs->rules[i]->file->path);
		strbuf_putc(o, '}');
	}
	strbuf_printf(o, " %" PRIu64 "\n", value(r, v, i));
}

/* The families before the rules' (the rows are in section order, the
 * rules' last). */
static void prom_head(struct strbuf *o, const struct view *v)
{
	strbuf_puts(o, "# HELP keventd_build_info Always 1; the version label is keventd's.\n"
		       "# TYPE keventd_build_info gauge\nkeventd_build_info");
	prom_label(o, '{', "version", KEVENT_VERSION);
	strbuf_puts(o, "} 1\n");
	for (const struct kstats_row *r = kstats_rows; r < kstats_rows + kstats_n_rows; r++) {
		if (!r->prom || r->section == KSTATS_RULES)
			continue;
		prom_help(o, r);
		for (size_t i = 0; i < count(v, r->section); i++)
			prom_sample(o, v, r, i);
	}
}

/* The rules' families, a sample at a time: false once all are out. */
static bool prom_rules_next(struct kstats_cursor *cur, const struct view *v, struct strbuf *o)
{
	size_t before = o->len;
	for (; cur->row < kstats_n_rows; cur->row++, cur->i = 0, cur->helped = false) {
		const struct kstats_row *r = &kstats_rows[cur->row];
		if (!r->prom || r->section != KSTATS_RULES)
			continue;
		if (!cur->helped)
			prom_help(o, r);
		cur->helped = true;
		if (cur->i < count(v, KSTATS_RULES)) {
			prom_sample(o, v, r, cur->i++);
			return true;
		}
	}
	return o->len > before;
}

void kstats_cursor_init(struct kstats_cursor *cur, enum kstatus_format format)
{
	*cur = (struct kstats_cursor){.format = format};
}

bool kstats_render_next(struct kstats_cursor *cur, const struct kstats *s,
			const struct kruleset *rs, const struct kstatus_extra *x, struct strbuf *o)
{
	const struct view v = {s, rs, x};
	if (!cur->head) {
		cur->head = true;
		if (cur->format == KSTATUS_JSON)
			json_head(o, &v);
		else if (cur->format == KSTATUS_PROMETHEUS)
			prom_head(o, &v);
		else
			text_head(o, &v);
		return true;
	}
	if (cur->format == KSTATUS_PROMETHEUS)
		return prom_rules_next(cur, &v, o);
	if (cur->i < count(&v, KSTATS_RULES)) {
		if (cur->format == KSTATUS_JSON)
			json_rule(o, &v, cur->i);
		else
			text_rule(o, &v, cur->i);
		cur->i++;
		return true;
	}
	if (cur->format == KSTATUS_JSON && !cur->tail) {
		cur->tail = true;
		strbuf_puts(o, "]}\n");
		return true;
	}
	return false;
}

/* The whole rendering at once. */
static void render_all(enum kstatus_format format, const struct kstats *s,
		       const struct kruleset *rs, const struct kstatus_extra *x, struct strbuf *o)
{
	struct kstats_cursor cur;
	kstats_cursor_init(&cur, format);
	while (kstats_render_next(&cur, s, rs, x, o))
		;
}

void kstats_render_text(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *o)
{
	render_all(KSTATUS_TEXT, s, rs, x, o);
}

void kstats_render_json(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *o)
{
	render_all(KSTATUS_JSON, s, rs, x, o);
}

void kstats_render_prometheus(const struct kstats *s, const struct kruleset *rs,
			      const struct kstatus_extra *x, struct strbuf *o)
{
	render_all(KSTATUS_PROMETHEUS, s, rs, x, o);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's counters, and their text, JSON and Prometheus renderings
 * for status: one table, kstats_rows, that all three read. */
#ifndef KEVENT_STATS_H
#define KEVENT_STATS_H

#include <stdint.h>

#include "event.h"
#include "hashmap.h"
#include "ruleset.h"
#include "util.h"

struct krule_counters {
	uint64_t matched, runs, failures, timeouts, ratelimited, debounced;
};

struct kstats {
	/* per source, at the edge */
	uint64_t received[KEVENT_SOURCE_MAX];  /* events accepted into the daemon */
	uint64_t recovered[KEVENT_SOURCE_MAX]; /* of those: fetched after they were missed */
	/* of those: read back from the journal at start-up, unfinished */
	uint64_t redelivered[KEVENT_SOURCE_MAX];
	/* made up for what could not be seen (KEVENT_SYNTHETIC=1) */
	uint64_t resynced[KEVENT_SOURCE_MAX];
	uint64_t rejected[KEVENT_SOURCE_MAX];  /* invalid input, never handled */
	uint64_t overruns[KEVENT_SOURCE_MAX];  /* receive buffer overruns (ENOBUFS) */
	uint64_t lost[KEVENT_SOURCE_MAX];      /* events known lost (seqnum gaps) */
	uint64_t truncated[KEVENT_SOURCE_MAX]; /* events cut to fit the limits */
	/* what became of accepted events: handled + ratelimited +
	 * events_debounced + queued or waiting for their debounce + dropped at
	 * a stop + kept in the journal at a stop (kept, logged) =
	 * received */
	uint64_t handled; /* every run done (or nothing to run) */
	/* the same three, per source: received[i] = handled_by[i] +
	 * ratelimited_by[i] + debounced_by[i] + its pending, dropped, kept */
	uint64_t handled_by[KEVENT_SOURCE_MAX];
	uint64_t ratelimited_by[KEVENT_SOURCE_MAX];
	uint64_t debounced_by[KEVENT_SOURCE_MAX];
	uint64_t ratelimited;	   /* every run it would have done was suppressed */
	uint64_t events_debounced; /* its only runs were debounced, each replaced */
	uint64_t matched;	   /* events that matched at least one rule */
	/* handler runs */
	uint64_t runs, failures, timeouts, runs_ratelimited, dry_runs;
	uint64_t debounced;	      /* runs replaced by a later event (debounce:) */
	uint64_t runs_ratelimit_full; /* of runs_ratelimited: by a shared window */
	uint64_t output_dropped_bytes;
	uint64_t oom_kills;	  /* runs in which the memory limit killed a process */
	uint64_t transient;	  /* of runs: started as transient systemd units */
	uint64_t session_skipped; /* session: active runs with no active session */
	/* intake */
	uint64_t paused[KEVENT_SOURCE_MAX];  /* times the source was paused on its full share */
	uint64_t dropped[KEVENT_SOURCE_MAX]; /* queued, never started: keventd stopped */
	/* queued, not finished at the stop: the journal keeps them for the
	 * next start, which handles them again (logged, not in status) */
	uint64_t kept[KEVENT_SOURCE_MAX];
	uint64_t journal_full; /* times the journal was full and paused intake */
	/* send/post events refused: the journal could not write them */
	uint64_t journal_refused;
	/* control socket */
	uint64_t ctl_refused, ctl_bad, ctl_over_limit;
	uint64_t ctl_over_user;	      /* refused: its user has the most connections */
	uint64_t ctl_root_slot;	      /* refused: only the slot kept for root was left */
	uint64_t ctl_idle_dropped;    /* idle connections closed to make room */
	uint64_t ctl_trigger_refused; /* triggers refused: one waiting, or no room */
	/* observers refused: past KEVENT_MAX_OBSERVERS (logged, not in status) */
	uint64_t observers_refused;
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

/* A notification target's counters, as status shows them (notifier.h). */
#define KSTATUS_NOTIFY_MAX 32
struct kstatus_notify {
	const char *name; /* the configuration's, which lives as long as keventd */
	size_t sent, queued, retried, failed, dropped;
	bool sending;
	/* NULL, or what the two buffers hold: why it sends nothing, and the
	 * last failure's words */
	const char *off, *last_error;
	char off_buf[160], error_buf[160];
};

struct kstatus_extra {
	/* JSON only: the members of the verdict's object, "keventd" (NULL:
	 * none), first in the reply */
	const char *about_json;
	size_t pending, running, max_children, queue_size, clients;
	bool paused; /* some source is paused */
	/* containment: a cgroup per handler run, or the process group alone */
	bool cgroup, process_group;
	/* per source: events queued or running, its share of the queue, paused */
	size_t source_pending[KEVENT_SOURCE_MAX];
	size_t source_share[KEVENT_SOURCE_MAX];
	bool source_paused[KEVENT_SOURCE_MAX];
	/* the control socket's monitors: events not shown to one too slow
	 * to read them */
	size_t monitor_dropped;
	/* the event history: entries held, kept at most (--history), bytes,
	 * events it could not keep for lack of memory */
	size_t history_len, history_capacity, history_bytes, history_lost;
	/* the journal (journal.h): its bytes, events not finished, damaged
	 * records skipped, writes of records, full now */
	size_t journal_bytes, journal_live, journal_corrupt, journal_writes;
	bool journal_full;
	/* why the journal cannot write (NULL while it can), and whether */
	const char *journal_failing;
	bool journal_failing_flag;
	/* the broker (keventd.yaml(5)): none, connected or not; its counters */
	bool mqtt_off, mqtt_enabled, mqtt_connected, mqtt_disconnected;
	size_t mqtt_published, mqtt_acked, mqtt_spooled, mqtt_dropped, mqtt_received, mqtt_attempts;
	size_t mqtt_corrupt;	/* spooled messages lost with damaged records */
	size_t mqtt_duplicates; /* received messages dropped: delivered again */
	/* publishing: on or not; why not (NULL while on, or with no broker);
	 * "on" or "off (why)" */
	bool mqtt_publishing;
	const char *mqtt_off_why, *mqtt_publishing_text;
	/* what the two point to while publishing is off: the struct may be
	 * kept while a reply is sent, and the broker's own text changes */
	char mqtt_off_buf[160], mqtt_publishing_buf[176];
	/* the condition table (cond.h): rows that hold, by severity,
	 * acknowledged; sets refused for its bound; failed writes; off */
	/* the users socket (users-server.h, users-client.h): the system
	 * instance's side (user instances connected, events sent, withheld by
	 * the policy, dropped from a full queue, connections refused) or a user
	 * instance's (connected, events received, dropped for it at the
	 * system, messages not an event) */
	bool users_server, users_client;
	size_t users_connected, users_peers, users_sent, users_withheld, users_dropped,
		users_refused;
	size_t users_received, users_dropped_at_system, users_bad;
	size_t cond_holding, cond_critical, cond_warning, cond_info, cond_acked;
	size_t cond_refused, cond_write_errors;
	bool cond_off;
	/* the notification targets (keventd.yaml(5), notify:): none, or so
	 * many, each one's counters; the queue's damaged files and the
	 * targets rules named that keventd.yaml has not */
	bool notify_enabled;
	size_t notify_n, notify_damaged, notify_unknown;
	struct kstatus_notify notify[KSTATUS_NOTIFY_MAX];
	/* the Alertmanager output (keventd.yaml(5), alertmanager:): none, or
	 * its posts taken and failed, the alerts that hold, the resolved
	 * ones not posted yet, whether the last post succeeded; why it posts
	 * nothing and the last failure's words (NULL: none), in the buffers */
	bool am_enabled, am_up, am_down; /* am_down: enabled, and not up */
	size_t am_posts, am_failed, am_alerts, am_resolved;
	const char *am_off, *am_last_error;
	char am_off_buf[160], am_error_buf[160];
};

/* The parts of status, in the order of the JSON and Prometheus renderings
 * (the text one has its own). */
enum kstats_section {
	KSTATS_UPTIME,	/* JSON: at the top level */
	KSTATS_SOURCES, /* per source; text: a table, a column per row */
	KSTATS_EVENTS,
	KSTATS_RUNS,
	KSTATS_QUEUE,
	KSTATS_CONTROL,
	KSTATS_HISTORY,
	KSTATS_JOURNAL,
	KSTATS_MQTT,
	KSTATS_CONDITIONS,
	KSTATS_NOTIFY,	       /* the notifications, together */
	KSTATS_NOTIFY_TARGETS, /* per target; text: a line per target */
	KSTATS_ALERTMANAGER,
	KSTATS_USERS, /* the users socket: the system's side or a user's */
	KSTATS_RULESET,
	KSTATS_RULES, /* per rule; text: a line per rule */
	KSTATS_NSECTIONS,
};

/* Where a row's value is read, at its off. */
enum kstats_from {
	KSTATS_FROM_STATS,	 /* uint64_t in struct kstats */
	KSTATS_FROM_SOURCES,	 /* uint64_t[KEVENT_SOURCE_MAX] in struct kstats */
	KSTATS_FROM_SOURCES_SUM, /* the same, summed over the sources */
	KSTATS_FROM_EXTRA,	 /* size_t in struct kstatus_extra */
	KSTATS_FROM_EXTRA_FLAG,	 /* bool in struct kstatus_extra */
	/* size_t[KEVENT_SOURCE_MAX] and bool[KEVENT_SOURCE_MAX] in struct kstatus_extra */
	KSTATS_FROM_EXTRA_SOURCES,
	KSTATS_FROM_EXTRA_SOURCES_FLAG,
	KSTATS_FROM_RULESET, /* size_t in struct kruleset; 0 before the first load */
	KSTATS_FROM_UPTIME,  /* seconds since started_ns; no off */
	/* const char * in struct kstatus_extra: the text shows it while it is
	 * not NULL, in place of the '#'; JSON, a string or null */
	KSTATS_FROM_EXTRA_TEXT,
	KSTATS_FROM_RULE, /* uint64_t in struct krule_counters */
	/* size_t, bool and const char * in struct kstatus_notify, of
	 * kstatus_extra.notify[i] */
	KSTATS_FROM_NOTIFY,
	KSTATS_FROM_NOTIFY_FLAG,
	KSTATS_FROM_NOTIFY_TEXT,
};

/*
 * One counter of status as each rendering shows it; NULL where a rendering
 * does not.  text: the words of the text rendering, '#' standing for the
 * value (a flag's words are shown only while it is set; a per-source row's
 * are its column heading, a per-source flag's cells "yes" or "no"); json: the key in its section's
 * object; prom: the metric family after "keventd_", with help for its HELP line.
 */
struct kstats_row {
	enum kstats_section section;
	const char *text, *json, *prom;
	const char *type; /* the Prometheus TYPE: "counter" or "gauge" */
	enum kstats_from from;
	size_t off;
	const char *help;
};

/* Every row, grouped by section in the order of enum kstats_section. */
extern const struct kstats_row kstats_rows[];
extern const size_t kstats_n_rows;

enum kstatus_format { KSTATUS_TEXT, KSTATUS_JSON, KSTATUS_PROMETHEUS };

/* "text", "json" or "prometheus"; -1 for anything else. */
int kstatus_format_from_name(const char *name);

void kstats_render_text(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *out);
void kstats_render_json(const struct kstats *s, const struct kruleset *rs,
			const struct kstatus_extra *x, struct strbuf *out);
/* The Prometheus text exposition format (version 0.0.4): the rows with a
 * prom name, as keventd_* metric families, in table order. */
void kstats_render_prometheus(const struct kstats *s, const struct kruleset *rs,
			      const struct kstatus_extra *x, struct strbuf *out);

/* The same renderings a part at a time, for a reply sent as it is read:
 * first every counter but the rules' (x is read then only), then a rule's
 * line, object or sample at a time, the counters read as each is
 * rendered.  rs must stay the same throughout. */
struct kstats_cursor {
	enum kstatus_format format;
	bool head, tail, helped;
	size_t row, i; /* the row (Prometheus) and the rule next */
};
void kstats_cursor_init(struct kstats_cursor *cur, enum kstatus_format format);
/* Appends the next part to out; false, appending nothing, once all is. */
bool kstats_render_next(struct kstats_cursor *cur, const struct kstats *s,
			const struct kruleset *rs, const struct kstatus_extra *x,
			struct strbuf *out);

#endif

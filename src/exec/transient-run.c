// SPDX-License-Identifier: GPL-2.0-or-later
/* Transient runs (transient-run.h). */
#include "transient-run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "transient.h"

#if KEVENT_DBUS
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "busloop.h"

#define SD_DEST	    "org.freedesktop.systemd1"
#define SD_PATH	    "/org/freedesktop/systemd1"
#define SD_MANAGER  "org.freedesktop.systemd1.Manager"
#define SD_UNITS    "/org/freedesktop/systemd1/unit"
#define LOGIN_DEST  "org.freedesktop.login1"
#define LOGIN_SEAT0 "/org/freedesktop/login1/seat/seat0"
/* A start job that systemd has not finished by then is given up. */
#define START_TIMEOUT_NS (90ull * 1000000000ull)

/* CLD_EXITED, CLD_KILLED, CLD_DUMPED: systemd's ExecMainCode */
#include <signal.h>

struct unit {
	struct unit *next;
	struct ktrun *t;
	struct krunner_unit *start; /* the runner's, until the start job is over */
	const struct krule *rule;
	struct kfile *file; /* a reference: the rule lives until the unit ends */
	char *name, *path;  /* the unit's name and its object path */
	uint64_t serial, seq, started_ns;
	uint64_t run; /* the runner's number for it, in its name */
	sd_bus_slot *call, *props, *query;
	/* session: active: what the start needs once logind has answered */
	char **argv, **envp, *exe;
	struct ktimer *timer;
	bool created;  /* systemd took it (and AddRef) */
	bool running;  /* its start job is done */
	bool querying; /* a look at its state is under way */
	bool requery;  /* and it changed meanwhile */
};

struct ktrun {
	struct kloop *loop;
	const struct ktrun_ops *ops;
	void *userdata;
	sd_bus *bus;
	struct kbusloop *bl;
	struct unit *units;
	size_t running;
};

bool ktrun_available(void)
{
	return sd_booted() > 0;
}

static void process(struct ktrun *t);

static void unit_free(struct unit *u)
{
	struct ktrun *t = u->t;
	for (struct unit **p = &t->units; *p; p = &(*p)->next)
		if (*p == u) {
			*p = u->next;
			break;
		}
	if (u->running)
		t->running--;
	sd_bus_slot_unref(u->call);
	sd_bus_slot_unref(u->props);
	sd_bus_slot_unref(u->query);
	ktimer_cancel(u->timer);
	kfile_unref(u->file);
	free(u->name);
	free(u->path);
	strv_free(u->argv);
	strv_free(u->envp);
	free(u->exe);
	free(u);
}

/* Lets systemd collect the unit (AddRef held it for its result). */
static void unit_release(struct unit *u)
{
	if (u->t->bus && u->created)
		(void)sd_bus_call_method_async(u->t->bus, NULL, SD_DEST, u->path,
					       "org.freedesktop.systemd1.Unit", "Unref", NULL, NULL,
					       "");
	unit_free(u);
}

/* The start is over without a running unit: the runner counts a failed
 * start and moves on.  Frees u. */
static void start_failed(struct unit *u, int error)
{
	struct ktrun *t = u->t;
	struct krunner_unit *start = u->start;
	u->start = NULL;
	unit_release(u);
	t->ops->started(t->userdata, start, error);
}

static void disconnect(struct ktrun *t, const char *why)
{
	struct unit *units = t->units;
	t->units = NULL;
	for (struct unit *u = units; u; u = u->next) {
		sd_bus_slot_unref(TAKE_PTR(u->call));
		sd_bus_slot_unref(TAKE_PTR(u->props));
		sd_bus_slot_unref(TAKE_PTR(u->query));
	}
	kbusloop_free(TAKE_PTR(t->bl));
	t->bus = sd_bus_close_unref(t->bus);
	if (t->running)
		log_warning("transient units: %s: the ends of %zu running unit(s) are not logged",
			    why, t->running);
	t->running = 0;
	while (units) {
		struct unit *u = units;
		units = u->next;
		/* off t->units already, and no longer counted as running */
		u->running = false;
		struct krunner_unit *start = TAKE_PTR(u->start);
		unit_free(u);
		if (start)
			t->ops->started(t->userdata, start, -ECONNRESET);
	}
}

static void lost(void *userdata, int r)
{
	log_warning("transient units: connection to the system bus lost (%s)", strerror(-r));
	disconnect(userdata, "the system bus is gone");
}

static void process(struct ktrun *t)
{
	kbusloop_process(t->bl);
}

static struct unit *find_starting(struct ktrun *t, const char *name)
{
	for (struct unit *u = t->units; u; u = u->next)
		if (u->start && strcmp(u->name, name) == 0)
			return u;
	return NULL;
}

int ktrun_read_props(sd_bus_message *m, const struct ktrun_prop *props, size_t n)
{
	int r = sd_bus_message_enter_container(m, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *key;
		r = sd_bus_message_read(m, "s", &key);
		if (r < 0)
			break;
		size_t i = 0;
		while (i < n && strcmp(key, props[i].key) != 0)
			i++;
		if (i < n)
			r = sd_bus_message_read(m, "v", props[i].sig, props[i].a, props[i].b);
		else
			r = sd_bus_message_skip(m, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	return r;
}

/* The record of the unit's end, from its service's properties. */
static void unit_ended(struct unit *u, sd_bus_message *m)
{
	const char *result = "";
	int32_t code = 0, status = 0;
	uint64_t start_us = 0, exit_us = 0;
	const struct ktrun_prop props[] = {
		{"Result", "s", &result, NULL},
		{"ExecMainCode", "i", &code, NULL},
		{"ExecMainStatus", "i", &status, NULL},
		{"ExecMainStartTimestampMonotonic", "t", &start_us, NULL},
		{"ExecMainExitTimestampMonotonic", "t", &exit_us, NULL},
	};
	int r = ktrun_read_props(m, props, ARRAY_SIZE(props));
	if (r < 0) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s[%s]: cannot read the unit's result (%s) (seq %" PRIu64 ")",
			 u->rule->name, u->name, strerror(-r), u->seq);
		unit_release(u);
		return;
	}
	if (u->rule->session && !start_us && !code && strcmp(result, "success") == 0) {
		/* its ExecCondition found the session no longer active: the
		 * handler never ran (ktransient_session_check) */
		krun_log(LOG_NOTICE, u->rule->name, u->seq,
			 "rule %s[%s]: the session was no longer active when the unit started: "
			 "run skipped (seq %" PRIu64 ")",
			 u->rule->name, u->name, u->seq);
		struct krun_report skipped = {.rule = u->rule,
					      .unit = u->name,
					      .unit_run = u->run,
					      .outcome = KRUN_SKIPPED};
		u->t->ops->ended(u->t->userdata, u->serial, &skipped);
		unit_release(u);
		return;
	}
	struct krun_report rep = {
		.rule = u->rule,
		.unit = u->name,
		.unit_run = u->run,
		.outcome = code == CLD_KILLED || code == CLD_DUMPED ? KRUN_KILLED : KRUN_EXITED,
		.status = status,
		.timed_out = strcmp(result, "timeout") == 0,
		.oom_kills = strcmp(result, "oom-kill") == 0,
		.duration_ms = exit_us > start_us && start_us
				       ? (exit_us - start_us) / 1000
				       : (now_monotonic_ns() - u->started_ns) / 1000000ull,
	};
	krunner_log_result(u->rule, u->seq, 0, u->name, &rep);
	if (strcmp(result, "success") != 0)
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s[%s]: the unit's result is %s (seq %" PRIu64 ")", u->rule->name,
			 u->name, result[0] ? result : "unknown", u->seq);
	u->t->ops->ended(u->t->userdata, u->serial, &rep);
	unit_release(u);
}

static void query(struct unit *u);

static int on_service(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct unit *u = userdata;
	(void)ret_error;
	u->query = sd_bus_slot_unref(u->query);
	u->querying = false;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	if (e) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s[%s]: cannot read the unit's result: %s: %s (seq %" PRIu64 ")",
			 u->rule->name, u->name, e->name, e->message ? e->message : "", u->seq);
		unit_release(u);
		return 0;
	}
	unit_ended(u, m);
	return 0;
}

static int on_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct unit *u = userdata;
	const char *state = NULL;
	(void)ret_error;
	u->query = sd_bus_slot_unref(u->query);
	u->querying = false;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	int r = e ? -EIO : sd_bus_message_read(m, "v", "s", &state);
	if (r < 0) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s[%s]: cannot read the unit's state: %s (seq %" PRIu64 ")",
			 u->rule->name, u->name, e ? e->name : strerror(-r), u->seq);
		unit_release(u);
		return 0;
	}
	if (strcmp(state, "inactive") == 0 || strcmp(state, "failed") == 0) {
		r = sd_bus_call_method_async(
			u->t->bus, &u->query, SD_DEST, u->path, "org.freedesktop.DBus.Properties",
			"GetAll", on_service, u, "s", "org.freedesktop.systemd1.Service");
		if (r < 0) {
			krun_log(LOG_WARNING, u->rule->name, u->seq,
				 "rule %s[%s]: cannot ask for the unit's result (%s)",
				 u->rule->name, u->name, strerror(-r));
			unit_release(u);
			return 0;
		}
		u->querying = true;
		return 0;
	}
	if (u->requery)
		query(u);
	return 0;
}

/* Looks at the unit's ActiveState: once it is inactive or failed, its
 * service's result is read and logged. */
static void query(struct unit *u)
{
	if (u->querying) {
		u->requery = true;
		return;
	}
	u->requery = false;
	int r = sd_bus_call_method_async(u->t->bus, &u->query, SD_DEST, u->path,
					 "org.freedesktop.DBus.Properties", "Get", on_state, u,
					 "ss", "org.freedesktop.systemd1.Unit", "ActiveState");
	if (r < 0) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s[%s]: cannot ask for the unit's state (%s)", u->rule->name,
			 u->name, strerror(-r));
		unit_release(u);
		return;
	}
	u->querying = true;
}

static int on_props_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct unit *u = userdata;
	(void)m;
	(void)ret_error;
	if (u->running)
		query(u);
	return 0;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct ktrun *t = userdata;
	const char *job, *name, *result;
	uint32_t id;
	(void)ret_error;
	if (sd_bus_message_read(m, "uoss", &id, &job, &name, &result) < 0)
		return 0;
	struct unit *u = find_starting(t, name);
	if (!u)
		return 0;
	u->created = true; /* (its reply may still be on its way) */
	if (strcmp(result, "done") != 0) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s[%s]: systemd could not start the unit: its start job "
			 "ended \"%s\" (seq %" PRIu64 "); journalctl -u %s says why",
			 u->rule->name, u->name, result, u->seq, u->name);
		start_failed(u, -EIO);
		return 0;
	}
	struct krunner_unit *start = TAKE_PTR(u->start);
	ktimer_cancel(TAKE_PTR(u->timer));
	u->running = true;
	t->running++;
	u->started_ns = now_monotonic_ns();
	query(u); /* it may have ended already */
	t->ops->started(t->userdata, start, 0);
	return 0;
}

static int on_start_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct unit *u = userdata;
	(void)ret_error;
	u->call = sd_bus_slot_unref(u->call);
	const sd_bus_error *e = sd_bus_message_get_error(m);
	if (!e) {
		u->created = true;
		return 0; /* JobRemoved says when the unit has started */
	}
	if (u->start) {
		int err = sd_bus_message_get_errno(m);
		struct strbuf where = STRBUF_INIT;
		strbuf_printf(&where, "%s:%u", u->rule->file->path, u->rule->line);
		struct klog_field f[] = {
			KLOG_STR("rule", u->rule->name), KLOG_STR("file", strbuf_str(&where)),
			KLOG_UINT("seq", u->seq),	 KLOG_STR("unit", u->name),
			KLOG_STR("dbus_error", e->name),
		};
		klog_fields(LOG_WARNING, f, ARRAY_SIZE(f),
			    "rule %s[%s]: systemd refused the unit: %s: %s (seq %" PRIu64 ")",
			    u->rule->name, u->name, e->name, e->message ? e->message : "", u->seq);
		strbuf_release(&where);
		start_failed(u, err > 0 ? -err : -EIO);
	}
	return 0;
}

static void on_start_timeout(struct ktimer *timer, void *userdata)
{
	struct unit *u = userdata;
	(void)timer;
	u->timer = NULL;
	krun_log(LOG_WARNING, u->rule->name, u->seq,
		 "rule %s[%s]: systemd did not start the unit within %llus; giving it up "
		 "(seq %" PRIu64 ")",
		 u->rule->name, u->name, START_TIMEOUT_NS / 1000000000ull, u->seq);
	start_failed(u, -ETIMEDOUT);
}

static int on_subscribed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	(void)userdata;
	(void)ret_error;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	if (e)
		log_warning("transient units: cannot subscribe to systemd's signals: %s: %s",
			    e->name, e->message ? e->message : "");
	return 0;
}

static int bus_connect(struct ktrun *t)
{
	if (t->bus)
		return 0;
	int r = sd_bus_open_system(&t->bus);
	/* the match first: it is in force before systemd sees a call */
	if (r >= 0)
		r = sd_bus_match_signal_async(t->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER,
					      "JobRemoved", on_job_removed, NULL, t);
	if (r >= 0)
		r = sd_bus_call_method_async(t->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER,
					     "Subscribe", on_subscribed, t, "");
	if (r >= 0)
		r = kbusloop_new(t->loop, t->bus, lost, t, &t->bl);
	if (r < 0) {
		log_warning("transient units: cannot connect to the system bus: %s", strerror(-r));
		disconnect(t, "no system bus");
	}
	return r;
}

/* A string vector as D-Bus carries it: valid UTF-8 only, so a byte of an
 * event that is not is sent as "\xHH" (utf8_sanitize()), where it would
 * otherwise make the whole start fail. */
static int append_strv(sd_bus_message *m, char *const *v)
{
	_cleanup_strv_ char **clean = strv_utf8_sanitize(v);
	return clean ? sd_bus_message_append_strv(m, clean) : -ENOMEM;
}

/* One property of the call: (sv). */
static int append_prop(sd_bus_message *m, const struct ktransient_prop *p)
{
	int r;
	switch (p->type) {
	case 's':
		return sd_bus_message_append(m, "(sv)", p->name, "s", p->s);
	case 'b':
		return sd_bus_message_append(m, "(sv)", p->name, "b", p->b);
	case 't':
		return sd_bus_message_append(m, "(sv)", p->name, "t", p->u);
	case 'i':
		return sd_bus_message_append(m, "(sv)", p->name, "i", (int32_t)p->i);
	case 'E':
		if ((r = sd_bus_message_open_container(m, 'r', "sv")) < 0 ||
		    (r = sd_bus_message_append(m, "s", p->name)) < 0 ||
		    (r = sd_bus_message_open_container(m, 'v', "as")) < 0 ||
		    (r = append_strv(m, p->strv)) < 0 ||
		    (r = sd_bus_message_close_container(m)) < 0)
			return r;
		return sd_bus_message_close_container(m);
	case 'X':
		if ((r = sd_bus_message_open_container(m, 'r', "sv")) < 0 ||
		    (r = sd_bus_message_append(m, "s", p->name)) < 0 ||
		    (r = sd_bus_message_open_container(m, 'v', "a(sasas)")) < 0 ||
		    (r = sd_bus_message_open_container(m, 'a', "(sasas)")) < 0 ||
		    (r = sd_bus_message_open_container(m, 'r', "sasas")) < 0 ||
		    (r = sd_bus_message_append(m, "s", p->s)) < 0 ||
		    (r = append_strv(m, p->strv)) < 0 ||
		    (r = sd_bus_message_append_strv(m, (char **)p->flags)) < 0)
			return r;
		for (int i = 0; i < 3; i++)
			if ((r = sd_bus_message_close_container(m)) < 0)
				return r;
		return sd_bus_message_close_container(m);
	}
	return -EINVAL;
}

/* StartTransientUnit(name, "fail", properties, no auxiliary units): the
 * rule's properties, then what keventd needs to learn the unit's end:
 * Type=exec (the start job is done once the program has been executed),
 * AddRef (systemd keeps the unit, and its result, until keventd lets go)
 * and CollectMode=inactive-or-failed (then it goes, failed or not). */
int ktrun_start_message(sd_bus *bus, const struct ktransient *tu, sd_bus_message **out)
{
	sd_bus_message *m = NULL;
	int r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER,
					       "StartTransientUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", tu->unit, "fail");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	for (size_t i = 0; r >= 0 && i < tu->n_props; i++)
		r = append_prop(m, &tu->props[i]);
	if (r >= 0)
		r = sd_bus_message_append(m, "(sv)(sv)(sv)", "Type", "s", "exec", "AddRef", "b", 1,
					  "CollectMode", "s", "inactive-or-failed");
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r < 0) {
		sd_bus_message_unref(m);
		return r;
	}
	*out = m;
	return 0;
}

/* Sends u's StartTransientUnit with argv and envp, the program at exe,
 * as user (NULL: root): 0, or -errno. */
static int send_start(struct unit *u, char *const *argv, char *const *envp, const char *exe,
		      const char *user)
{
	struct ktrun *t = u->t;
	const struct krule *rule = u->rule;
	struct kplan plan = {.argv = (char **)argv, .envp = (char **)envp, .cgroup_fd = -1};
	struct ktransient tu = {0};
	sd_bus_message *m = NULL;
	const struct krule_extra *x = krule_extra(rule);
	int r = ktransient_build(rule->name, u->name, user, x->timeout_ms, x->unit_props,
				 x->n_unit_props, &plan, exe, u->seq, rule->session, &tu);
	if (r >= 0)
		r = ktrun_start_message(t->bus, &tu, &m);
	/* its changes are watched before it can have any */
	if (r >= 0)
		r = sd_bus_match_signal_async(t->bus, &u->props, SD_DEST, u->path,
					      "org.freedesktop.DBus.Properties",
					      "PropertiesChanged", on_props_changed, NULL, u);
	if (r >= 0)
		r = sd_bus_call_async(t->bus, &u->call, m, on_start_reply, u, 0);
	if (r >= 0)
		r = kloop_add_timer(t->loop, now_monotonic_ns() + START_TIMEOUT_NS,
				    on_start_timeout, u, &u->timer);
	sd_bus_message_unref(m);
	ktransient_release(&tu);
	return r;
}

/* Session rules' runs with no session to run in: each logged (at a
 * bounded rate: events decide how often) and counted. */
static struct klog_throttle skip_log = {
	.name = "transient units", .what = "skipped session runs", .counted = true};

/* session: active with no active session: the run is skipped.  Frees u. */
static void skip(struct unit *u, const char *why)
{
	klog_throttled_fields(
		&skip_log, LOG_NOTICE,
		(const struct klog_field[]){KLOG_STR("rule", u->rule->name),
					    KLOG_UINT("seq", u->seq)},
		2, "rule %s: no active session on seat0 (%s): run skipped (seq %" PRIu64 ")",
		u->rule->name, why, u->seq);
	struct ktrun *t = u->t;
	struct krunner_unit *start = TAKE_PTR(u->start);
	unit_free(u);
	t->ops->skipped(t->userdata, start);
}

/* The session's properties: its user, state, display and type. */
static int on_session(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct unit *u = userdata;
	(void)ret_error;
	u->call = sd_bus_slot_unref(u->call);
	const sd_bus_error *e = sd_bus_message_get_error(m);
	if (e) {
		skip(u, e->name); /* it ended between the two questions */
		return 0;
	}
	struct ksession ses = {.id = "", .user = "", .display = "", .type = ""};
	const char *state = "", *upath;
	const struct ktrun_prop props[] = {
		{"Id", "s", &ses.id, NULL},	      {"Name", "s", &ses.user, NULL},
		{"User", "(uo)", &ses.uid, &upath},   {"State", "s", &state, NULL},
		{"Display", "s", &ses.display, NULL}, {"Type", "s", &ses.type, NULL},
	};
	int r = ktrun_read_props(m, props, ARRAY_SIZE(props));
	if (r < 0) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s: cannot read the active session's properties (%s) (seq %" PRIu64
			 ")",
			 u->rule->name, strerror(-r), u->seq);
		start_failed(u, r);
		return 0;
	}
	if (strcmp(state, "active") != 0 || !ses.user[0]) {
		skip(u, state[0] ? state : "no user");
		return 0;
	}
	_cleanup_strv_ char **env = NULL;
	r = ktransient_session_env(u->envp, &ses, &env);
	if (r >= 0)
		r = send_start(u, u->argv, env, u->exe, ses.user);
	if (r < 0) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s: cannot start a unit in session %s: %s (seq %" PRIu64 ")",
			 u->rule->name, ses.id, strerror(-r), u->seq);
		start_failed(u, r);
		return 0;
	}
	krun_log(LOG_DEBUG, u->rule->name, u->seq,
		 "rule %s[%s]: in session %s of %s (seq %" PRIu64 ")", u->rule->name, u->name,
		 ses.id, ses.user, u->seq);
	return 0;
}

/* seat0's active session, if any. */
static int on_seat(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct unit *u = userdata;
	const char *id = "", *path = NULL;
	(void)ret_error;
	u->call = sd_bus_slot_unref(u->call);
	const sd_bus_error *e = sd_bus_message_get_error(m);
	if (e) {
		skip(u, e->name); /* no seat0, no logind */
		return 0;
	}
	int r = sd_bus_message_read(m, "v", "(so)", &id, &path);
	if (r < 0 || !id[0]) {
		skip(u, r < 0 ? strerror(-r) : "none");
		return 0;
	}
	r = sd_bus_call_method_async(u->t->bus, &u->call, LOGIN_DEST, path,
				     "org.freedesktop.DBus.Properties", "GetAll", on_session, u,
				     "s", "org.freedesktop.login1.Session");
	if (r < 0) {
		krun_log(LOG_WARNING, u->rule->name, u->seq,
			 "rule %s: cannot ask logind about session %s: %s (seq %" PRIu64 ")",
			 u->rule->name, id, strerror(-r), u->seq);
		start_failed(u, r);
	}
	return 0;
}

static char **strv_dup(char *const *v)
{
	size_t n = strv_length(v);
	char **d = calloc(n + 1, sizeof(*d));
	for (size_t i = 0; d && i < n; i++)
		if (!(d[i] = strdup(v[i]))) {
			strv_free(d);
			return NULL;
		}
	return d;
}

int ktrun_start(struct ktrun *t, struct krunner_unit *ru, const struct kplan *plan,
		const char *path)
{
	const struct krule *rule = ru->rule;
	int r = bus_connect(t);
	if (r < 0)
		return r;
	struct unit *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	*u = (struct unit){.t = t,
			   .start = ru,
			   .rule = rule,
			   .file = kfile_ref((struct kfile *)rule->file),
			   .serial = ru->job->serial,
			   .seq = ru->job->ev->seqnum,
			   .run = ru->run,
			   .started_ns = ru->started_ns};
	u->next = t->units;
	t->units = u;
	u->name = strdup(ru->unit);
	r = u->name ? sd_bus_path_encode(SD_UNITS, u->name, &u->path) : -ENOMEM;
	if (r >= 0 && !rule->session) {
		r = send_start(u, plan->argv, plan->envp, path, krule_extra(rule)->user);
	} else if (r >= 0) {
		/* first the session, from logind; the plan is kept till then */
		u->argv = strv_dup(plan->argv);
		u->envp = strv_dup(plan->envp);
		u->exe = strdup(path);
		r = u->argv && u->envp && u->exe ? 0 : -ENOMEM;
		if (r >= 0)
			r = sd_bus_call_method_async(
				t->bus, &u->call, LOGIN_DEST, LOGIN_SEAT0,
				"org.freedesktop.DBus.Properties", "Get", on_seat, u, "ss",
				"org.freedesktop.login1.Seat", "ActiveSession");
	}
	if (r < 0) {
		u->start = NULL;
		unit_free(u);
		return r;
	}
	process(t);
	return 0;
}

int ktrun_new(struct kloop *loop, const struct ktrun_ops *ops, void *userdata, struct ktrun **out)
{
	struct ktrun *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct ktrun){.loop = loop, .ops = ops, .userdata = userdata};
	*out = t;
	return 0;
}

size_t ktrun_running(const struct ktrun *t)
{
	return t ? t->running : 0;
}

void ktrun_free(struct ktrun *t)
{
	if (!t)
		return;
	if (t->bus)
		sd_bus_process(t->bus, NULL);
	disconnect(t, "keventd is stopping");
	free(t);
}

#else /* !KEVENT_DBUS */

bool ktrun_available(void)
{
	return false;
}

int ktrun_new(struct kloop *loop, const struct ktrun_ops *ops, void *userdata, struct ktrun **out)
{
	(void)loop;
	(void)ops;
	(void)userdata;
	*out = NULL;
	return 0;
}

int ktrun_start(struct ktrun *t, struct krunner_unit *u, const struct kplan *plan, const char *path)
{
	(void)t;
	(void)u;
	(void)plan;
	(void)path;
	return -EOPNOTSUPP;
}

size_t ktrun_running(const struct ktrun *t)
{
	(void)t;
	return 0;
}

void ktrun_free(struct ktrun *t)
{
	(void)t;
}

#endif

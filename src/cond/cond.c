// SPDX-License-Identifier: GPL-2.0-or-later
/* Conditions, live: the table on the loop and in --lib-dir (cond.h). */
#include "cond.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "log.h"
#include "statedir.h"
#include "util.h"

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define DAMAGED_NAME KCOND_FILE_NAME ".damaged"

struct kcond {
	struct kloop *loop;
	const struct kcond_ops *ops;
	void *userdata;
	struct kcond_table table;
	struct kcond_marks marks;
	char boot[40];
	const struct kruleset *rules;
	const struct kstatedir *dir; /* --lib-dir, the daemon's; NULL: off */
	struct ktimer *timer;
	uint64_t timer_at; /* realtime ns of the timer's deadline; 0: none */
	struct ktimer *settle_timer;
	unsigned settle_fresh;
	bool settling;
	/* the condition events made and not yet taken */
	struct kevent **outbox;
	size_t n_out, cap_out, head_out;
	bool ready_told;
	uint64_t writes, write_errors, damaged;
	int last_write_rc;
	struct klog_throttle refused_log;
};

void kcond_put_time(struct strbuf *sb, uint64_t ns)
{
	/* YYYY-MM-DDTHH:MM:SSZ by hand, and the date by arithmetic (the
	 * proleptic Gregorian calendar from day 0, 1970-01-01): a large table
	 * has many, and strftime() and gmtime_r(), which takes the time
	 * zone's lock, were a good part of keventctl conditions --json's time */
	uint64_t t = ns / KCOND_NS_PER_S, days = t / 86400, secs = t % 86400;
	/* days since 0000-03-01, in 400-year eras of 146097 days */
	uint64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
	uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	uint64_t day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
	/* 64-bit nanoseconds end in 2554: four digits always do */
	uint64_t year = yoe + era * 400 + (month <= 2);
	char buf[20];
	const unsigned f[] = {(unsigned)year,
			      (unsigned)month,
			      (unsigned)day,
			      (unsigned)(secs / 3600),
			      (unsigned)(secs / 60 % 60),
			      (unsigned)(secs % 60)};
	memcpy(buf, "0000-00-00T00:00:00Z", sizeof(buf));
	buf[0] = (char)('0' + f[0] / 1000);
	buf[1] = (char)('0' + f[0] / 100 % 10);
	for (int i = 0; i < 6; i++) {
		char *d = buf + (i ? 2 + 3 * i : 2);
		d[0] = (char)('0' + f[i] / 10 % 10);
		d[1] = (char)('0' + f[i] % 10);
	}
	strbuf_add(sb, buf, sizeof(buf));
}

/* The event of a change: the row's type and object, the signal, and the
 * row said in its payload. */
static struct kevent *make_event(struct kcond *c, enum kcond_signal sig, const struct kcond_row *r,
				 const char *reason, uint64_t now)
{
	_cleanup_strbuf_ struct strbuf p = STRBUF_INIT;
	struct kevent *ev = NULL;
	const char *why = NULL;
	strbuf_printf(&p, "Condition: %s\nSeverity: %s\nSince: ", r->name,
		      kcond_severity_name(r->severity));
	kcond_put_time(&p, r->since);
	strbuf_printf(&p, "\nCount: %" PRIu64 "\nReason: %s\nSource: %s\n", r->count,
		      reason ? reason : "", kevent_source_name(r->source));
	/* what set the row, on every event of it: a clear by umount, a
	 * reminder, an expiry say which kind of row they end */
	if (r->last_signal && *r->last_signal)
		strbuf_printf(&p, "Set-By: %s\n", r->last_signal);
	if (strcmp(r->key, r->object) != 0) {
		strbuf_puts(&p, "Key: ");
		strbuf_puts(&p, r->key);
		strbuf_putc(&p, '\n');
	}
	if (r->acked_at) {
		strbuf_printf(&p, "Acked-By: %s\n", r->acked_by ? r->acked_by : "");
		if (r->note)
			strbuf_printf(&p, "Note: %s\n", r->note);
	}
	if (p.oom)
		return NULL;
	int rc = kevent_new(r->type, r->object, kcond_signal_name(sig), strbuf_str(&p),
			    KEVENT_SOURCE_CONDITION, c->marks.seq + 1, now, NULL, 0, &ev, &why);
	if (rc < 0) {
		log_error("condition %s: its %s event cannot be made: %s", r->name,
			  kcond_signal_name(sig), why ? why : strerror(-rc));
		return NULL;
	}
	c->marks.seq++;
	return ev;
}

static void on_change(void *userdata, enum kcond_signal sig, const struct kcond_row *r,
		      const char *reason)
{
	struct kcond *c = userdata;
	log_info("condition %s %s: %s (%s)", r->name, r->key, kcond_signal_name(sig),
		 reason ? reason : "");
	struct kevent *ev = make_event(c, sig, r, reason, now_realtime_ns());
	if (!ev)
		return;
	if (c->n_out == c->cap_out) {
		/* the taken ones' room first */
		if (c->head_out) {
			memmove(c->outbox, c->outbox + c->head_out,
				(c->n_out - c->head_out) * sizeof(*c->outbox));
			c->n_out -= c->head_out;
			c->head_out = 0;
		}
		if (c->n_out == c->cap_out) {
			size_t cap = c->cap_out ? c->cap_out * 2 : 16;
			struct kevent **v = realloc(c->outbox, cap * sizeof(*v));
			if (!v) {
				log_error("condition %s: out of memory for its %s event", r->name,
					  kcond_signal_name(sig));
				kevent_free(ev);
				return;
			}
			c->outbox = v;
			c->cap_out = cap;
		}
	}
	c->outbox[c->n_out++] = ev;
}

struct kevent *kcond_take(struct kcond *c)
{
	if (!c || c->head_out == c->n_out) {
		if (c)
			c->head_out = c->n_out = 0;
		return NULL;
	}
	return c->outbox[c->head_out++];
}

/* Tells the daemon of events waiting. */
static void tell_ready(struct kcond *c)
{
	if (c->head_out != c->n_out && c->ops && c->ops->ready)
		c->ops->ready(c->userdata);
}

int kcond_new(struct kloop *loop, const struct kcond_ops *ops, void *userdata, struct kcond **out)
{
	struct kcond *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->ops = ops;
	c->userdata = userdata;
	c->refused_log = (struct klog_throttle){
		.name = "conditions", .what = "refused sets", .counted = true};
	int rc = kcond_table_init(&c->table, 0, on_change, c);
	if (rc < 0) {
		kcond_free(c);
		return rc;
	}
	char *b = NULL;
	size_t n = 0;
	if (read_file(BOOT_ID_PATH, 64, &b, &n) == 0) {
		while (n && (b[n - 1] == '\n' || b[n - 1] == ' '))
			n--;
		if (n < sizeof(c->boot) && !memchr(b, ' ', n))
			memcpy(c->boot, b, n);
	}
	free(b);
	*out = c;
	return 0;
}

void kcond_free(struct kcond *c)
{
	if (!c)
		return;
	ktimer_cancel(c->timer);
	ktimer_cancel(c->settle_timer);
	for (size_t i = c->head_out; i < c->n_out; i++)
		kevent_free(c->outbox[i]);
	free(c->outbox);
	kcond_table_release(&c->table);
	free(c);
}

bool kcond_on(const struct kcond *c)
{
	return c && c->dir;
}

const struct kcond_table *kcond_table(const struct kcond *c)
{
	return &c->table;
}

const struct kcond_def *kcond_lookup(const struct kcond *c, const char *name)
{
	return kruleset_cond(c->rules, name);
}

static const struct kcond_def *lookup(void *userdata, const char *name)
{
	return kcond_lookup(userdata, name);
}

static void arm(struct kcond *c);
static void on_timer(struct ktimer *t, void *userdata);

/* The timer at the table's wake (table.h), if that is sooner. */
static void wake(struct kcond *c)
{
	uint64_t at = c->table.wake;
	c->table.wake = 0;
	if (!at || !c->dir || (c->timer && c->timer_at <= at))
		return;
	uint64_t now = now_realtime_ns();
	uint64_t in = at > now ? at - now : 0;
	if (in < 1000000)
		in = 1000000;
	ktimer_cancel(TAKE_PTR(c->timer));
	c->timer_at = 0;
	if (kloop_add_timer(c->loop, now_monotonic_ns() + in, on_timer, c, &c->timer) == 0)
		c->timer_at = at;
	else
		log_error("conditions: cannot set a timer: reminders and expiries wait for the "
			  "next change");
}

static void on_timer(struct ktimer *t, void *userdata)
{
	struct kcond *c = userdata;
	(void)t;
	c->timer = NULL;
	c->timer_at = 0;
	arm(c);
	tell_ready(c);
}

/* The table's changes due now, and the timer for the next. */
static void arm(struct kcond *c)
{
	if (!c->dir)
		return;
	uint64_t now = now_realtime_ns();
	uint64_t next = kcond_table_tick(&c->table, lookup, c, now);
	c->table.wake = 0; /* the tick saw every row */
	if (next == c->timer_at && c->timer)
		return;
	ktimer_cancel(TAKE_PTR(c->timer));
	c->timer_at = 0;
	if (!next)
		return;
	uint64_t in = next > now ? next - now : 0;
	/* at least a millisecond on: a clock that stepped back is caught up
	 * with, never spun on */
	if (in < 1000000)
		in = 1000000;
	if (kloop_add_timer(c->loop, now_monotonic_ns() + in, on_timer, c, &c->timer) == 0)
		c->timer_at = next;
	else
		log_error("conditions: cannot set a timer: reminders and expiries wait for the "
			  "next change");
}

int kcond_open(struct kcond *c, const struct kstatedir *dir)
{
	const char *why = NULL;
	const char *lib_dir = dir->path;
	c->dir = dir;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc = kstatedir_read(c->dir->fd, KCOND_FILE_NAME, KCOND_FILE_MAX, &buf, &len);
	if (rc == -ENOENT)
		return 0; /* a first start */
	unsigned line = 0;
	if (rc == 0)
		rc = kcond_file_decode(buf, len, &c->table, &c->marks, &line, &why);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		/* the file's damage costs the file, never keventd */
		c->damaged++;
		if (why && line)
			log_error("%s/%s:%u: %s: the condition table is damaged; kept aside as "
				  "%s, starting with none",
				  lib_dir, KCOND_FILE_NAME, line, why, DAMAGED_NAME);
		else
			log_error("%s/%s: %s: the condition table cannot be read; kept aside as "
				  "%s, starting with none",
				  lib_dir, KCOND_FILE_NAME, why ? why : kstatedir_strerror(rc),
				  DAMAGED_NAME);
		if (renameat(c->dir->fd, KCOND_FILE_NAME, c->dir->fd, DAMAGED_NAME) < 0)
			log_error("%s/%s: cannot keep it aside: %s", lib_dir, KCOND_FILE_NAME,
				  strerror(errno));
		c->table.dirty = true;
		return 0;
	}
	if (c->table.n)
		log_info("conditions: %zu rows read, %zu hold", c->table.n, c->table.holding);
	return 0;
}

void kcond_set_rules(struct kcond *c, const struct kruleset *rs)
{
	c->rules = rs;
	arm(c);
}

/* Whether the table has weighed ev already: handed again after a kill. */
static bool weighed(struct kcond *c, const struct kevent *ev)
{
	if (ev->source == KEVENT_SOURCE_KERNEL)
		return ev->instance && ev->instance == c->marks.kernel_instance &&
		       ev->seqnum <= c->marks.kernel_seq;
	if (!ev->redelivered)
		return false;
	/* a socket event is in the journal before its change is made
	 * (the control socket's "ok" is its record): weighed only up to the
	 * mark; any other source's is journaled with its changes' events */
	if (ev->source == KEVENT_SOURCE_SOCKET)
		return !c->boot[0] || strcmp(c->boot, c->marks.boot) != 0 ||
		       ev->seqnum <= c->marks.socket_seq;
	return true;
}

struct weigh {
	struct kcond *c;
	const struct kevent *ev;
	uint64_t now;
};

static bool weigh_one(const struct krule *r, void *userdata)
{
	struct weigh *w = userdata;
	const struct kcond_def *def = kcond_def_of(r);
	if (!def)
		return true;
	int rc = kcond_table_event(&w->c->table, def, w->ev, r == &def->set, w->now);
	if (rc == -ENOSPC)
		klog_throttled(&w->c->refused_log, LOG_WARNING,
			       "condition %s: not set for %s: the table holds %zu rows already, "
			       "its bound",
			       def->name, w->ev->object, w->c->table.max);
	else if (rc == -ENOMEM)
		log_error("condition %s: out of memory", def->name);
	return true;
}

void kcond_read_back(struct kcond *c, const struct kevent *ev)
{
	/* injected: another instance's (the system's, forwarded to a user's) */
	if (!c || !c->dir || ev->source != KEVENT_SOURCE_CONDITION || ev->injected)
		return;
	if (kcond_table_replay(&c->table, ev) < 0)
		log_error("conditions: out of memory reading back a condition event");
	/* the next change is numbered past it, never again with its number */
	if (ev->seqnum > c->marks.seq)
		c->marks.seq = ev->seqnum;
}

void kcond_weigh(struct kcond *c, const struct kevent *ev)
{
	if (!c || !c->dir)
		return;
	if (ev->source == KEVENT_SOURCE_CONDITION) {
		if (ev->redelivered)
			kcond_read_back(c, ev);
		return;
	}
	/* keventctl test --run: a try of the handlers, not news of the
	 * system; and an event weighed already */
	if (ev->test || weighed(c, ev))
		return;
	if (ev->source == KEVENT_SOURCE_SOCKET && c->boot[0]) {
		memcpy(c->marks.boot, c->boot, sizeof(c->boot));
		c->marks.socket_seq = ev->seqnum;
	} else if (ev->source == KEVENT_SOURCE_KERNEL && ev->instance) {
		c->marks.kernel_instance = ev->instance;
		c->marks.kernel_seq = ev->seqnum;
	}
	if (!c->rules || !c->rules->conds)
		return;
	struct weigh w = {.c = c, .ev = ev, .now = now_realtime_ns()};
	kruleset_match(c->rules->conds, ev, weigh_one, &w);
	/* a row set or cleared: the timer brought forward to its reminder,
	 * expiry or removal, without a tick of the whole table (a count
	 * only puts them later, and an early timer finds nothing to do) */
	wake(c);
}

int kcond_ack(struct kcond *c, const char *name, const char *key, const char *who, const char *note)
{
	if (note && (strlen(note) > KCOND_NOTE_MAX || str_has_control(note)))
		return -EINVAL;
	const struct kcond_def *def = kcond_lookup(c, name);
	bool held = false;
	for (size_t i = 0; i < c->table.n && !held; i++)
		held = strcmp(c->table.v[i]->name, name) == 0;
	if (!def && !held)
		return -ENOENT;
	int n = kcond_table_ack(&c->table, def, name, key, who, note && *note ? note : NULL,
				now_realtime_ns());
	arm(c);
	return n;
}

static void on_settled(struct ktimer *t, void *userdata)
{
	struct kcond *c = userdata;
	(void)t;
	c->settle_timer = NULL;
	c->settling = false;
	size_t n = kcond_table_settle_end(&c->table, c->settle_fresh, now_realtime_ns());
	/* said every time: the end of the start-up check is when a row
	 * that was not cleared is known to hold (keventd(8), CONDITIONS) */
	log_notice("conditions: start-up check done, %zu rows cleared: not so at start", n);
	arm(c);
	tell_ready(c);
}

void kcond_settle(struct kcond *c, unsigned fresh, uint64_t settle_ms)
{
	if (!c || !c->dir || c->settling)
		return;
	kcond_table_settle_begin(&c->table, fresh);
	c->settle_fresh = fresh;
	c->settling = true;
	if (kloop_add_timer(c->loop, now_monotonic_ns() + settle_ms * 1000000ull, on_settled, c,
			    &c->settle_timer) < 0)
		on_settled(NULL, c);
}

void kcond_save(struct kcond *c)
{
	if (!c || !c->dir || !c->table.dirty)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int rc = kcond_file_encode(&c->table, &c->marks, &sb);
	if (rc == 0)
		rc = kstatedir_replace_synced(c->dir->fd, KCOND_FILE_NAME, sb.buf, sb.len, 0600);
	c->writes++;
	if (rc < 0) {
		c->write_errors++;
		if (rc != c->last_write_rc)
			log_error("%s/%s: cannot write the condition table: %s; trying again at "
				  "the next change",
				  c->dir->path, KCOND_FILE_NAME, kstatedir_strerror(rc));
	} else if (c->last_write_rc) {
		log_notice("%s/%s: the condition table is written again", c->dir->path,
			   KCOND_FILE_NAME);
	}
	c->last_write_rc = rc;
	if (rc == 0)
		c->table.dirty = false;
}

void kcond_status(const struct kcond *c, struct kcond_status *out)
{
	*out = (struct kcond_status){0};
	if (!c)
		return;
	out->on = c->dir != NULL;
	out->rows = c->table.n;
	out->holding = c->table.holding;
	out->refused = c->table.refused;
	out->writes = c->writes;
	out->write_errors = c->write_errors;
	out->damaged = c->damaged;
	out->max = c->table.max;
	out->settling = c->settling;
	for (size_t i = 0; i < c->table.n; i++) {
		const struct kcond_row *r = c->table.v[i];
		if (!kcond_row_holds(r))
			continue;
		out->acked += r->acked_at != 0;
		if (r->severity < ARRAY_SIZE(out->by_severity))
			out->by_severity[r->severity]++;
	}
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The notifier (notifier.h). */
#include "notifier.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "curl-dl.h"
#include "curl-loop.h"
#include "desktop.h"
#include "hashmap.h"
#include "log.h"
#include "notify-msg.h"
#include "notify-queue.h"
#include "notify-send.h"
#include "util.h"

struct target;

struct delivery {
	uint64_t id, created;
	struct target *t;
	bool tried;		 /* its file is ID.r */
	bool maybe;		 /* a try may have reached the server: the next is flagged */
	bool retry;		 /* its record says so: its event was handled before */
	bool in_flight;		 /* a try is under way */
	unsigned tries;		 /* in this keventd */
	struct knotify_rec *mem; /* the record, when the queue could not keep it */
	struct knotify_xfer *xfer;
};

struct target {
	struct knotifier *n;
	const struct knotify_target *cfg;
	struct knotify_secrets secrets;
	char *off;	     /* why it sends nothing; NULL: it sends */
	struct delivery **q; /* oldest first */
	size_t len, cap;
	size_t in_flight;
	uint64_t backoff_ms, next_try_ns;
	struct ktimer *timer;
	uint64_t timer_at;
	struct knotify_counters c;
	char last_error[KNOTIFY_ANSWER_MAX + 64];
	struct klog_throttle log;
};

struct knotifier {
	struct kloop *loop;
	const struct knotify_config *cfg;
	struct target *targets;
	size_t n_targets;
	struct knotify_queue *queue; /* NULL: deliveries are kept in memory alone */
	struct kcurl_loop *curl;
	struct hashmap *ids; /* "ID" -> struct delivery, of every delivery held */
	char host[256];
	uint64_t backoff_max_ms;
	uint64_t damaged, unknown, orphans;
	struct klog_throttle unknown_log, queue_log;
};

static void pump(struct target *t);

static void id_key(uint64_t id, char buf[17])
{
	snprintf(buf, 17, "%016" PRIx64, id);
}

static struct target *find_target(struct knotifier *n, const char *name)
{
	for (size_t i = 0; i < n->n_targets; i++)
		if (strcmp(n->targets[i].cfg->name, name) == 0)
			return &n->targets[i];
	return NULL;
}

static void delivery_free(struct delivery *d)
{
	if (!d)
		return;
	if (d->xfer) {
		kcurl_loop_remove(d->t->n->curl, knotify_xfer_easy(d->xfer));
		knotify_xfer_free(d->xfer);
	}
	if (d->mem) {
		knotify_rec_release(d->mem);
		free(d->mem);
	}
	free(d);
}

/* Takes d off its target's queue and frees it, its file removed. */
static void forget(struct delivery *d, bool remove_file)
{
	struct target *t = d->t;
	struct knotifier *n = t->n;
	char key[17];
	id_key(d->id, key);
	hashmap_remove(n->ids, key);
	for (size_t i = 0; i < t->len; i++)
		if (t->q[i] == d) {
			memmove(&t->q[i], &t->q[i + 1], (t->len - i - 1) * sizeof(*t->q));
			t->len--;
			break;
		}
	if (remove_file && n->queue && !d->mem)
		(void)knotify_queue_remove(n->queue, d->id, d->tried);
	if (d->in_flight)
		t->in_flight--;
	delivery_free(d);
}

static int add(struct target *t, struct delivery *d)
{
	char key[17];
	id_key(d->id, key);
	if (t->len == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct delivery **q = realloc(t->q, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		t->q = q;
		t->cap = cap;
	}
	int rc = hashmap_put(t->n->ids, key, d, NULL);
	if (rc < 0)
		return rc;
	d->t = t;
	/* in order of age: new ones come last, those read at start anywhere */
	size_t i = t->len;
	while (i > 0 && t->q[i - 1]->created > d->created)
		i--;
	memmove(&t->q[i + 1], &t->q[i], (t->len - i) * sizeof(*t->q));
	t->q[i] = d;
	t->len++;
	/* the queue is full: the oldest not under way goes, counted */
	for (size_t k = 0; t->len > KNOTIFY_QUEUE_MAX && k < t->len; k++) {
		if (t->q[k]->in_flight)
			continue;
		t->c.dropped++;
		klog_throttled(&t->log, LOG_WARNING,
			       "notify %s: %d deliveries queued: the oldest dropped", t->cfg->name,
			       KNOTIFY_QUEUE_MAX);
		forget(t->q[k], true);
		break;
	}
	return 0;
}

static void on_timer(struct ktimer *tm, void *userdata)
{
	struct target *t = userdata;
	(void)tm;
	t->timer = NULL;
	pump(t);
}

static void arm(struct target *t, uint64_t at)
{
	if (t->timer && t->timer_at <= at)
		return;
	ktimer_cancel(TAKE_PTR(t->timer));
	t->timer_at = at;
	if (kloop_add_timer(t->n->loop, at, on_timer, t, &t->timer) < 0)
		t->timer = NULL;
}

/* The monotonic time at which d is past its target's max_age. */
static uint64_t expiry(const struct delivery *d, uint64_t mono, uint64_t real)
{
	uint64_t end = d->created * 1000000000ull + d->t->cfg->max_age_ms * 1000000ull;
	return end <= real ? mono : mono + (end - real);
}

static void start(struct target *t, struct delivery *d)
{
	struct knotifier *n = t->n;
	struct knotify_rec rec, *r = d->mem;
	const char *why = NULL;
	if (!r) {
		int rc = knotify_queue_get(n->queue, d->id, d->tried, &rec, &why);
		if (rc < 0) {
			if (rc == -EINVAL) {
				n->damaged++;
				log_error("notify %s: queued delivery %016" PRIx64
					  " is damaged (%s): lost, set aside as .damaged",
					  t->cfg->name, d->id, why);
			} else {
				t->c.dropped++;
				log_error("notify %s: cannot read queued delivery %016" PRIx64
					  ": %s: dropped",
					  t->cfg->name, d->id, strerror(-rc));
			}
			forget(d, false);
			return;
		}
		r = &rec;
		/* a try from now on may reach the server: said in the file first */
		if (!d->tried && knotify_queue_mark(n->queue, d->id, true) == 0)
			d->tried = true;
	}
	bool retry = d->retry || d->maybe;
	int rc = knotify_xfer_new(t->cfg, &t->secrets, r, retry, n->host, &d->xfer);
	if (r == &rec)
		knotify_rec_release(&rec);
	if (rc == 0) {
		kcurl.easy_setopt(knotify_xfer_easy(d->xfer), CURLOPT_PRIVATE, d);
		rc = kcurl_loop_add(n->curl, knotify_xfer_easy(d->xfer));
	}
	if (rc < 0) {
		knotify_xfer_free(TAKE_PTR(d->xfer));
		t->c.failed++;
		t->next_try_ns = now_monotonic_ns() + KNOTIFY_BACKOFF_MIN_MS * 1000000ull;
		return;
	}
	if (d->tries || d->maybe)
		t->c.retried++;
	d->tries++;
	d->in_flight = true;
	t->in_flight++;
}

static void pump(struct target *t)
{
	struct knotifier *n = t->n;
	if (t->off || !t->len)
		return;
	uint64_t mono = now_monotonic_ns(), real = now_realtime_ns();
	/* past max_age: dropped, counted */
	for (size_t i = 0; i < t->len;) {
		struct delivery *d = t->q[i];
		if (d->in_flight || expiry(d, mono, real) > mono) {
			i++;
			continue;
		}
		t->c.dropped++;
		klog_throttled(&t->log, LOG_WARNING,
			       "notify %s: delivery %016" PRIx64 " is older than max_age (%" PRIu64
			       " s): dropped",
			       t->cfg->name, d->id, t->cfg->max_age_ms / 1000);
		forget(d, true);
	}
	uint64_t next = UINT64_MAX;
	if (t->next_try_ns > mono) {
		next = t->next_try_ns;
	} else {
		for (size_t i = 0; i < t->len && t->in_flight < KNOTIFY_PARALLEL; i++) {
			struct delivery *d = t->q[i];
			if (d->in_flight)
				continue;
			start(t, d);
			if (t->next_try_ns > mono)
				break;
			/* start() may have forgotten it */
			if (i < t->len && t->q[i] != d)
				i--;
		}
	}
	/* the oldest waiting one's max_age */
	for (size_t i = 0; i < t->len; i++)
		if (!t->q[i]->in_flight) {
			uint64_t e = expiry(t->q[i], mono, real);
			if (e < next)
				next = e;
			break;
		}
	if (next != UINT64_MAX)
		arm(t, next);
	(void)n;
}

static void on_done(void *priv, int code, void *userdata)
{
	struct delivery *d = priv;
	struct target *t = d->t;
	struct knotifier *n = userdata;
	_cleanup_strbuf_ struct strbuf answer = STRBUF_INIT;
	enum knotify_outcome o = knotify_xfer_done(d->xfer, code, &answer);
	knotify_xfer_free(TAKE_PTR(d->xfer));
	d->in_flight = false;
	t->in_flight--;
	switch (o) {
	case KNOTIFY_SENT:
		t->c.sent++;
		t->backoff_ms = 0;
		t->next_try_ns = 0;
		log_info("notify %s: delivered %016" PRIx64 "%s: %s", t->cfg->name, d->id,
			 d->retry || d->maybe ? " (flagged a retry)" : "", strbuf_str(&answer));
		forget(d, true);
		break;
	case KNOTIFY_REFUSED:
		t->c.failed++;
		t->c.dropped++;
		snprintf(t->last_error, sizeof(t->last_error), "%s", strbuf_str(&answer));
		log_error("notify %s: delivery %016" PRIx64 " refused by the server: %s: dropped",
			  t->cfg->name, d->id, strbuf_str(&answer));
		forget(d, true);
		break;
	case KNOTIFY_NOT_SENT:
	case KNOTIFY_MAYBE_SENT:
		t->c.failed++;
		if (o == KNOTIFY_MAYBE_SENT)
			d->maybe = true;
		else if (d->tried && !d->maybe && !d->mem && n->queue &&
			 knotify_queue_mark(n->queue, d->id, false) == 0)
			d->tried = false; /* it never reached the server */
		t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : KNOTIFY_BACKOFF_MIN_MS;
		if (t->backoff_ms > n->backoff_max_ms)
			t->backoff_ms = n->backoff_max_ms;
		t->next_try_ns = now_monotonic_ns() + t->backoff_ms * 1000000ull;
		snprintf(t->last_error, sizeof(t->last_error), "%s", strbuf_str(&answer));
		klog_throttled(&t->log, LOG_WARNING,
			       "notify %s: delivery %016" PRIx64 " failed: %s; %zu queued, next "
			       "try in %" PRIu64 " ms",
			       t->cfg->name, d->id, strbuf_str(&answer), t->len, t->backoff_ms);
		break;
	}
	pump(t);
}

static void load_one(void *userdata, struct knotify_rec *r, bool tried)
{
	struct knotifier *n = userdata;
	struct target *t = find_target(n, r->target);
	char key[17];
	id_key(r->id, key);
	if (!t || hashmap_get(n->ids, key)) {
		/* a target keventd.yaml no longer has: the file is left for it */
		n->orphans += !t;
		knotify_rec_release(r);
		return;
	}
	struct delivery *d = calloc(1, sizeof(*d));
	if (d) {
		*d = (struct delivery){.id = r->id,
				       .created = r->created,
				       .tried = tried,
				       .maybe = tried,
				       .retry = r->retry};
		if (add(t, d) < 0)
			free(d);
	}
	knotify_rec_release(r);
}

static void turn_off(struct target *t, const char *fmt, ...) _printf_(2, 3);
static void turn_off(struct target *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&t->off, fmt, ap) < 0)
		t->off = NULL;
	va_end(ap);
	log_error("notify %s: %s: it sends nothing (its deliveries are queued)", t->cfg->name,
		  t->off ? t->off : "out of memory");
	if (!t->off)
		t->off = strdup("out of memory");
}

int knotifier_new(struct kloop *loop, const struct knotify_config *cfg, const char *lib_dir,
		  struct knotifier **out, const char **why)
{
	*why = NULL;
	int rc = kcurl_load(why);
	if (rc < 0)
		return rc;
	struct knotifier *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->loop = loop;
	n->cfg = cfg;
	n->backoff_max_ms = KNOTIFY_BACKOFF_MAX_MS;
	/* tests shorten the backoff (keventd(8), ENVIRONMENT) */
	const char *env = getenv("KEVENTD_NOTIFY_BACKOFF_MAX_MS");
	int64_t v;
	if (env && parse_int64(env, &v) == 0 && v >= KNOTIFY_BACKOFF_MIN_MS)
		n->backoff_max_ms = (uint64_t)v;
	if (gethostname(n->host, sizeof(n->host) - 1) < 0 || !n->host[0])
		strcpy(n->host, "localhost");
	n->targets = calloc(cfg->n + 1, sizeof(*n->targets));
	if (!n->targets || hashmap_new(&n->ids) < 0 ||
	    kcurl_loop_new(loop, on_done, n, &n->curl) < 0) {
		knotifier_free(n);
		return -ENOMEM;
	}
	n->n_targets = cfg->n;
	for (size_t i = 0; i < cfg->n; i++) {
		struct target *t = &n->targets[i];
		const char *swhy = NULL, *file = NULL;
		t->n = n;
		t->cfg = &cfg->v[i];
		rc = knotify_secrets_load(t->cfg, &t->secrets, &swhy, &file);
		if (rc < 0)
			turn_off(t, "%s %s: %s", swhy, file, strerror(-rc));
	}
	const char *qwhy = NULL;
	rc = lib_dir ? knotify_queue_open(lib_dir, &n->queue, &qwhy) : -ENOENT;
	if (!lib_dir) {
		log_notice("notify: no --lib-dir: notifications are kept in memory alone, lost "
			   "at a stop");
	} else if (rc < 0) {
		log_error("notify: cannot open the queue in %s: %s%s%s: notifications are kept "
			  "in memory alone, lost at a stop",
			  lib_dir, qwhy ? qwhy : "", qwhy ? ": " : "", strerror(-rc));
	} else {
		rc = knotify_queue_scan(n->queue, load_one, n, &n->damaged);
		if (rc < 0)
			log_error("notify: cannot read the queue %s: %s",
				  knotify_queue_path(n->queue), strerror(-rc));
		size_t held = hashmap_size(n->ids);
		if (held || n->damaged || n->orphans)
			log_notice("notify: queue %s: %zu deliveries to make, %" PRIu64
				   " damaged (set aside), %" PRIu64
				   " for targets keventd.yaml no longer has (left there)",
				   knotify_queue_path(n->queue), held, n->damaged, n->orphans);
	}
	for (size_t i = 0; i < n->n_targets; i++)
		pump(&n->targets[i]);
	*out = n;
	return 0;
}

void knotifier_event(struct knotifier *n, const struct kevent *ev, const struct krule *const *rules,
		     size_t n_rules)
{
	for (size_t i = 0; i < n_rules; i++) {
		char **names = krule_extra(rules[i])->notify;
		for (size_t k = 0; names && names[k]; k++) {
			/* the session's notifications (desktop.h), shown by the
			 * user instance itself */
			if (strcmp(names[k], KDESKTOP_TARGET) == 0)
				continue;
			struct target *t = find_target(n, names[k]);
			if (!t) {
				n->unknown++;
				klog_throttled(&n->unknown_log, LOG_WARNING,
					       "notify: rule %s names target '%s', which "
					       "keventd.yaml's notify: has not: nothing sent",
					       rules[i]->name, names[k]);
				continue;
			}
			struct knotify_rec *r = calloc(1, sizeof(*r));
			char key[17];
			if (!r || knotify_msg_make(rules[i], ev, t->cfg->name,
						   ev->host ? ev->host : n->host,
						   now_realtime_ns() / 1000000000ull, r) < 0) {
				free(r);
				t->c.dropped++;
				log_error("notify %s: out of memory: a notification dropped",
					  t->cfg->name);
				continue;
			}
			id_key(r->id, key);
			/* queued already: the event is handled again after a restart */
			int rc = hashmap_get(n->ids, key) ? -EEXIST
				 : n->queue		  ? knotify_queue_put(n->queue, r)
							  : -ENOENT;
			if (rc == -EEXIST) {
				knotify_rec_release(r);
				free(r);
				continue;
			}
			if (rc < 0 && n->queue)
				klog_throttled(&n->queue_log, LOG_ERR,
					       "notify: cannot write the queue %s: %s: the "
					       "notification is kept in memory alone",
					       knotify_queue_path(n->queue), strerror(-rc));
			struct delivery *d = calloc(1, sizeof(*d));
			if (!d || (*d = (struct delivery){.id = r->id,
							  .created = r->created,
							  .retry = r->retry,
							  .mem = rc < 0 ? r : NULL},
				   add(t, d) < 0)) {
				t->c.dropped++;
				if (d && !d->mem) {
					(void)knotify_queue_remove(n->queue, r->id, false);
				}
				free(d);
				knotify_rec_release(r);
				free(r);
				continue;
			}
			if (rc == 0) {
				knotify_rec_release(r);
				free(r);
			}
			pump(t);
		}
	}
}

size_t knotifier_n_targets(const struct knotifier *n)
{
	return n->n_targets;
}

const char *knotifier_counters(const struct knotifier *n, size_t i, struct knotify_counters *out)
{
	const struct target *t = &n->targets[i];
	*out = t->c;
	out->queued = t->len;
	out->off = t->off;
	out->last_error = t->last_error[0] ? t->last_error : NULL;
	return t->cfg->name;
}

uint64_t knotifier_damaged(const struct knotifier *n)
{
	return n->damaged;
}

uint64_t knotifier_unknown(const struct knotifier *n)
{
	return n->unknown;
}

void knotifier_free(struct knotifier *n)
{
	if (!n)
		return;
	for (size_t i = 0; n->targets && i < n->n_targets; i++) {
		struct target *t = &n->targets[i];
		for (size_t k = 0; k < t->len; k++)
			delivery_free(t->q[k]);
		free(t->q);
		ktimer_cancel(t->timer);
		knotify_secrets_release(&t->secrets);
		free(t->off);
	}
	free(n->targets);
	kcurl_loop_free(n->curl);
	hashmap_free(n->ids, NULL);
	knotify_queue_free(n->queue);
	free(n);
}

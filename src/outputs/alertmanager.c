// SPDX-License-Identifier: GPL-2.0-or-later
/* The Alertmanager output (alertmanager.h). */
#include "alertmanager.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curl-dl.h"
#include "curl-loop.h"
#include "hashmap.h"
#include "log.h"
#include "notify-send.h"

/* A resolved alert waiting for a post that succeeds. */
struct resolved {
	char *alert;
	uint64_t seq; /* when it was handed: a post carries those up to its own */
};

struct kam {
	struct kloop *loop;
	const struct kam_config *cfg;
	kam_fill_fn fill;
	void *userdata;
	struct kcurl_loop *curl;
	char *password;		  /* NULL: no basic auth */
	char *off;		  /* why nothing is posted; NULL: it is */
	struct hashmap *resolved; /* id -> struct resolved */
	uint64_t seq, sent_seq;
	/* the post in flight: its handle, body, headers, the answer's start */
	CURL *easy;
	struct curl_slist *headers;
	struct strbuf body, answer;
	char err[CURL_ERROR_SIZE];
	bool due;	     /* a change since the last post began */
	size_t holding;	     /* alerts that held at the last post */
	uint64_t backoff_ms; /* 0: the last post succeeded */
	uint64_t retry_at;   /* monotonic: no post before (backoff) */
	uint64_t resend_at;  /* monotonic: the next post of what holds */
	struct ktimer *timer;
	uint64_t timer_at;
	struct kam_counters c;
	char last_error[KAM_ANSWER_MAX + 64];
	struct klog_throttle log;
};

void kam_sep(struct strbuf *body)
{
	if (body->len && body->buf[body->len - 1] != '[')
		strbuf_putc(body, ',');
}

static void post(struct kam *a);

static void on_timer(struct ktimer *t, void *userdata)
{
	struct kam *a = userdata;
	(void)t;
	a->timer = NULL;
	post(a);
}

/* Arms the timer for the next post, if one is wanted. */
static void plan(struct kam *a)
{
	if (a->off || a->easy)
		return;
	uint64_t now = now_monotonic_ns(), at = 0;
	if (a->backoff_ms)
		at = a->retry_at; /* failing: at the backoff's end, whatever changed */
	else if (a->due)
		at = now; /* the loop's next round */
	else if (a->holding || hashmap_size(a->resolved))
		at = a->resend_at;
	if (!at) {
		ktimer_cancel(TAKE_PTR(a->timer));
		return;
	}
	if (a->timer && a->timer_at == at)
		return;
	ktimer_cancel(TAKE_PTR(a->timer));
	a->timer_at = at;
	if (kloop_add_timer(a->loop, at, on_timer, a, &a->timer) < 0)
		a->timer = NULL; /* out of memory: the next change tries again */
}

static size_t on_write(char *buf, size_t size, size_t n, void *userdata)
{
	struct kam *a = userdata;
	return kcurl_keep_answer(&a->answer, KAM_ANSWER_MAX, buf, size * n);
}

static int add_resolved(const char *key, void *value, void *ud)
{
	struct kam *a = ud;
	struct resolved *r = value;
	(void)key;
	kam_sep(&a->body);
	strbuf_puts(&a->body, r->alert);
	return 0;
}

static void xfer_free(struct kam *a)
{
	if (a->easy) {
		kcurl_loop_remove(a->curl, a->easy);
		kcurl.easy_cleanup(a->easy);
		a->easy = NULL;
	}
	if (a->headers)
		kcurl.slist_free_all(TAKE_PTR(a->headers));
	strbuf_reset(&a->body);
	strbuf_reset(&a->answer);
}

static void failed(struct kam *a, const char *what)
{
	a->c.failed++;
	a->c.up = false;
	a->backoff_ms = a->backoff_ms ? a->backoff_ms * 2 : KAM_BACKOFF_MIN_MS;
	if (a->backoff_ms > a->cfg->resend_ms)
		a->backoff_ms = a->cfg->resend_ms;
	a->retry_at = now_monotonic_ns() + a->backoff_ms * 1000000ull;
	snprintf(a->last_error, sizeof(a->last_error), "%s", what);
	klog_throttled(&a->log, LOG_WARNING,
		       "alertmanager: a post to %s failed: %s; %zu alerts, %zu resolved, next try "
		       "in %" PRIu64 " ms",
		       a->cfg->post_url, what, a->holding, hashmap_size(a->resolved),
		       a->backoff_ms);
}

/* Posts every alert that holds and every resolved one waiting. */
static void post(struct kam *a)
{
	if (a->off || a->easy)
		return;
	uint64_t ends = kam_ends_at(now_realtime_ns(), a->cfg->resend_ms);
	a->due = false;
	strbuf_reset(&a->body);
	strbuf_putc(&a->body, '[');
	a->holding = a->fill(a->userdata, ends, &a->body);
	a->sent_seq = a->seq;
	hashmap_sweep(a->resolved, add_resolved, a);
	strbuf_putc(&a->body, ']');
	if (!a->holding && !hashmap_size(a->resolved)) {
		strbuf_reset(&a->body); /* nothing to say, nor to try again */
		a->backoff_ms = 0;
		plan(a);
		return;
	}
	bool ok = !a->body.oom && (a->easy = kcurl.easy_init());
	struct curl_slist *h = NULL;
	ok = ok && (h = kcurl.slist_append(NULL, "Content-Type: application/json"));
	a->headers = h;
	ok = ok && (h = kcurl.slist_append(a->headers, "Expect:"));
	if (h)
		a->headers = h;
	if (ok) {
		CURL *e = a->easy;
		a->err[0] = '\0';
		kcurl.easy_setopt(e, CURLOPT_URL, a->cfg->post_url);
		kcurl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
		kcurl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		kcurl.easy_setopt(e, CURLOPT_ERRORBUFFER, a->err);
		kcurl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
				  (long)(a->cfg->timeout_ms < KAM_CONNECT_TIMEOUT_MS
						 ? a->cfg->timeout_ms
						 : KAM_CONNECT_TIMEOUT_MS));
		kcurl.easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)a->cfg->timeout_ms);
		kcurl.easy_setopt(e, CURLOPT_PRIVATE, a);
		kcurl.easy_setopt(e, CURLOPT_USERAGENT, "keventd");
		kcurl.easy_setopt(e, CURLOPT_POST, 1L);
		kcurl.easy_setopt(e, CURLOPT_POSTFIELDS, a->body.buf);
		kcurl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)a->body.len);
		kcurl.easy_setopt(e, CURLOPT_HTTPHEADER, a->headers);
		kcurl.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
		kcurl.easy_setopt(e, CURLOPT_WRITEDATA, a);
		if (a->cfg->ca_file)
			kcurl.easy_setopt(e, CURLOPT_CAINFO, a->cfg->ca_file);
		if (a->password) {
			kcurl.easy_setopt(e, CURLOPT_USERNAME, a->cfg->username);
			kcurl.easy_setopt(e, CURLOPT_PASSWORD, a->password);
		}
		ok = kcurl_loop_add(a->curl, e) == 0;
	}
	if (!ok) {
		xfer_free(a);
		failed(a, strerror(ENOMEM));
		plan(a);
	}
}

static int drop_sent(const char *key, void *value, void *ud)
{
	struct kam *a = ud;
	struct resolved *r = value;
	(void)key;
	if (r->seq > a->sent_seq)
		return 0;
	free(r->alert);
	free(r);
	return 1;
}

static void on_done(void *priv, int code, void *userdata)
{
	struct kam *a = userdata;
	long status = 0;
	(void)priv;
	_cleanup_strbuf_ struct strbuf what = STRBUF_INIT;
	kcurl.easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
	if (code != CURLE_OK) {
		strbuf_puts(&what, a->err[0] ? a->err : kcurl.easy_strerror((CURLcode)code));
	} else {
		strbuf_printf(&what, "HTTP %ld", status);
		if (a->answer.len) {
			strbuf_puts(&what, ": ");
			strbuf_add_escaped(&what, a->answer.buf, strcspn(a->answer.buf, "\r\n"));
		}
	}
	kcurl.easy_cleanup(a->easy); /* out of the multi handle already */
	a->easy = NULL;
	xfer_free(a);
	if (code == CURLE_OK && status >= 200 && status < 300) {
		if (!a->c.up && a->c.failed)
			log_notice("alertmanager: %s takes the alerts again (%zu holding)",
				   a->cfg->post_url, a->holding);
		a->c.posts++;
		a->c.up = true;
		a->backoff_ms = 0;
		a->resend_at = now_monotonic_ns() + a->cfg->resend_ms * 1000000ull;
		hashmap_sweep(a->resolved, drop_sent, a);
	} else {
		failed(a, strbuf_str(&what));
	}
	plan(a);
}

int kam_new(struct kloop *loop, const struct kam_config *cfg, kam_fill_fn fill, void *userdata,
	    struct kam **out, const char **why)
{
	*why = NULL;
	int rc = kcurl_load(why);
	if (rc < 0)
		return rc;
	struct kam *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*a = (struct kam){.loop = loop, .cfg = cfg, .fill = fill, .userdata = userdata};
	if (hashmap_new(&a->resolved) < 0 || kcurl_loop_new(loop, on_done, a, &a->curl) < 0) {
		kam_free(a);
		return -ENOMEM;
	}
	if (cfg->password_file) {
		const char *swhy = NULL;
		rc = knotify_secret_read(cfg->password_file, &a->password, NULL, true, &swhy);
		if (rc < 0) {
			if (asprintf(&a->off, "password_file %s: %s: %s", cfg->password_file,
				     swhy ? swhy : "", strerror(-rc)) < 0)
				a->off = NULL;
			if (!a->off && !(a->off = strdup("out of memory"))) {
				kam_free(a);
				return -ENOMEM;
			}
			log_error("alertmanager: %s: no alert is posted", a->off);
		}
	}
	a->due = true; /* what the table holds, at once */
	plan(a);
	*out = a;
	return 0;
}

void kam_changed(struct kam *a)
{
	a->due = true;
	plan(a);
}

int kam_resolved(struct kam *a, const char *id, const char *alert)
{
	struct resolved *r = calloc(1, sizeof(*r)), *old = NULL;
	if (!r || !(r->alert = strdup(alert))) {
		free(r);
		return -ENOMEM;
	}
	r->seq = ++a->seq;
	if (hashmap_put(a->resolved, id, r, (void **)&old) < 0) {
		free(r->alert);
		free(r);
		return -ENOMEM;
	}
	if (old) {
		free(old->alert);
		free(old);
	}
	return 0;
}

void kam_holds(struct kam *a, const char *id)
{
	struct resolved *r = hashmap_remove(a->resolved, id);
	if (r) {
		free(r->alert);
		free(r);
	}
}

void kam_counters(const struct kam *a, struct kam_counters *out)
{
	*out = a->c;
	out->resolved = hashmap_size(a->resolved);
	out->off = a->off;
	out->last_error = a->last_error[0] ? a->last_error : NULL;
}

static void free_resolved(void *v)
{
	struct resolved *r = v;
	free(r->alert);
	free(r);
}

void kam_free(struct kam *a)
{
	if (!a)
		return;
	ktimer_cancel(a->timer);
	if (a->curl)
		xfer_free(a);
	kcurl_loop_free(a->curl);
	hashmap_free(a->resolved, free_resolved);
	strbuf_release(&a->body);
	strbuf_release(&a->answer);
	if (a->password)
		explicit_bzero(a->password, strlen(a->password));
	free(a->password);
	free(a->off);
	free(a);
}

// SPDX-License-Identifier: GPL-2.0-or-later
#include "desktop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "notify-msg.h"

bool kdesktop_wanted(const struct krule *r)
{
	char **names = krule_extra(r)->notify;
	for (size_t i = 0; names && names[i]; i++)
		if (strcmp(names[i], KDESKTOP_TARGET) == 0)
			return true;
	return false;
}

uint8_t kdesktop_urgency(enum knotify_severity s)
{
	switch (s) {
	case KNOTIFY_SEV_CRITICAL:
		return 2;
	case KNOTIFY_SEV_INFO:
		return 0;
	default:
		return 1;
	}
}

const char *kdesktop_icon(enum knotify_severity s)
{
	switch (s) {
	case KNOTIFY_SEV_CRITICAL:
		return "dialog-error";
	case KNOTIFY_SEV_WARNING:
		return "dialog-warning";
	default:
		return "dialog-information";
	}
}

void kdesktop_body(const char *s, struct strbuf *out)
{
	_cleanup_free_ char *text = utf8_sanitize(s ? s : "");
	if (!text) {
		out->oom = true;
		return;
	}
	size_t len = strlen(text);
	bool cut = len > KDESKTOP_BODY_MAX;
	if (cut) {
		len = KDESKTOP_BODY_MAX;
		/* at a character: never a UTF-8 sequence's continuation byte */
		while (len && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '&')
			strbuf_puts(out, "&amp;");
		else if (text[i] == '<')
			strbuf_puts(out, "&lt;");
		else if (text[i] == '>')
			strbuf_puts(out, "&gt;");
		else
			strbuf_putc(out, text[i]);
	}
	if (cut)
		strbuf_puts(out, "\xe2\x80\xa6");
}

const char *kdesktop_condition_key(const struct kevent *ev, struct strbuf *out)
{
	const char *name = kevent_prop(ev, "Condition"), *key = kevent_prop(ev, "Key");
	if (ev->source != KEVENT_SOURCE_CONDITION || !name || !*name)
		return NULL;
	strbuf_printf(out, "%s\x1f%s", name, key ? key : ev->object);
	return out->oom ? NULL : strbuf_str(out);
}

#if KEVENT_DBUS
#include <systemd/sd-bus.h>

#include "busloop.h"

#define NOTIFY_DEST  "org.freedesktop.Notifications"
#define NOTIFY_PATH  "/org/freedesktop/Notifications"
#define NOTIFY_IFACE "org.freedesktop.Notifications"
/* a session bus that could not be reached is tried again after this */
#define RECONNECT_NS	(1000000000ull)
#define CALL_TIMEOUT_US (25ull * 1000000)

/* What one notification shows, made when its event came. */
struct content {
	char *title, *body, *cond;
	const char *icon;
	uint8_t urgency;
};

/* A notification of one (rule, object): shown (id), or being shown. */
struct shown {
	struct kdesktop *k;
	char *key;	       /* "RULE\x1fOBJECT" */
	char *cond;	       /* the condition key of what it shows (NULL: none) */
	uint32_t id;	       /* the server's id; 0: not known yet */
	sd_bus_slot *call;     /* its Notify under way */
	struct content *again; /* the next content, once the call under way answers */
	bool close;	       /* a clear came while its Notify was under way */
};

struct kdesktop {
	struct kloop *loop;
	char *host;
	sd_bus *bus;
	struct kbusloop *bl;
	uint64_t failed_at_ns;		    /* the last failed connect */
	struct shown *v[KDESKTOP_OPEN_MAX]; /* the oldest first */
	size_t n;
	struct kdesktop_counters c;
	char last_error[160];
	struct klog_throttle log;
};

static void content_free(struct content *c)
{
	if (!c)
		return;
	free(c->title);
	free(c->body);
	free(c->cond);
	free(c);
}

static void shown_free(struct shown *s)
{
	sd_bus_slot_unref(s->call);
	content_free(s->again);
	free(s->key);
	free(s->cond);
	free(s);
}

static void forget(struct kdesktop *k, size_t i)
{
	shown_free(k->v[i]);
	memmove(&k->v[i], &k->v[i + 1], (k->n - i - 1) * sizeof(*k->v));
	k->n--;
}

static void failed(struct kdesktop *k, const char *what, const char *why)
{
	k->c.failed++;
	snprintf(k->last_error, sizeof(k->last_error), "%s: %s", what, why);
	k->c.last_error = k->last_error;
	klog_throttled(&k->log, LOG_WARNING, "notify desktop: %s: %s: a notification not shown",
		       what, why);
}

static void disconnect(struct kdesktop *k)
{
	while (k->n)
		forget(k, k->n - 1);
	kbusloop_free(TAKE_PTR(k->bl));
	k->bus = sd_bus_flush_close_unref(k->bus);
}

static void lost(void *userdata, int r)
{
	struct kdesktop *k = userdata;
	log_warning("notify desktop: the session bus went (%s): its notifications are "
		    "forgotten, the next one reaches it again",
		    strerror(-r));
	disconnect(k);
}

/* The server closed a notification (it expired, the user dismissed it): a
 * later one of its rule and object is a new one. */
static int on_closed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct kdesktop *k = userdata;
	(void)ret_error;
	uint32_t id = 0, reason = 0;
	if (sd_bus_message_read(m, "uu", &id, &reason) < 0 || !id)
		return 0;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i]->id == id && !k->v[i]->call) {
			forget(k, i);
			break;
		}
	return 0;
}

static int connect_bus(struct kdesktop *k)
{
	uint64_t now = now_monotonic_ns();
	if (k->failed_at_ns && now - k->failed_at_ns < RECONNECT_NS)
		return -EAGAIN;
	int r = sd_bus_open_user(&k->bus);
	const char *what = "cannot reach the session bus";
	if (r >= 0) {
		what = "cannot watch the notification server";
		r = sd_bus_match_signal_async(k->bus, NULL, NULL, NOTIFY_PATH, NOTIFY_IFACE,
					      "NotificationClosed", on_closed, NULL, k);
	}
	if (r >= 0)
		r = kbusloop_new(k->loop, k->bus, lost, k, &k->bl);
	if (r < 0) {
		kbusloop_free(TAKE_PTR(k->bl));
		k->bus = sd_bus_close_unref(k->bus);
		k->failed_at_ns = now;
		failed(k, what, strerror(-r));
		return r;
	}
	k->failed_at_ns = 0;
	return 0;
}

static void close_id(struct kdesktop *k, uint32_t id)
{
	int r = sd_bus_call_method_async(k->bus, NULL, NOTIFY_DEST, NOTIFY_PATH, NOTIFY_IFACE,
					 "CloseNotification", NULL, NULL, "u", id);
	if (r < 0)
		log_warning("notify desktop: cannot close notification %u: %s", id, strerror(-r));
	else
		k->c.closed++;
}

static int send_notify(struct shown *s, struct content *c);

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct shown *s = userdata;
	struct kdesktop *k = s->k;
	(void)ret_error;
	s->call = sd_bus_slot_unref(s->call);
	const sd_bus_error *e = sd_bus_message_get_error(m);
	uint32_t id = 0;
	bool replacing = s->id != 0;
	if (e || sd_bus_message_read(m, "u", &id) < 0 || !id) {
		failed(k, "the notification server refused it",
		       e ? (e->message ? e->message : e->name) : "no id in its answer");
		s->id = 0;
	} else {
		k->c.shown++;
		if (replacing)
			k->c.replaced++;
		s->id = id;
	}
	size_t i = 0;
	while (i < k->n && k->v[i] != s)
		i++;
	if (s->close) {
		if (s->id)
			close_id(k, s->id);
		s->close = false;
		s->id = 0;
	}
	struct content *next = TAKE_PTR(s->again);
	if (next) {
		if (send_notify(s, next) < 0 && i < k->n)
			forget(k, i);
	} else if (!s->id && i < k->n) {
		forget(k, i);
	}
	if (k->bl)
		kbusloop_process(k->bl);
	return 0;
}

/* Shows c as s (over its id, when it has one); takes c. */
static int send_notify(struct shown *s, struct content *c)
{
	struct kdesktop *k = s->k;
	free(s->cond);
	s->cond = TAKE_PTR(c->cond);
	int r = sd_bus_call_method_async(k->bus, &s->call, NOTIFY_DEST, NOTIFY_PATH, NOTIFY_IFACE,
					 "Notify", on_reply, s, "susssasa{sv}i", KDESKTOP_APP_NAME,
					 s->id, c->icon, c->title, c->body, 0, 1, "urgency", "y",
					 c->urgency, (int32_t)-1);
	content_free(c);
	if (r < 0) {
		failed(k, "cannot call the notification server", strerror(-r));
		return r;
	}
	return 0;
}

static struct content *make_content(struct kdesktop *k, const struct krule *r,
				    const struct kevent *ev, const char *cond)
{
	struct knotify_rec rec = {0};
	struct content *c = calloc(1, sizeof(*c));
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	if (!c || knotify_msg_make(r, ev, KDESKTOP_TARGET, ev->host ? ev->host : k->host,
				   now_realtime_ns() / 1000000000ull, &rec) < 0)
		goto oom;
	kdesktop_body(rec.message, &body);
	c->title = utf8_sanitize(rec.title ? rec.title : "");
	c->body = body.oom ? NULL : strdup(strbuf_str(&body));
	c->cond = cond ? strdup(cond) : NULL;
	c->icon = kdesktop_icon(rec.severity);
	c->urgency = kdesktop_urgency(rec.severity);
	knotify_rec_release(&rec);
	if (!c->title || !c->body || (cond && !c->cond))
		goto oom;
	return c;
oom:
	content_free(c);
	return NULL;
}

static void show(struct kdesktop *k, const struct krule *r, const struct kevent *ev,
		 const char *cond)
{
	_cleanup_strbuf_ struct strbuf key = STRBUF_INIT;
	strbuf_printf(&key, "%s\x1f%s", r->name, ev->object);
	struct content *c = make_content(k, r, ev, cond);
	if (!c || key.oom) {
		content_free(c);
		failed(k, "out of memory", r->name);
		return;
	}
	size_t i = 0;
	while (i < k->n && strcmp(k->v[i]->key, strbuf_str(&key)) != 0)
		i++;
	struct shown *s = i < k->n ? k->v[i] : NULL;
	if (s && s->call) {
		/* the latest wins, over the id the call under way brings */
		content_free(s->again);
		s->again = c;
		s->close = false;
		return;
	}
	if (!s) {
		if (k->n == KDESKTOP_OPEN_MAX) {
			/* the oldest is left on the screen, no longer replaced */
			size_t old = 0;
			while (old < k->n && k->v[old]->call)
				old++;
			if (old == k->n) {
				content_free(c);
				failed(k, "too many notifications under way", r->name);
				return;
			}
			forget(k, old);
		}
		s = calloc(1, sizeof(*s));
		if (!s || !(s->key = strdup(strbuf_str(&key)))) {
			free(s);
			content_free(c);
			failed(k, "out of memory", r->name);
			return;
		}
		s->k = k;
		k->v[k->n++] = s;
		i = k->n - 1;
	}
	if (send_notify(s, c) < 0)
		forget(k, i);
}

/* A condition's clear: what its set and reminders showed goes. */
static void close_condition(struct kdesktop *k, const char *cond)
{
	for (size_t i = 0; i < k->n;) {
		struct shown *s = k->v[i];
		if (!s->cond || strcmp(s->cond, cond) != 0) {
			i++;
		} else if (s->call) {
			/* closed once its id is known; nothing else shown */
			content_free(TAKE_PTR(s->again));
			s->close = true;
			i++;
		} else {
			if (s->id)
				close_id(k, s->id);
			forget(k, i);
		}
	}
}

int kdesktop_new(struct kloop *loop, const char *host, struct kdesktop **out)
{
	struct kdesktop *k = calloc(1, sizeof(*k));
	if (!k || !(k->host = strdup(host ? host : ""))) {
		free(k);
		return -ENOMEM;
	}
	k->loop = loop;
	k->log = (struct klog_throttle){.name = "notify desktop", .what = "lines about failures"};
	*out = k;
	return 0;
}

void kdesktop_event(struct kdesktop *k, const struct kevent *ev, const struct krule *const *rules,
		    size_t n_rules)
{
	if (!k)
		return;
	_cleanup_strbuf_ struct strbuf cb = STRBUF_INIT;
	const char *cond = kdesktop_condition_key(ev, &cb);
	bool clear = cond && strcmp(ev->signal, "clear") == 0;
	bool wanted = false;
	for (size_t i = 0; i < n_rules && !wanted; i++)
		wanted = kdesktop_wanted(rules[i]);
	if (!wanted && !(clear && k->n))
		return;
	if (!k->bus) {
		int r = connect_bus(k);
		if (r == -EAGAIN && wanted)
			failed(k, "cannot reach the session bus",
			       "the last try was less than a second ago");
		if (r < 0)
			return;
	}
	if (clear)
		close_condition(k, cond);
	for (size_t i = 0; i < n_rules; i++)
		if (kdesktop_wanted(rules[i]))
			show(k, rules[i], ev, clear ? NULL : cond);
	if (k->bl)
		kbusloop_process(k->bl);
}

void kdesktop_counters(const struct kdesktop *k, struct kdesktop_counters *out)
{
	*out = k->c;
	out->open = 0;
	for (size_t i = 0; i < k->n; i++)
		out->open += k->v[i]->id != 0;
}

void kdesktop_free(struct kdesktop *k)
{
	if (!k)
		return;
	disconnect(k);
	free(k->host);
	free(k);
}

#else /* !KEVENT_DBUS */

struct kdesktop {
	struct kdesktop_counters c;
};

int kdesktop_new(struct kloop *loop, const char *host, struct kdesktop **out)
{
	(void)loop;
	(void)host;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void kdesktop_event(struct kdesktop *k, const struct kevent *ev, const struct krule *const *rules,
		    size_t n_rules)
{
	(void)ev;
	for (size_t i = 0; k && i < n_rules; i++)
		if (kdesktop_wanted(rules[i])) {
			k->c.failed++;
			k->c.last_error = "keventd was built without D-Bus";
		}
}

void kdesktop_counters(const struct kdesktop *k, struct kdesktop_counters *out)
{
	*out = k->c;
}

void kdesktop_free(struct kdesktop *k)
{
	free(k);
}

#endif

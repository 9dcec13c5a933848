// SPDX-License-Identifier: GPL-2.0-or-later
/* The control socket's requests, for the daemon (daemon-ctl.h). */
#include "daemon-ctl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon-cond.h"
#include "daemon-internal.h"
#include "journal.h"
#include "history.h"
#include "log.h"
#include "monitor.h"
#include "reply.h"
#include "seqfile.h"
#include "source-udev.h"

/* A send or post taken, its record appended and not yet written: it is
 * answered (and its event handled, or refused) once the journal has
 * written the round's records (resolve_staged()). */
struct staged_send {
	struct staged_send *next;
	struct kctl_peer *p; /* NULL: gone, nobody to answer */
	struct kstaged *st;
	uint64_t seqnum, post_no; /* the event's; the client's number of the post */
	bool post;
};

/* A send --wait client, until the job of its event is done. */
struct waiter {
	struct waiter *next;
	struct kctl_peer *p;
	uint64_t serial; /* the event's number in the daemon */
	unsigned failed;
	/* the event waited for, as its observers see it: the events its
	 * commit makes (a condition's set) are seen while it is armed too */
	enum kevent_source src;
	uint64_t seqnum;
	bool seen;
};

struct kdaemon_ctl {
	struct kdaemon *d;
	struct kctl_server *srv; /* NULL without a socket */
	struct ksource src;
	struct kseqfile seq; /* the socket events' numbers, kept across restarts */
	struct kctl_peer *monitors;
	struct waiter *waiters;
	/* the waiter of the send --wait whose event is being submitted (its
	 * number is set when the observers see it, and its job may be done
	 * before kdaemon_submit() returns), and how many of the event's rules
	 * run something */
	struct waiter *arming;
	size_t armed_runs;
	struct staged_send *staged, **staged_tail;
	size_t n_staged;      /* in the socket source's share already */
	bool held_for_staged; /* a request waits for them to be handled */
	/* the bad requests, and the refused or dropped connections (log.h) */
	struct klog_throttle bad_log, refused_log;
	uint64_t monitor_dropped; /* events not shown to a monitor too slow */
};

static struct waiter *arm_wait(struct kdaemon_ctl *ctl, struct kctl_peer *p, enum kevent_source src,
			       uint64_t seqnum);
static void end_wait(struct kdaemon_ctl *ctl, struct kctl_peer *p, int rc);
static void forget_waits(struct kdaemon_ctl *ctl, struct kctl_peer *p);
static bool drop_arming(struct kdaemon_ctl *ctl);

/* The error reply to a send, or to the client's post number p->posts
 * ("post N: ..."): a post is answered only when it fails, so the text says
 * which one. */
static void reply_send_error(struct kctl_peer *p, bool post, const char *what, const char *why)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (post)
		strbuf_printf(&sb, "post %" PRIu64 ": ", p->posts);
	strbuf_printf(&sb, "%s%s%s", what, why ? ": " : "", why ? why : "");
	p->ops->reply(p, "err", sb.oom ? what : strbuf_str(&sb));
}

static void reply_seq(struct kctl_peer *p, uint64_t v)
{
	/* the decimal sequence number, without snprintf (a storm pays it per event) */
	char seq[24], *s = seq + sizeof(seq) - 1;
	*s = '\0';
	do
		*--s = (char)('0' + v % 10);
	while (v /= 10);
	p->ops->reply(p, "ok", s);
}

/*
 * The sends and posts taken since the last time: the journal writes their
 * records (with the round's others, in one write), then each is handled
 * and answered "ok" (a post: not answered) when its record was written,
 * or refused and answered with why when it was not.  In the order they
 * came, before any later request of theirs is handled.
 */
static void resolve_staged(void *userdata)
{
	struct kdaemon_ctl *ctl = userdata;
	struct staged_send *e = ctl->staged;
	if (!e)
		return;
	ctl->staged = NULL;
	ctl->staged_tail = &ctl->staged;
	ctl->bad_log =
		(struct klog_throttle){.name = "control", .what = "bad requests", .counted = true};
	ctl->refused_log = (struct klog_throttle){
		.name = "control", .what = "refused or dropped connections", .counted = true};
	ctl->n_staged = 0;
	kdaemon_journal_flush(ctl->d);
	while (e) {
		struct staged_send *next = e->next;
		struct kctl_peer *p = e->p;
		int rc = kdaemon_staged_written(ctl->d, e->st);
		if (rc < 0) {
			kdaemon_refuse(ctl->d, e->st);
			if (p) {
				/* "ok" means written: what the journal cannot write is refused */
				_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
				if (e->post)
					strbuf_printf(&sb, "post %" PRIu64 ": ", e->post_no);
				strbuf_printf(&sb, "the journal cannot write it: event refused: %s",
					      strerror(-rc));
				p->ops->reply(p, "err", sb.oom ? "event refused" : strbuf_str(&sb));
			}
		} else {
			rc = kdaemon_commit(ctl->d, e->st);
			if (p && rc < 0 && e->post) {
				_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
				strbuf_printf(&sb, "post %" PRIu64 ": %s", e->post_no,
					      strerror(-rc));
				p->ops->reply(p, "err", sb.oom ? "error" : strbuf_str(&sb));
			} else if (p && rc < 0) {
				p->ops->reply(p, "err", strerror(-rc));
			} else if (p && !e->post) {
				reply_seq(p, e->seqnum);
			}
		}
		if (p && (!next || next->p != p))
			p->ops->flush(p);
		free(e);
		e = next;
	}
	/* a request parked for the ones staged may find room now */
	if (ctl->srv && ctl->held_for_staged)
		kctl_server_resume(ctl->srv);
	ctl->held_for_staged = false;
}

/* send (answered "ok SEQNUM"), post (answered only on failure) and, with
 * wait, send-wait (answered when its handlers are done: start_wait()).
 * With as, the request names the event's source first (post-as, and
 * test-run, a send-wait whose handlers get KEVENT_TEST=1). */
static void do_send(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m,
		    bool post, bool wait, bool as)
{
	struct kdaemon *d = ctl->d;
	const char *why = NULL;
	struct kevent *ev = NULL;
	if (post)
		p->posts++;
	if (!(d->cfg.sources & (1u << KEVENT_SOURCE_SOCKET)) && m->n >= 4u + as &&
	    m->n <= 5u + as) {
		reply_send_error(p, post,
				 "the socket source is off (keventd --sources): event refused",
				 NULL);
		return;
	}
	/* past the numbers of the last run's events read back so far */
	kseqfile_seen(&ctl->seq, d->socket_seq_replayed);
	int rc = as ? kctl_event_from_msg_as(m, ctl->seq.last + 1, now_realtime_ns(), &ev, &why)
		    : kctl_event_from_msg(m, ctl->seq.last + 1, now_realtime_ns(), &ev, &why);
	if (rc == -EBADMSG) {
		d->stats.ctl_bad++;
		reply_send_error(p, post,
				 as	? "post-as and test-run take SOURCE TYPE OBJECT SIGNAL "
					  "[PAYLOAD]"
				 : post ? "post takes TYPE OBJECT SIGNAL [PAYLOAD]"
					: "send takes TYPE OBJECT SIGNAL [PAYLOAD]",
				 NULL);
		return;
	}
	if (rc == 0 && as && wait) {
		ev->test = true;
		log_info("test run (pid %d): %s %s %s %s", (int)p->pid,
			 kevent_source_name(ev->source), kevent_type_name(ev->type), ev->object,
			 ev->signal);
	}
	if (rc == -EINVAL) {
		kdaemon_reject(d, KEVENT_SOURCE_SOCKET, why);
		reply_send_error(p, post, "invalid event", why);
		return;
	}
	if (rc < 0) {
		reply_send_error(p, post, strerror(-rc), NULL);
		return;
	}
	(void)kseqfile_next(&ctl->seq); /* ev's number, ctl->seq.last + 1 */
	uint64_t v = ev->seqnum;	/* the event is kdaemon_submit()'s from here */
	struct staged_send *e =
		d->journal && !wait && kdaemon_journaled(ev->source) ? calloc(1, sizeof(*e)) : NULL;
	if (e) {
		/* answered once the journal holds it: resolve_staged() */
		rc = kdaemon_accept(d, TAKE_PTR(ev), &e->st);
		if (rc < 0) {
			free(e);
			reply_send_error(p, post, strerror(-rc), NULL);
			return;
		}
		*e = (struct staged_send){
			.p = p, .st = e->st, .seqnum = v, .post_no = p->posts, .post = post};
		*ctl->staged_tail = e;
		ctl->staged_tail = &e->next;
		ctl->n_staged++;
		return;
	}
	/* not staged (send --wait, or a source the journal does not keep):
	 * after those that are, in the order they came */
	resolve_staged(ctl);
	if (wait && !arm_wait(ctl, p, ev->source, v)) {
		kevent_free(ev);
		reply_send_error(p, false, "out of memory", NULL);
		return;
	}
	uint64_t refused = d->stats.journal_refused;
	rc = kdaemon_submit(d, TAKE_PTR(ev));
	if (rc < 0 && d->stats.journal_refused != refused) {
		/* "ok" means written: what the journal cannot write is refused */
		if (wait)
			(void)drop_arming(ctl);
		reply_send_error(p, post, "the journal cannot write it: event refused",
				 strerror(-rc));
		return;
	}
	if (wait) {
		end_wait(ctl, p, rc);
		return;
	}
	if (rc < 0 || post) {
		if (rc < 0)
			reply_send_error(p, post, strerror(-rc), NULL);
		return;
	}
	reply_seq(p, v);
}

/* Filter fields from field first on (filter.h): 0, or -EINVAL (said). */
static int read_filter(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m,
		       size_t first, struct kfilter *f)
{
	kfilter_init(f);
	for (size_t i = first; i < m->n; i++) {
		const char *why = NULL;
		if (kfilter_add(f, m->f[i], &why) < 0) {
			ctl->d->stats.ctl_bad++;
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
			strbuf_printf(&sb, "bad filter: %s", why);
			p->ops->reply(p, "err", sb.oom ? "bad filter" : strbuf_str(&sb));
			return -EINVAL;
		}
	}
	return 0;
}

static void do_monitor(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m)
{
	/* monitor [text|json|record [FILTER...]]: failed is for events, whose
	 * runs are over */
	struct kfilter f;
	if (read_filter(ctl, p, m, 2, &f) < 0)
		return;
	if (f.failed) {
		p->ops->reply(p, "err",
			      "bad filter: monitor shows events as they come, before their "
			      "handlers run (failed is for events)");
		return;
	}
	if (!p->monitor) {
		p->monitor = true;
		p->next = ctl->monitors;
		if (ctl->monitors)
			ctl->monitors->prev = p;
		ctl->monitors = p;
		if (p->ops->subscribe)
			p->ops->subscribe(p);
	}
	p->filter = f;
	p->json = m->n > 1 && strcmp(m->f[1], "json") == 0;
	p->record = m->n > 1 && strcmp(m->f[1], "record") == 0;
	p->ops->reply(p, "ok", NULL);
}

/* A reply rendered as p reads it, s taken (NULL: out of memory); at once
 * for a peer that takes no stream. */
static void send_stream(struct kctl_peer *p, struct kctl_stream *s)
{
	if (!s) {
		p->ops->reply(p, "err", "out of memory");
		return;
	}
	if (p->ops->stream) {
		p->ops->stream(p, s);
		return;
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	while (s->next(s, &sb))
		;
	const char *kind = "ok", *text = NULL;
	s->end(s, &kind, &text);
	p->ops->reply_data(p, strbuf_str(&sb));
	if (sb.oom)
		p->ops->reply(p, "err", "out of memory");
	else
		p->ops->reply(p, kind, text);
	s->free(s);
}

static void do_status(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m)
{
	int format = m->n > 1 ? kstatus_format_from_name(m->f[1]) : KSTATUS_TEXT;
	send_stream(p,
		    kreply_status(ctl->d, format < 0 ? KSTATUS_TEXT : (enum kstatus_format)format));
}

static void do_reload(struct kdaemon_ctl *ctl, struct kctl_peer *p)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	log_info("reload requested over the control socket (pid %d)", (int)p->pid);
	int rc = kdaemon_reload(ctl->d, &sb);
	p->ops->reply_data(p, strbuf_str(&sb));
	/* a broken file fails the reload, as systemctl reload would: the
	 * report above says which and why; the rest of the set is loaded */
	size_t broken = ctl->d->rules ? ctl->d->rules->n_broken : 0;
	char why[96];
	if (rc == 0 && broken)
		snprintf(why, sizeof(why), "%zu rule file%s broken (keventctl status lists %s)",
			 broken, broken == 1 ? " is" : "s are", broken == 1 ? "it" : "them");
	p->ops->reply(p, rc < 0 || broken ? "err" : "ok",
		      rc < 0   ? strerror(-rc)
		      : broken ? why
			       : NULL);
}

/* One field of about's reply: "KEY\x1fVALUE[\x1fVALUE...]". */
static void about_field(void *ud, const char *key, const char *const *v, size_t n)
{
	struct kctl_peer *p = ud;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, key);
	for (size_t i = 0; i < n; i++) {
		strbuf_putc(&sb, '\x1f');
		strbuf_puts(&sb, v[i]);
	}
	if (!sb.oom)
		p->ops->reply(p, "data", strbuf_str(&sb));
}

/* about: what status's verdict says of keventd (keventctl(8)), a field a
 * message (reply.h, docs/control-protocol.md). */
static void do_about(struct kdaemon_ctl *ctl, struct kctl_peer *p)
{
	kreply_about(ctl->d, about_field, p);
	p->ops->reply(p, "ok", NULL);
}

/* events [N [text|json [FILTER...]]]: the last N events of the history
 * (0 or none: all) that pass the filters. */
static void do_events(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m)
{
	int64_t n = 0;
	struct kfilter f;
	if ((m->n > 1 && (parse_int64(m->f[1], &n) < 0 || n < 0)) ||
	    (m->n > 2 && strcmp(m->f[2], "text") != 0 && strcmp(m->f[2], "json") != 0)) {
		ctl->d->stats.ctl_bad++;
		p->ops->reply(p, "err", "events takes [N [text|json [FILTER...]]]");
		return;
	}
	if (read_filter(ctl, p, m, 3, &f) < 0)
		return;
	if (!ctl->d->history) {
		p->ops->reply(p, "err", "keventd keeps no history (--history 0)");
		return;
	}
	send_stream(p,
		    kreply_events(ctl->d, (size_t)n, m->n > 2 && strcmp(m->f[2], "json") == 0, &f));
}

/* "seq 12 (socket) is not in the history: it holds N events, from seq 3
 * (kernel) at TIME" */
static void reply_not_kept(struct kdaemon_ctl *ctl, struct kctl_peer *p, const char *what)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const struct khistory_entry *e = khistory_oldest(ctl->d->history);
	strbuf_printf(&sb, "%s is not in the history: ", what);
	if (!e) {
		strbuf_puts(&sb, "it holds no events yet");
	} else {
		enum kevent_source src;
		uint64_t seq, ts;
		khistory_entry_where(e, &src, &seq, &ts);
		size_t n = khistory_len(ctl->d->history);
		strbuf_printf(
			&sb,
			"it holds the last %zu event%s (--history %zu), the oldest seq %" PRIu64
			" (%s) at ",
			n, n == 1 ? "" : "s", khistory_capacity(ctl->d->history), seq,
			kevent_source_name(src));
		strbuf_put_time(&sb, ts);
	}
	p->ops->reply(p, "err", sb.oom ? "not in the history" : strbuf_str(&sb));
}

/* explain SEQ|last [SOURCE|"" [text|json]]: a past event against the rules
 * of then and of today. */
static void do_explain(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m)
{
	struct kdaemon *d = ctl->d;
	int64_t seq = 0;
	bool last = m->n > 1 && strcmp(m->f[1], "last") == 0;
	int source = m->n > 2 && *m->f[2] ? kevent_source_from_name(m->f[2]) : -1;
	if (m->n < 2 || m->n > 4 || (!last && (parse_int64(m->f[1], &seq) < 0 || seq < 0)) ||
	    (m->n > 2 && *m->f[2] && source < 0) ||
	    (m->n > 3 && strcmp(m->f[3], "text") != 0 && strcmp(m->f[3], "json") != 0)) {
		d->stats.ctl_bad++;
		p->ops->reply(p, "err", "explain takes SEQ|last [SOURCE [text|json]]");
		return;
	}
	if (!d->history) {
		p->ops->reply(p, "err", "keventd keeps no history (--history 0)");
		return;
	}
	const struct khistory_entry *e = khistory_find(d->history, source, (uint64_t)seq, last);
	if (!e) {
		char what[64];
		if (last)
			snprintf(what, sizeof(what), "the last event%s%s",
				 source >= 0 ? " of " : "",
				 source >= 0 ? kevent_source_name(source) : "");
		else
			snprintf(what, sizeof(what), "seq %" PRId64 "%s%s%s", seq,
				 source >= 0 ? " (" : "",
				 source >= 0 ? kevent_source_name(source) : "",
				 source >= 0 ? ")" : "");
		reply_not_kept(ctl, p, what);
		return;
	}
	struct kctl_stream *s = NULL;
	int rc = kreply_explain(d, e, m->n > 3 && strcmp(m->f[3], "json") == 0, &s);
	if (rc < 0) {
		p->ops->reply(p, "err", strerror(-rc));
		return;
	}
	send_stream(p, s);
}

/* The answer to p's trigger: its devices are in the queue, or it failed. */
static void end_trigger(struct kctl_peer *p, int rc)
{
	size_t n = ksource_udev_trigger_count(p->trigger);
	log_info("trigger (pid %d): %zu device%s reported as %s events%s%s", (int)p->pid, n,
		 n == 1 ? "" : "s", p->trigger_action, rc < 0 ? ", then: " : "",
		 rc < 0 ? strerror(-rc) : "");
	ksource_udev_trigger_free(TAKE_PTR(p->trigger));
	if (rc < 0) {
		p->ops->reply(p, "err", strerror(-rc));
		return;
	}
	char text[32];
	snprintf(text, sizeof(text), "%zu", n);
	p->ops->reply(p, "ok", text);
}

static void trigger_done(struct kudev_trigger *t, int rc, void *userdata)
{
	struct kctl_peer *p = userdata;
	(void)t; /* p->trigger */
	end_trigger(p, rc);
	p->ops->flush(p);
}

/* trigger ACTION [SUBSYSTEM,...]: the devices present as udev events,
 * made by the udev source from libudev's enumeration (keventctl(8)).
 * Held to the udev source's share of the queue like the uevents: refused
 * while the share is full, one at a time per connection, and its devices
 * go in as the share has room, answered once they are all in. */
static void do_trigger(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m)
{
	struct kdaemon *d = ctl->d;
	char list[KCTL_TRIGGER_MAX][KCTL_SUBSYSTEM_MAX];
	const char *names[KCTL_TRIGGER_MAX];
	const char *action = NULL, *why = NULL;
	size_t n_names = 0;
	if (kctl_trigger_from_msg(m, &action, list, &n_names, &why) < 0) {
		d->stats.ctl_bad++;
		p->ops->reply(p, "err", why);
		return;
	}
	struct ksource *udev = d->source[KEVENT_SOURCE_UDEV];
	if (!udev) {
		p->ops->reply(p, "err", "the udev source is not running (keventd --sources)");
		return;
	}
	if (p->trigger) {
		d->stats.ctl_trigger_refused++;
		p->ops->reply(p, "err",
			      "a trigger of this connection is still waiting for room in the "
			      "queue: one at a time");
		return;
	}
	if (!kdaemon_room(d, KEVENT_SOURCE_UDEV)) {
		d->stats.ctl_trigger_refused++;
		p->ops->reply(p, "err",
			      "the udev source's share of the queue is full (or the journal is): "
			      "try again once it has drained");
		return;
	}
	for (size_t i = 0; i < n_names; i++)
		names[i] = list[i];
	snprintf(p->trigger_action, sizeof(p->trigger_action), "%s", action);
	int rc = ksource_udev_trigger(udev, action, names, n_names, trigger_done, p, &p->trigger);
	if (rc < 0) {
		log_info("trigger (pid %d): %s", (int)p->pid, strerror(-rc));
		p->ops->reply(p, "err", strerror(-rc));
	} else if (rc == 1) {
		end_trigger(p, 0);
	}
	/* else trigger_done() answers */
}

/* conditions [text|json|check] [holding|all] [NAMES]: the table, or the
 * monitoring plugin's line (its status the ok's text). */
static void do_conditions(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m)
{
	const char *format = m->n > 1 ? m->f[1] : "text";
	const char *which = m->n > 2 ? m->f[2] : "holding";
	bool check = strcmp(format, "check") == 0;
	if (m->n > 4 || (!check && strcmp(format, "text") != 0 && strcmp(format, "json") != 0) ||
	    (strcmp(which, "holding") != 0 && strcmp(which, "all") != 0) || (m->n > 3 && !check)) {
		ctl->d->stats.ctl_bad++;
		p->ops->reply(p, "err", "conditions takes [text|json|check] [holding|all] [NAMES]");
		return;
	}
	if (!ctl->d->cond && !check) {
		p->ops->reply(p, "err",
			      "keventd keeps no condition table (--lib-dir none, or condition not "
			      "in --sources)");
		return;
	}
	if (check) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		char status[4];
		snprintf(status, sizeof(status), "%d",
			 kdaemon_cond_check(ctl->d, m->n > 3 ? m->f[3] : NULL, &sb));
		p->ops->reply_data(p, strbuf_str(&sb));
		p->ops->reply(p, sb.oom ? "err" : "ok", sb.oom ? "out of memory" : status);
		return;
	}
	send_stream(p, kdaemon_cond_list(ctl->d, strcmp(format, "json") == 0,
					 strcmp(which, "all") == 0));
}

/* ack NAME [KEY [NOTE]]: the rows acknowledged, the ok's text. */
static void do_ack(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m)
{
	if (m->n < 2 || m->n > 4) {
		ctl->d->stats.ctl_bad++;
		p->ops->reply(p, "err", "ack takes NAME [OBJECT [NOTE]]");
		return;
	}
	const char *key = m->n > 2 && *m->f[2] ? m->f[2] : NULL;
	int n = kdaemon_cond_ack(ctl->d, m->f[1], key, p->uid, m->n > 3 ? m->f[3] : NULL);
	char text[64];
	if (n == -EOPNOTSUPP) {
		p->ops->reply(p, "err",
			      "keventd keeps no condition table (--lib-dir none, or condition not "
			      "in --sources)");
	} else if (n == -ENOENT) {
		p->ops->reply(p, "err", "no such condition: not declared, and no row of it");
	} else if (n == -EINVAL) {
		p->ops->reply(p, "err", "a note is one line of printable text, at most 1000 bytes");
	} else if (n < 0) {
		p->ops->reply(p, "err", strerror(-n));
	} else if (n == 0) {
		p->ops->reply(p, "err",
			      key ? "that condition does not hold for that object"
				  : "that condition holds for no object");
	} else {
		snprintf(text, sizeof(text), "%d", n);
		p->ops->reply(p, "ok", text);
	}
}

int kdaemon_ctl_request(struct kdaemon_ctl *ctl, struct kctl_peer *p, const struct kctl_msg *m,
			bool may_park)
{
	const char *cmd = m->f[0];
	bool test = strcmp(cmd, "test-run") == 0, post_as = strcmp(cmd, "post-as") == 0;
	bool post = post_as || strcmp(cmd, "post") == 0;
	bool wait = test || strcmp(cmd, "send-wait") == 0;
	/* what a client asks after a send or post is answered after it */
	if (wait || !(post || strcmp(cmd, "send") == 0))
		resolve_staged(ctl);
	if (post || wait || strcmp(cmd, "send") == 0) {
		/* an event of another source goes to that source's share */
		int src = (test || post_as) && m->n > 1 ? kevent_source_from_name(m->f[1]) : -1;
		/* the ones staged take their places in the share already */
		if (may_park &&
		    kdaemon_room(ctl->d, src < 0 ? KEVENT_SOURCE_SOCKET
						 : (enum kevent_source)src) <= ctl->n_staged) {
			ctl->held_for_staged |= ctl->n_staged > 0;
			return -EAGAIN;
		}
		do_send(ctl, p, m, post, wait, test || post_as);
	} else if (strcmp(cmd, "sync") == 0) {
		/* requests are handled in order: every earlier post is in, and
		 * journaled (kdaemon_submit() appends before anything is done) */
		char n[24];
		snprintf(n, sizeof(n), "%" PRIu64, p->posts);
		p->ops->reply(p, "ok", n);
	} else if (strcmp(cmd, "monitor") == 0) {
		do_monitor(ctl, p, m);
	} else if (strcmp(cmd, "status") == 0) {
		do_status(ctl, p, m);
	} else if (strcmp(cmd, "about") == 0) {
		do_about(ctl, p);
	} else if (strcmp(cmd, "reload") == 0) {
		do_reload(ctl, p);
	} else if (strcmp(cmd, "events") == 0) {
		do_events(ctl, p, m);
	} else if (strcmp(cmd, "explain") == 0) {
		do_explain(ctl, p, m);
	} else if (strcmp(cmd, "trigger") == 0) {
		do_trigger(ctl, p, m);
	} else if (strcmp(cmd, "conditions") == 0) {
		do_conditions(ctl, p, m);
	} else if (strcmp(cmd, "ack") == 0) {
		do_ack(ctl, p, m);
	} else {
		ctl->d->stats.ctl_bad++;
		klog_throttled(&ctl->bad_log, LOG_WARNING, "control: unknown command from pid %d",
			       (int)p->pid);
		p->ops->reply(p, "err", "unknown command");
	}
	return 0;
}

void kdaemon_ctl_bad(struct kdaemon_ctl *ctl, struct kctl_peer *p, enum kctl_bad why,
		     const char *buf, size_t len)
{
	static const char *const what[] = {
		[KCTL_BAD_MALFORMED] = "malformed message",
		[KCTL_BAD_TOO_LONG] = "message too long",
		[KCTL_BAD_EMPTY] = "empty message",
	};
	/* valid or not, a post counts in the client's numbering of its posts */
	bool post = len >= 5 && memcmp(buf, "post", 5) == 0;
	resolve_staged(ctl); /* answered in order */
	ctl->d->stats.ctl_bad++;
	klog_throttled(&ctl->bad_log, LOG_WARNING, "control: %s (%zu bytes) from pid %d", what[why],
		       len, (int)p->pid);
	p->posts += post;
	reply_send_error(p, post, what[why], NULL);
}

void kdaemon_ctl_forget(struct kdaemon_ctl *ctl, struct kctl_peer *p)
{
	for (struct staged_send *e = ctl->staged; e; e = e->next)
		if (e->p == p)
			e->p = NULL; /* handled all the same; nobody to answer */
	forget_waits(ctl, p);
	/* the devices it has not reported yet are not */
	ksource_udev_trigger_free(TAKE_PTR(p->trigger));
	if (!p->monitor)
		return;
	if (p->prev)
		p->prev->next = p->next;
	else
		ctl->monitors = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->prev = p->next = NULL;
	p->monitor = false;
}

/* send --wait: what became of its event's rules, told as each is over. */

/* Before the event goes in: its waiter, and the first line of the reply. */
static struct waiter *arm_wait(struct kdaemon_ctl *ctl, struct kctl_peer *p, enum kevent_source src,
			       uint64_t seqnum)
{
	struct waiter *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	*w = (struct waiter){.next = ctl->waiters, .p = p, .src = src, .seqnum = seqnum};
	ctl->waiters = w;
	ctl->arming = w;
	ctl->armed_runs = 0;
	char text[64];
	snprintf(text, sizeof(text), "event seqnum %" PRIu64, seqnum);
	p->ops->reply(p, "data", text);
	return w;
}

/* After kdaemon_submit() returned rc: unless its job is done already, or
 * will be, the answer. */
/* The waiter being armed goes, unanswered; whether there was one. */
static bool drop_arming(struct kdaemon_ctl *ctl)
{
	struct waiter *w = ctl->arming;
	ctl->arming = NULL;
	if (!w)
		return false;
	for (struct waiter **pw = &ctl->waiters; *pw; pw = &(*pw)->next)
		if (*pw == w) {
			*pw = w->next;
			break;
		}
	free(w);
	return true;
}

static void end_wait(struct kdaemon_ctl *ctl, struct kctl_peer *p, int rc)
{
	if (!ctl->arming)
		return; /* its job was over before kdaemon_submit() returned: answered */
	if (rc == 0 && ctl->armed_runs && !ctl->d->stopping) {
		ctl->arming = NULL;
		p->ops->flush(p);
		return; /* on_done() answers */
	}
	(void)drop_arming(ctl);
	if (rc < 0)
		p->ops->reply(p, "err", strerror(-rc));
	else if (ctl->d->stopping)
		p->ops->reply(p, "err", "keventd is stopping: the event is not handled");
	else {
		p->ops->reply(p, "data", "no rule runs anything for it");
		p->ops->reply(p, "ok", "0");
	}
}

static struct waiter **find_wait(struct kdaemon_ctl *ctl, uint64_t serial)
{
	struct waiter **w = &ctl->waiters;
	while (*w && (*w)->serial != serial)
		w = &(*w)->next;
	return *w ? w : NULL;
}

static void forget_waits(struct kdaemon_ctl *ctl, struct kctl_peer *p)
{
	for (struct waiter **w = &ctl->waiters; *w;) {
		if ((*w)->p != p) {
			w = &(*w)->next;
			continue;
		}
		struct waiter *gone = *w;
		*w = gone->next;
		free(gone);
	}
}

static void on_report(void *userdata, uint64_t serial, const struct krun_report *rep)
{
	struct kdaemon_ctl *ctl = userdata;
	/* a unit's end comes after its job: nobody waits for it any more */
	struct waiter **w = rep->job ? find_wait(ctl, serial) : NULL;
	/* a transient rule's run is its unit's start: the unit runs on */
	if (!w || (rep->outcome == KRUN_STARTED && !rep->unit))
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_put_escaped(&sb, rep->rule->name);
	strbuf_puts(&sb, ": ");
	khistory_put_report(&sb, rep);
	if (rep->outcome == KRUN_START_FAILED || rep->outcome == KRUN_KILLED ||
	    (rep->outcome == KRUN_EXITED && rep->status != 0))
		(*w)->failed++;
	if (!sb.oom)
		(*w)->p->ops->reply((*w)->p, "data", strbuf_str(&sb));
	/* the handler's own words: a data line for each of its last lines */
	for (const char *t = rep->stderr_tail; t && *t;) {
		const char *nl = strchr(t, '\n');
		size_t len = nl ? (size_t)(nl - t) : strlen(t);
		strbuf_reset(&sb);
		strbuf_puts(&sb, "  stderr: ");
		_cleanup_free_ char *line = strndup(t, len);
		if (line)
			strbuf_put_escaped(&sb, line);
		if (!sb.oom)
			(*w)->p->ops->reply((*w)->p, "data", strbuf_str(&sb));
		t += len + (nl ? 1 : 0);
	}
	(*w)->p->ops->flush((*w)->p);
}

/* The last reply of a waiter whose job is over; not_run: its rules that
 * a stop left out. */
static void answer_done(struct kdaemon_ctl *ctl, const struct kjob *job, size_t not_run)
{
	struct waiter **w = find_wait(ctl, job->serial), *done = w ? *w : NULL;
	if (!done)
		return;
	char text[128];
	/* cut short by a stop, and kept in the journal: the next start runs it
	 * again, which this client cannot wait for here */
	bool kept = not_run && job->ev->journal_ref;
	if (not_run) {
		snprintf(text, sizeof(text), "%zu rule(s) not run: keventd is stopping%s", not_run,
			 kept ? "; the event is kept in its journal" : "");
		done->p->ops->reply(done->p, "data", text);
		done->failed += (unsigned)not_run;
	}
	snprintf(text, sizeof(text), "%u", done->failed);
	done->p->ops->reply(done->p, "ok", kept ? KCTL_WAIT_REDELIVERED : text);
	done->p->ops->flush(done->p);
	*w = done->next;
	if (ctl->arming == done)
		ctl->arming = NULL;
	free(done);
}

static void on_done(void *userdata, const struct kjob *job)
{
	answer_done(userdata, job, job->not_run);
}

void kdaemon_ctl_dropped(struct kdaemon_ctl *ctl, const struct kjob *job)
{
	if (ctl && !job->deferred)
		answer_done(ctl, job, job->n_rules - job->next);
}

/* The control socket's own fields of status. */
static void on_status(void *userdata, struct kstatus_extra *x)
{
	struct kdaemon_ctl *ctl = userdata;
	x->clients = kctl_server_clients(ctl->srv);
	x->monitor_dropped = ctl->monitor_dropped;
}

/* Whether one of the rules matched is the filter's (or it names none). */
static bool monitor_rule_passes(const struct kfilter *f, const struct krule *const *rules, size_t n)
{
	for (size_t i = 0; f->rule[0] && i < n; i++)
		if (strcmp(rules[i]->name, f->rule) == 0)
			return true;
	return !f->rule[0];
}

/* Sends one event line (and the rules it matched) to every monitor. */
static void on_event(void *userdata, const struct kobs_event *e)
{
	struct kdaemon_ctl *ctl = userdata;
	const struct kevent *ev = e->ev;
	const struct krule *const *rules = e->rules;
	size_t n = e->n_rules;
	if (ctl->arming && !ctl->arming->seen && ev->source == ctl->arming->src &&
	    ev->seqnum == ctl->arming->seqnum) {
		ctl->arming->seen = true;
		ctl->arming->serial = ctl->d->serial;
		for (size_t i = 0; i < n; i++)
			ctl->armed_runs += krule_runs_something(rules[i]) && !rules[i]->debounce_ms;
	}
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf json = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf record = STRBUF_INIT;
	for (struct kctl_peer *p = ctl->monitors, *next; p; p = next) {
		next = p->next;
		if (p->ops->full(p)) {
			/* a slow monitor loses lines, never the daemon its pace */
			p->dropped++;
			ctl->monitor_dropped++;
			continue;
		}
		if (p->dropped) {
			char note[80];
			snprintf(note, sizeof(note),
				 "(%" PRIu64 " events not shown: monitor too slow)", p->dropped);
			p->ops->reply(p, "data", note);
			p->dropped = 0;
		}
		if (!kfilter_event(&p->filter, ev->source, ev->type) ||
		    !monitor_rule_passes(&p->filter, rules, n))
			continue;
		struct strbuf *sb = p->record ? &record : p->json ? &json : &text;
		if (!sb->len && p->record)
			kmonitor_record(sb, ev);
		else if (!sb->len)
			kmonitor_line(sb, ev, rules, n, p->json);
		if (!sb->oom)
			p->ops->reply(p, "data", sb->buf);
		p->ops->flush(p);
	}
}

/* The transport's clients as peers. */

static struct kctl_client *client_of(const struct kctl_peer *p)
{
	return p->userdata;
}

static void peer_reply(struct kctl_peer *p, const char *kind, const char *text)
{
	kctl_client_reply(client_of(p), kind, text);
}

static void peer_reply_data(struct kctl_peer *p, const char *text)
{
	kctl_client_reply_data(client_of(p), text);
}

static bool peer_full(const struct kctl_peer *p)
{
	return kctl_client_full(client_of(p));
}

static void peer_flush(struct kctl_peer *p)
{
	kctl_client_flush(client_of(p));
}

static void peer_subscribe(struct kctl_peer *p)
{
	kctl_client_set_subscriber(client_of(p), true);
}

static void peer_stream(struct kctl_peer *p, struct kctl_stream *s)
{
	kctl_client_stream(client_of(p), s);
}

static const struct kctl_peer_ops peer_ops = {
	.reply = peer_reply,
	.reply_data = peer_reply_data,
	.full = peer_full,
	.flush = peer_flush,
	.subscribe = peer_subscribe,
	.stream = peer_stream,
};

static int srv_opened(void *userdata, struct kctl_client *c)
{
	(void)userdata;
	struct kctl_peer *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = (struct kctl_peer){.ops = &peer_ops,
				.userdata = c,
				.pid = kctl_client_pid(c),
				.uid = kctl_client_uid(c)};
	kctl_client_set_userdata(c, p);
	return 0;
}

static void srv_closed(void *userdata, struct kctl_client *c)
{
	struct kctl_peer *p = kctl_client_userdata(c);
	kdaemon_ctl_forget(userdata, p);
	free(p);
}

static int srv_request(void *userdata, struct kctl_client *c, const struct kctl_msg *m,
		       bool may_park)
{
	return kdaemon_ctl_request(userdata, kctl_client_userdata(c), m, may_park);
}

static void srv_bad(void *userdata, struct kctl_client *c, enum kctl_bad why, const char *buf,
		    size_t len)
{
	kdaemon_ctl_bad(userdata, kctl_client_userdata(c), why, buf, len);
}

static void srv_refused(void *userdata, pid_t pid, uid_t uid, enum kctl_refusal why)
{
	struct kdaemon_ctl *ctl = userdata;
	struct kstats *st = &ctl->d->stats;
	/* clang-format off */
	uint64_t *counter[] = {
		[KCTL_REFUSED_PEER] = &st->ctl_refused,
		[KCTL_REFUSED_FULL] = &st->ctl_over_limit,
		[KCTL_REFUSED_RESERVED] = &st->ctl_root_slot,
		[KCTL_REFUSED_USER] = &st->ctl_over_user,
	};
	/* clang-format on */
	(*counter[why])++;
	switch (why) {
	case KCTL_REFUSED_PEER:
		klog_throttled(&ctl->refused_log, LOG_WARNING,
			       "control: refused peer pid %d uid %d: not root, nor keventd's "
			       "user, nor in the control group",
			       (int)pid, (int)uid);
		break;
	case KCTL_REFUSED_FULL:
		klog_throttled(&ctl->refused_log, LOG_WARNING,
			       "control: too many clients (%d), refusing pid %d", KCTL_MAX_CLIENTS,
			       (int)pid);
		break;
	case KCTL_REFUSED_RESERVED:
		klog_throttled(&ctl->refused_log, LOG_WARNING,
			       "control: too many clients (%d, the last kept for root), refusing "
			       "pid %d uid %d",
			       KCTL_MAX_CLIENTS - 1, (int)pid, (int)uid);
		break;
	case KCTL_REFUSED_USER:
		klog_throttled(&ctl->refused_log, LOG_WARNING,
			       "control: too many clients of uid %d (%d), refusing pid %d",
			       (int)uid, KCTL_MAX_PER_UID, (int)pid);
		break;
	}
}

static void srv_dropped(void *userdata, struct kctl_client *c, uint64_t idle_ns)
{
	struct kdaemon_ctl *ctl = userdata;
	ctl->d->stats.ctl_idle_dropped++;
	klog_throttled(&ctl->refused_log, LOG_WARNING,
		       "control: closing the connection of pid %d uid %d, idle for %llus, to make "
		       "room for a new one",
		       (int)kctl_client_pid(c), (int)kctl_client_uid(c),
		       (unsigned long long)(idle_ns / 1000000000ull));
}

static size_t srv_room(void *userdata)
{
	struct kdaemon_ctl *ctl = userdata;
	size_t room = kdaemon_room(ctl->d, KEVENT_SOURCE_SOCKET);
	ctl->held_for_staged |= room <= ctl->n_staged && ctl->n_staged > 0;
	return room > ctl->n_staged ? room - ctl->n_staged : 0;
}

/* an "ok" means journaled: the round's events are written before it goes */
static void srv_before_send(void *userdata)
{
	struct kdaemon_ctl *ctl = userdata;
	kdaemon_journal_flush(ctl->d);
}

/* the sends and posts of a client's batch are answered at its end, so a
 * client that hung up after them still gets the answers */
static void srv_taken(void *userdata)
{
	resolve_staged(userdata);
}

static const struct kctl_server_ops srv_ops = {
	.opened = srv_opened,
	.closed = srv_closed,
	.request = srv_request,
	.bad = srv_bad,
	.refused = srv_refused,
	.dropped = srv_dropped,
	.room = srv_room,
	.before_send = srv_before_send,
	.taken = srv_taken,
};

/* The "socket" source: pausing is the parking of each request (see
 * kdaemon_ctl_request()); resuming lets the parked ones in. */

static void src_pause(struct ksource *s, bool pause)
{
	struct kdaemon_ctl *ctl = container_of(s, struct kdaemon_ctl, src);
	if (!pause && ctl->srv)
		kctl_server_resume(ctl->srv);
}

static void src_stop(struct ksource *s)
{
	kdaemon_ctl_stop(container_of(s, struct kdaemon_ctl, src));
}

static void src_describe(struct ksource *s, struct strbuf *out)
{
	const struct kdaemon_ctl *ctl = container_of(s, struct kdaemon_ctl, src);
	if (!ctl->srv || !ctl->d->cfg.control_path) {
		strbuf_puts(out, "no control socket");
		return;
	}
	strbuf_puts(out, "the control socket ");
	strbuf_put_escaped(out, ctl->d->cfg.control_path);
	size_t n = kctl_server_clients(ctl->srv);
	strbuf_printf(out, ", %zu client%s", n, n == 1 ? "" : "s");
}

static void src_free(struct ksource *s)
{
	(void)s; /* owned by the daemon as d->ctl */
}

int kdaemon_ctl_new(struct kdaemon *d, const char *path, gid_t gid, struct kdaemon_ctl **out)
{
	struct kdaemon_ctl *ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->d = d;
	ctl->staged_tail = &ctl->staged;
	ctl->bad_log =
		(struct klog_throttle){.name = "control", .what = "bad requests", .counted = true};
	ctl->refused_log = (struct klog_throttle){
		.name = "control", .what = "refused or dropped connections", .counted = true};
	d->resolve_staged = resolve_staged;
	d->resolve_userdata = ctl;
	/* past the numbers of the events a keventd before this one gave */
	(void)kseqfile_open(&ctl->seq, d->state);
	kseqfile_seen(&ctl->seq, d->socket_seq_replayed);
	ctl->src = (struct ksource){.name = "socket",
				    .kind = KEVENT_SOURCE_SOCKET,
				    .pause = src_pause,
				    .stop = src_stop,
				    .describe = src_describe,
				    .free = src_free};
	int rc = path ? kctl_server_new(d->loop, path, gid, &srv_ops, ctl, &ctl->srv) : 0;
	if (rc == 0)
		rc = kdaemon_observe(d, &(struct kobserver){.name = "control",
							    .event = on_event,
							    .status = on_status,
							    .report = on_report,
							    .done = on_done,
							    .userdata = ctl});
	if (rc < 0) {
		kdaemon_ctl_free(ctl);
		return rc;
	}
	*out = ctl;
	return 0;
}

void kdaemon_ctl_stop(struct kdaemon_ctl *ctl)
{
	if (!ctl)
		return;
	resolve_staged(ctl);
	/* the waiters of runs still going: the connection closes now */
	for (struct waiter *w = ctl->waiters; w; w = w->next) {
		w->p->ops->reply(w->p, "err",
				 "keventd is stopping: its running handlers end, not waited for");
		w->p->ops->flush(w->p);
	}
	kctl_server_stop(ctl->srv);
}

void kdaemon_ctl_free(struct kdaemon_ctl *ctl)
{
	if (!ctl)
		return;
	resolve_staged(ctl);
	if (ctl->d->resolve_userdata == ctl)
		ctl->d->resolve_staged = NULL;
	while (ctl->waiters) {
		struct waiter *w = ctl->waiters;
		ctl->waiters = w->next;
		free(w);
	}
	kseqfile_close(&ctl->seq);
	kctl_server_free(ctl->srv);
	free(ctl);
}

struct ksource *kdaemon_ctl_source(struct kdaemon_ctl *ctl)
{
	return &ctl->src;
}

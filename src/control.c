// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket: the "socket" event source (keventctl send) and the
 * admin commands (monitor, reload, status).  SOCK_SEQPACKET keeps messages
 * whole; peers are admitted by SO_PEERCRED; every client has a bounded
 * output queue, and there is a cap on clients, so a peer that never reads,
 * sends garbage or opens many connections cannot stall the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "proto.h"

#define MAX_CLIENTS	 64
#define OUTQ_MAX	 1024 /* messages queued to one client */
#define READS_PER_WAKEUP 64
#define RECV_BATCH	 16 /* messages per recvmmsg() */
#define SEND_BATCH	 64 /* replies per sendmmsg() */
#define CHUNK		 (KCTL_MSG_MAX - 64)

struct outmsg {
	struct outmsg *next;
	size_t len;
	char data[];
};

struct client {
	struct kcontrol *ctl;
	int fd;
	struct kio *io;
	uid_t uid;
	pid_t pid;
	bool monitor, json;
	struct outmsg *head, *tail;
	size_t queued;
	uint64_t dropped; /* monitor lines dropped since the last notice */
	char *parked;	  /* a send or post waiting for room in the queue */
	size_t parked_len;
	uint64_t posts; /* post requests read, to name the one an error is about */
	bool eof;	/* it shut down its side: every request read, replies go on */
	bool gone;	/* it cannot be written to: its replies are dropped */
	struct client *prev, *next;
};

struct kcontrol {
	struct kdaemon *d;
	struct ksource src;
	int fd;
	struct kio *io;
	char *path;
	struct client *clients;
	size_t n_clients;
	size_t n_monitors;
	bool paused, stopped;
	struct ktimer *resume;
	uint64_t seqnum;
	char *rbuf; /* RECV_BATCH receive buffers, allocated when first needed */
};

static void client_free(struct client *c)
{
	struct kcontrol *ctl = c->ctl;
	if (c->prev)
		c->prev->next = c->next;
	else
		ctl->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	ctl->n_clients--;
	if (c->monitor)
		ctl->n_monitors--;
	kio_free(c->io);
	close(c->fd);
	while (c->head) {
		struct outmsg *m = c->head;
		c->head = m->next;
		free(m);
	}
	free(c->parked);
	free(c);
}

static void update_events(struct client *c)
{
	uint32_t ev = 0;
	if (!c->io)
		return; /* hung up with a parked send: see on_client() */
	/* read unless parked on a full daemon queue or backed up on our replies */
	if (!c->parked && !c->eof && (c->monitor || c->queued < OUTQ_MAX) && !c->ctl->stopped)
		ev |= EPOLLIN;
	if (c->head && !c->gone)
		ev |= EPOLLOUT;
	kio_set_events(c->io, ev);
}

static void drop_replies(struct client *c)
{
	while (c->head) {
		struct outmsg *m = c->head;
		c->head = m->next;
		free(m);
	}
	c->tail = NULL;
	c->queued = 0;
}

/* Frees a client that has nothing left to do: all its requests read (end
 * of file) and handled (none parked), all its replies sent or undeliverable.
 * Until then a client that hung up is kept: what it sent before it went is
 * still handled, and what it is owed still sent if it only shut down its
 * writing side.  Returns whether it was freed. */
static bool client_done(struct client *c)
{
	if (!c->eof || c->parked || (c->head && !c->gone))
		return false;
	client_free(c);
	return true;
}

/* Sends what can be sent now.  A peer that cannot take replies any more is
 * marked gone, and its replies dropped; the client itself is not freed here
 * (see client_done()). */
static void flush(struct client *c)
{
	/* a storm of sends is answered by a storm of "ok": one sendmmsg() for
	 * up to SEND_BATCH of them instead of one send() each */
	struct mmsghdr mm[SEND_BATCH];
	struct iovec iov[SEND_BATCH];
	while (c->head) {
		unsigned n = 0;
		for (struct outmsg *m = c->head; m && n < SEND_BATCH; m = m->next, n++) {
			iov[n] = (struct iovec){.iov_base = m->data, .iov_len = m->len};
			mm[n] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[n], .msg_iovlen = 1}};
		}
		int sent = sendmmsg(c->fd, mm, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (sent < 0) {
			c->gone = true;
			break;
		}
		for (int i = 0; i < sent; i++) {
			struct outmsg *m = c->head;
			c->head = m->next;
			c->queued--;
			free(m);
		}
		if (!c->head)
			c->tail = NULL;
		if ((unsigned)sent < n)
			break; /* the socket's buffer is full: wait for EPOLLOUT */
	}
	if (c->gone)
		drop_replies(c);
	update_events(c);
}

static void enqueue(struct client *c, const char *const *fields, size_t n)
{
	/* encoded straight into the queued message (what kctl_encode() does,
	 * with one allocation instead of three per reply) */
	size_t lens[KCTL_FIELDS_MAX], len = 0;
	if (n > KCTL_FIELDS_MAX || c->gone)
		return;
	for (size_t i = 0; i < n; i++) {
		lens[i] = strlen(fields[i]) + 1;
		len += lens[i];
	}
	if (len > KCTL_MSG_MAX)
		return;
	struct outmsg *m = malloc(sizeof(*m) + len);
	if (!m)
		return;
	m->next = NULL;
	m->len = len;
	for (size_t i = 0, off = 0; i < n; off += lens[i], i++)
		memcpy(m->data + off, fields[i], lens[i]);
	if (c->tail)
		c->tail->next = m;
	else
		c->head = m;
	c->tail = m;
	c->queued++;
}

static void reply(struct client *c, const char *kind, const char *text)
{
	const char *f[] = {kind, text};
	enqueue(c, f, text ? 2 : 1);
}

/* Sends text as data messages cut at line ends where possible. */
static void reply_data(struct client *c, const char *text)
{
	size_t len = strlen(text);
	while (len) {
		size_t n = len;
		if (n > CHUNK) {
			n = CHUNK;
			const char *nl = memrchr(text, '\n', n);
			if (nl)
				n = (size_t)(nl - text) + 1;
		}
		char *part = strndup(text, n);
		if (!part)
			return;
		reply(c, "data", part);
		free(part);
		text += n;
		len -= n;
	}
}

/* The error reply to a send, or to the client's post number c->posts
 * ("post N: ..."): a post is answered only when it fails, so the text says
 * which one. */
static void reply_send_error(struct client *c, bool post, const char *what, const char *why)
{
	struct strbuf sb = STRBUF_INIT;
	if (post)
		strbuf_printf(&sb, "post %" PRIu64 ": ", c->posts);
	strbuf_printf(&sb, "%s%s%s", what, why ? ": " : "", why ? why : "");
	reply(c, "err", sb.oom ? what : strbuf_str(&sb));
	strbuf_release(&sb);
}

/* send (answered "ok SEQNUM") and post (answered only on failure). */
static void do_send(struct client *c, const struct kctl_msg *m, bool post)
{
	struct kcontrol *ctl = c->ctl;
	struct kdaemon *d = ctl->d;
	if (post)
		c->posts++;
	if (m->n < 4 || m->n > 5) {
		d->stats.ctl_bad++;
		reply_send_error(c, post,
				 post ? "post takes TYPE OBJECT SIGNAL [PAYLOAD]"
				      : "send takes TYPE OBJECT SIGNAL [PAYLOAD]",
				 NULL);
		return;
	}
	if (!(d->cfg.sources & (1u << KEVENT_SOURCE_SOCKET))) {
		reply_send_error(c, post,
				 "the socket source is off (keventd --sources): event refused",
				 NULL);
		return;
	}
	int type = kevent_type_from_name(m->f[1]);
	const char *why = "unknown event type";
	struct kevent *ev = NULL;
	int rc = type < 0 ? -EINVAL
			  : kevent_new(type, m->f[2], m->f[3], m->n == 5 ? m->f[4] : "",
				       KEVENT_SOURCE_SOCKET, ctl->seqnum + 1, now_realtime_ns(),
				       NULL, 0, &ev, &why);
	if (rc == -EINVAL) {
		kdaemon_reject(d, KEVENT_SOURCE_SOCKET, why);
		reply_send_error(c, post, "invalid event", why);
		return;
	}
	if (rc < 0) {
		reply_send_error(c, post, strerror(-rc), NULL);
		return;
	}
	ctl->seqnum++;
	uint64_t v = ev->seqnum; /* the event is kdaemon_submit()'s from here */
	rc = kdaemon_submit(d, ev);
	if (rc < 0 || post) {
		if (rc < 0)
			reply_send_error(c, post, strerror(-rc), NULL);
		return;
	}
	/* the decimal sequence number, without snprintf (a storm pays it per event) */
	char seq[24], *p = seq + sizeof(seq) - 1;
	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	reply(c, "ok", p);
}

static void do_command(struct client *c, const struct kctl_msg *m)
{
	struct kdaemon *d = c->ctl->d;
	const char *cmd = m->f[0];
	if (strcmp(cmd, "send") == 0 || strcmp(cmd, "post") == 0) {
		do_send(c, m, cmd[0] == 'p');
	} else if (strcmp(cmd, "sync") == 0) {
		/* requests are handled in order: every earlier post is in */
		char n[24];
		snprintf(n, sizeof(n), "%" PRIu64, c->posts);
		reply(c, "ok", n);
	} else if (strcmp(cmd, "monitor") == 0) {
		if (!c->monitor)
			c->ctl->n_monitors++;
		c->monitor = true;
		c->json = m->n > 1 && strcmp(m->f[1], "json") == 0;
		reply(c, "ok", NULL);
	} else if (strcmp(cmd, "status") == 0) {
		struct strbuf sb = STRBUF_INIT;
		int format = m->n > 1 ? kstatus_format_from_name(m->f[1]) : KSTATUS_TEXT;
		kdaemon_status(d, format < 0 ? KSTATUS_TEXT : (enum kstatus_format)format, &sb);
		reply_data(c, strbuf_str(&sb));
		reply(c, sb.oom ? "err" : "ok", sb.oom ? "out of memory" : NULL);
		strbuf_release(&sb);
	} else if (strcmp(cmd, "reload") == 0) {
		struct strbuf sb = STRBUF_INIT;
		log_info("reload requested over the control socket (pid %d)", (int)c->pid);
		int rc = kdaemon_reload(d, &sb);
		reply_data(c, strbuf_str(&sb));
		reply(c, rc < 0 ? "err" : "ok", rc < 0 ? strerror(-rc) : NULL);
		strbuf_release(&sb);
	} else {
		d->stats.ctl_bad++;
		log_warning("control: unknown command from pid %d", (int)c->pid);
		reply(c, "err", "unknown command");
	}
}

/* Whether a message, valid or not, is a post: it counts in the client's
 * numbering of its posts either way. */
static bool is_post(const char *buf, size_t len)
{
	return len >= 5 && memcmp(buf, "post", 5) == 0;
}

/* Lets the parked request in: when the queue has room again, and when a
 * request is read after it (in the same recvmmsg(): the batch is sized to
 * the daemon's room, so this does not happen in practice), then over the
 * queue's limit (flow control, not a hard cap), so that a client's
 * requests keep their order: a sync must come after its posts, an error
 * reply after the replies before it. */
static void unpark(struct client *c)
{
	char *parked = c->parked;
	struct kctl_msg pm;
	if (!parked)
		return;
	c->parked = NULL;
	if (kctl_decode(parked, c->parked_len, &pm) == 0)
		do_command(c, &pm);
	free(parked);
}

/* A message keventd cannot take: counted, logged and answered. */
static void refuse_message(struct client *c, const char *buf, size_t len, const char *what)
{
	unpark(c);
	c->ctl->d->stats.ctl_bad++;
	log_warning("control: %s (%zu bytes) from pid %d", what, len, (int)c->pid);
	bool post = is_post(buf, len);
	c->posts += post;
	reply_send_error(c, post, what, NULL);
}

/* Handles one received message; returns false if the client must wait. */
static bool handle(struct client *c, char *buf, size_t len)
{
	unpark(c);
	struct kcontrol *ctl = c->ctl;
	struct kctl_msg m;
	if (kctl_decode(buf, len, &m) < 0) {
		refuse_message(c, buf, len, "malformed message");
		return true;
	}
	if ((strcmp(m.f[0], "send") == 0 || strcmp(m.f[0], "post") == 0) &&
	    !kdaemon_accepting(ctl->d)) {
		c->parked = malloc(len);
		if (c->parked) {
			memcpy(c->parked, buf, len);
			c->parked_len = len;
			return false;
		}
		/* no memory to hold it: in it goes, over the queue's limit */
	}
	do_command(c, &m);
	return true;
}

/* Whether the zero-length entry k of a recvmmsg() batch is the end of the
 * stream rather than an empty message: the peer has shut down, and nothing
 * but more ends (the batch's later entries, the socket's queue) follows. */
static bool at_eof(int fd, const struct mmsghdr *mm, int k, int got)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};
	int queued = 0;
	for (int j = k + 1; j < got; j++)
		if (mm[j].msg_len)
			return false;
	if (poll(&p, 1, 0) == 0)
		return false;
	return ioctl(fd, SIOCINQ, &queued) < 0 || queued == 0;
}

/* Reads what the client sent, as many messages a call and a wake-up as
 * may be taken now.  Returns false when it has been freed. */
static bool read_requests(struct client *c, int fd)
{
	struct kcontrol *ctl = c->ctl;
	char buf[KCTL_MSG_MAX + 1];
	if (!ctl->rbuf)
		ctl->rbuf = malloc((size_t)RECV_BATCH * (KCTL_MSG_MAX + 1));
	for (int i = 0; i < READS_PER_WAKEUP && !c->parked && !c->eof;) {
		if (!c->monitor && c->queued >= OUTQ_MAX)
			break; /* it does not read its replies: stop reading its requests */
		/* as many messages as may be taken now: no more than the room in
		 * its reply queue and in the daemon's event queue (so a batch
		 * never has to park more than one send), one when there is none */
		size_t want = ctl->rbuf ? RECV_BATCH : 1, room = kdaemon_room(ctl->d);
		if (!c->monitor && OUTQ_MAX - c->queued < want)
			want = OUTQ_MAX - c->queued;
		if (room < want)
			want = room ? room : 1;
		if ((size_t)(READS_PER_WAKEUP - i) < want)
			want = (size_t)(READS_PER_WAKEUP - i);
		struct mmsghdr mm[RECV_BATCH];
		struct iovec iov[RECV_BATCH];
		for (size_t k = 0; k < want; k++) {
			iov[k] = (struct iovec){
				.iov_base = ctl->rbuf ? ctl->rbuf + k * (KCTL_MSG_MAX + 1) : buf,
				.iov_len = KCTL_MSG_MAX + 1};
			mm[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
		}
		int got = recvmmsg(fd, mm, (unsigned)want, MSG_DONTWAIT | MSG_TRUNC, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (got <= 0) {
			c->eof = c->gone = true; /* a reset connection */
			break;
		}
		i += got;
		for (int k = 0; k < got && !c->eof; k++) {
			size_t n = mm[k].msg_len; /* with MSG_TRUNC: the whole length */
			if (n == 0 && at_eof(fd, mm, k, got))
				c->eof = true;
			else if (n == 0)
				refuse_message(c, "", 0, "empty message");
			else if (n > KCTL_MSG_MAX)
				refuse_message(c, iov[k].iov_base, n, "message too long");
			else
				handle(c, iov[k].iov_base, n);
		}
		if ((size_t)got < want)
			break; /* drained */
	}
	flush(c);
	return !client_done(c);
}

static void on_client(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct client *c = userdata;
	(void)io;
	if (events & EPOLLOUT) {
		flush(c);
		if (client_done(c))
			return;
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	if (c->parked && events & (EPOLLHUP | EPOLLERR)) {
		/* it hung up while its send waits for room.  What it sent still
		 * goes in (resume_parked() reads the rest), but a hung-up socket is
		 * always ready: stop polling it, or the loop spins until the queue
		 * has room */
		kio_free(c->io);
		c->io = NULL;
		return;
	}
	read_requests(c, fd);
}

static bool peer_allowed(struct kcontrol *ctl, int fd, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
		return false;
	if (cred->uid == 0 || cred->uid == geteuid())
		return true;
	gid_t want = ctl->d->cfg.control_gid;
	if (want == (gid_t)-1)
		return false;
	if (cred->gid == want)
		return true;
	gid_t groups[256];
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == want)
			return true;
	return false;
}

static void refuse(int fd, const char *why)
{
	struct strbuf sb = STRBUF_INIT;
	const char *f[] = {"err", why};
	if (kctl_encode(&sb, f, 2) == 0) {
		ssize_t _unused_ n = send(fd, sb.buf, sb.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	strbuf_release(&sb);
	/* a request left unread at close() makes the peer's next read fail with
	 * ECONNRESET instead of showing it our answer: discard what it sent */
	char buf[64];
	for (int i = 0; i < 64 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC) > 0; i++)
		;
	close(fd);
}

static void on_accept(struct kio *io, int lfd, uint32_t events, void *userdata)
{
	struct kcontrol *ctl = userdata;
	(void)io;
	(void)events;
	for (int i = 0; i < 16; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warning("control: accept: %m");
			return;
		}
		struct ucred cred = {0};
		if (!peer_allowed(ctl, fd, &cred)) {
			ctl->d->stats.ctl_refused++;
			log_warning("control: refused peer pid %d uid %d: not root, nor keventd's "
				    "user, nor in the control group",
				    (int)cred.pid, (int)cred.uid);
			refuse(fd, "permission denied");
			continue;
		}
		if (ctl->n_clients >= MAX_CLIENTS) {
			ctl->d->stats.ctl_over_limit++;
			log_warning("control: too many clients (%d), refusing pid %d", MAX_CLIENTS,
				    (int)cred.pid);
			refuse(fd, "too many clients");
			continue;
		}
		struct client *c = calloc(1, sizeof(*c));
		if (!c || kloop_add_io(ctl->d->loop, fd, EPOLLIN, on_client, c, &c->io) < 0) {
			free(c);
			close(fd);
			continue;
		}
		c->ctl = ctl;
		c->fd = fd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		c->next = ctl->clients;
		if (ctl->clients)
			ctl->clients->prev = c;
		ctl->clients = c;
		ctl->n_clients++;
	}
}

static void resume_parked(struct ktimer *t, void *userdata)
{
	struct kcontrol *ctl = userdata;
	(void)t;
	ctl->resume = NULL;
	for (struct client *c = ctl->clients, *next; c; c = next) {
		next = c->next;
		if (!c->parked)
			continue;
		if (!kdaemon_accepting(ctl->d))
			break;
		unpark(c);
		/* it hung up meanwhile (see on_client()): watch it again, so that
		 * the rest of what it sent is read */
		if (!c->io &&
		    kloop_add_io(ctl->d->loop, c->fd, EPOLLIN, on_client, c, &c->io) < 0) {
			client_free(c); /* cannot watch it any more */
			continue;
		}
		read_requests(c, c->fd);
	}
}

static void ctl_pause(struct ksource *s, bool pause)
{
	struct kcontrol *ctl = (struct kcontrol *)((char *)s - offsetof(struct kcontrol, src));
	ctl->paused = pause;
	/* parked sends go on from the loop, not from inside whoever resumed us */
	if (!pause && !ctl->resume)
		kloop_add_timer(ctl->d->loop, 0, resume_parked, ctl, &ctl->resume);
}

void kcontrol_stop(struct kcontrol *ctl)
{
	if (ctl->stopped)
		return;
	ctl->stopped = true;
	kio_free(ctl->io);
	ctl->io = NULL;
	if (ctl->fd >= 0)
		close(ctl->fd);
	ctl->fd = -1;
	if (ctl->path)
		unlink(ctl->path);
	while (ctl->clients)
		client_free(ctl->clients);
}

static void ctl_stop(struct ksource *s)
{
	kcontrol_stop((struct kcontrol *)((char *)s - offsetof(struct kcontrol, src)));
}

void kcontrol_free(struct kcontrol *ctl)
{
	if (!ctl)
		return;
	kcontrol_stop(ctl);
	ktimer_cancel(ctl->resume);
	free(ctl->path);
	free(ctl->rbuf);
	free(ctl);
}

static void ctl_free(struct ksource *s)
{
	(void)s; /* owned by the daemon as d->control */
}

size_t kcontrol_clients(const struct kcontrol *ctl)
{
	return ctl->n_clients;
}

/* A monitor line goes out as one "data\0LINE\0" message. */
#define LINE_ROOM     (KCTL_MSG_MAX - sizeof("data") - 1)
#define BRIEF_PAYLOAD 512

/* Drops what was added to sb since it was len bytes long. */
static void strbuf_cut(struct strbuf *sb, size_t len)
{
	if (sb->buf && len < sb->len) {
		sb->len = len;
		sb->buf[len] = '\0';
	}
}

/* Appends the names of the rules, as many as leave room for the line's end. */
static void monitor_rules(struct strbuf *sb, const struct krule *const *rules, size_t n, bool json)
{
	for (size_t i = 0; i < n; i++) {
		size_t before = sb->len;
		strbuf_puts(sb, i ? "," : "");
		if (json)
			strbuf_json(sb, rules[i]->name);
		else
			strbuf_puts(sb, rules[i]->name);
		if (sb->len > LINE_ROOM - 32) {
			strbuf_cut(sb, before);
			strbuf_puts(sb, json ? "],\"rules_truncated\":true" : ",...");
			return;
		}
	}
	if (json)
		strbuf_putc(sb, ']');
}

static void monitor_line_as(struct strbuf *sb, const struct kevent *ev, const char *payload,
			    bool brief, const struct krule *const *rules, size_t n, bool json)
{
	if (json) {
		strbuf_printf(sb,
			      "{\"seqnum\":%" PRIu64 ",\"timestamp\":%" PRIu64 ",\"source\":\"%s\","
			      "\"type\":\"%s\",\"object\":",
			      ev->seqnum, ev->timestamp, kevent_source_name(ev->source),
			      kevent_type_name(ev->type));
		strbuf_json(sb, ev->object);
		strbuf_puts(sb, ",\"signal\":");
		strbuf_json(sb, ev->signal);
		strbuf_puts(sb, ",\"payload\":");
		strbuf_json(sb, payload);
		if (brief)
			strbuf_puts(sb, ",\"truncated\":true");
		strbuf_puts(sb, ",\"properties\":{");
		for (size_t i = 0; i < ev->n_props && !brief; i++) {
			strbuf_puts(sb, i ? "," : "");
			strbuf_json(sb, ev->props[i].key);
			strbuf_putc(sb, ':');
			strbuf_json(sb, ev->props[i].value);
		}
		strbuf_puts(sb, "},\"rules\":[");
		monitor_rules(sb, rules, n, true);
		strbuf_putc(sb, '}');
		return;
	}
	strbuf_printf(sb, "%s seq=%" PRIu64 " %s %s %s payload=", kevent_source_name(ev->source),
		      ev->seqnum, kevent_type_name(ev->type), ev->object, ev->signal);
	strbuf_quote(sb, payload);
	strbuf_puts(sb, brief ? "..." : "");
	strbuf_puts(sb, n ? " rules=" : " rules=(none)");
	monitor_rules(sb, rules, n, false);
}

static void monitor_line(struct strbuf *sb, const struct kevent *ev,
			 const struct krule *const *rules, size_t n, bool json)
{
	monitor_line_as(sb, ev, ev->payload, false, rules, n, json);
	if (sb->len <= LINE_ROOM || sb->oom)
		return;
	/* too long for one message once escaped: the start of the payload (not
	 * cutting a UTF-8 character), and no properties, which are in it */
	size_t len = strlen(ev->payload), cut = len < BRIEF_PAYLOAD ? len : BRIEF_PAYLOAD;
	while (cut && cut < len && ((unsigned char)ev->payload[cut] & 0xc0) == 0x80)
		cut--;
	_cleanup_free_ char *brief = strndup(ev->payload, cut);
	strbuf_reset(sb);
	if (!brief) {
		sb->oom = true;
		return;
	}
	monitor_line_as(sb, ev, brief, true, rules, n, json);
}

void kcontrol_monitor(struct kcontrol *ctl, const struct kevent *ev,
		      const struct krule *const *rules, size_t n)
{
	if (!ctl->n_monitors)
		return;
	struct strbuf text = STRBUF_INIT, json = STRBUF_INIT;
	for (struct client *c = ctl->clients, *next; c; c = next) {
		next = c->next;
		if (!c->monitor)
			continue;
		if (c->queued >= OUTQ_MAX) {
			/* a slow monitor loses lines, never the daemon its pace */
			c->dropped++;
			ctl->d->stats.monitor_dropped++;
			continue;
		}
		if (c->dropped) {
			char note[80];
			snprintf(note, sizeof(note),
				 "(%" PRIu64 " events not shown: monitor too slow)", c->dropped);
			reply(c, "data", note);
			c->dropped = 0;
		}
		struct strbuf *sb = c->json ? &json : &text;
		if (!sb->len)
			monitor_line(sb, ev, rules, n, c->json);
		if (!sb->oom)
			reply(c, "data", sb->buf);
		flush(c);
	}
	strbuf_release(&text);
	strbuf_release(&json);
}

static int make_parent(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	char *dir = dirname(copy);
	struct stat st;
	if (stat(dir, &st) == 0)
		return 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int listen_on(const char *path, gid_t gid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int rc = make_parent(path);
	if (rc < 0)
		return rc;
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a socket file left by a keventd that died: reuse the path; a live one: refuse */
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		int live = connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(probe);
		if (live)
			return -EADDRINUSE;
	}
	unlink(path);
	mode_t old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0)
		return -errno;
	if (gid != (gid_t)-1 && (chown(path, (uid_t)-1, gid) < 0 || chmod(path, 0660) < 0))
		return -errno;
	if (listen(fd, 128) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int kcontrol_new(struct kdaemon *d, struct kcontrol **out, struct ksource **src)
{
	struct kcontrol *ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->d = d;
	ctl->fd = -1;
	ctl->src = (struct ksource){.name = "socket",
				    .kind = KEVENT_SOURCE_SOCKET,
				    .pause = ctl_pause,
				    .stop = ctl_stop,
				    .free = ctl_free};
	int rc = listen_on(d->cfg.control_path, d->cfg.control_gid);
	if (rc < 0) {
		free(ctl);
		return rc;
	}
	ctl->fd = rc;
	ctl->path = strdup(d->cfg.control_path);
	if (!ctl->path || kloop_add_io(d->loop, ctl->fd, EPOLLIN, on_accept, ctl, &ctl->io) < 0) {
		kcontrol_free(ctl);
		return -ENOMEM;
	}
	*out = ctl;
	*src = &ctl->src;
	return 0;
}

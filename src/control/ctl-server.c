// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket's transport (ctl-server.h).  SOCK_SEQPACKET keeps
 * messages whole; peers are admitted by SO_PEERCRED; every client has a
 * bound on the bytes queued to it, and the clients a bound on their
 * number, per user and in all, with a slot kept for root: a peer that never
 * reads, sends garbage or opens many connections cannot stall the daemon,
 * grow it without bound or lock root out.
 */
#include "ctl-server.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "fault.h"
#include "log.h"

#define READS_PER_WAKEUP 64
#define RECV_BATCH	 16 /* messages per recvmmsg() */
#define SEND_BATCH	 64 /* replies per sendmmsg() */
#define CHUNK		 KCTL_DATA_CHUNK

/* A reply queued to a client, or a message read from it and held. */
struct outmsg {
	struct outmsg *next;
	size_t len; /* held: as received (0: empty, over KCTL_MSG_MAX: too long) */
	char data[];
};

struct kctl_client {
	struct kctl_server *srv;
	int fd;
	struct kio *io;
	uid_t uid;
	pid_t pid;
	void *userdata; /* the owner's */
	bool subscriber;
	struct outmsg *head, *tail;
	size_t queued;	  /* bytes, as KCTL_OUTQ_BYTES counts them */
	uint64_t last_ns; /* when it connected or last sent a message */
	char *parked;	  /* a request waiting for kctl_server_resume() */
	size_t parked_len;
	/* messages read in a batch after it went over its bound or parked:
	 * taken, in order, before anything else is read */
	struct outmsg *held, *held_tail;
	bool eof;  /* it shut down its side: every request read, replies go on */
	bool gone; /* it cannot be written to: its replies are dropped */
	/* a reply sent as it reads (kctl_client_stream()): its text rendered
	 * and not yet cut into replies; what others sent meanwhile, to follow
	 * it (counted in later_bytes, not in queued) */
	struct kctl_stream *stream;
	struct strbuf pending;
	size_t pending_off; /* pending's bytes before it are sent: cut_chunk() */
	bool stream_done;   /* its text is all rendered */
	bool streaming;	    /* queueing its own replies now */
	struct outmsg *later, *later_tail;
	size_t later_bytes;
	struct kctl_client *prev, *next;
};

struct kctl_server {
	struct kloop *loop;
	const struct kctl_server_ops *ops;
	void *userdata;
	gid_t gid;
	int fd;
	struct kio *io;
	char *path;
	dev_t dev; /* of the socket at path, which only is unlinked at the end */
	ino_t ino;
	struct kctl_client *clients;
	size_t n_clients;
	bool stopped;
	struct ktimer *resume;
	char *rbuf; /* RECV_BATCH receive buffers, allocated when first needed */
};

static size_t cost(const struct outmsg *m)
{
	return m->len + KCTL_MSG_COST;
}

static void free_list(struct outmsg *m)
{
	while (m) {
		struct outmsg *next = m->next;
		free(m);
		m = next;
	}
}

static void end_stream(struct kctl_client *c)
{
	if (c->stream)
		c->stream->free(c->stream);
	c->stream = NULL;
	strbuf_release(&c->pending);
	c->pending_off = 0;
	c->stream_done = false;
}

static void drop_replies(struct kctl_client *c)
{
	free_list(c->head);
	c->head = c->tail = NULL;
	c->queued = 0;
	end_stream(c);
	free_list(c->later);
	c->later = c->later_tail = NULL;
	c->later_bytes = 0;
}

static uint64_t now_ns(const struct kctl_server *s)
{
	return s->ops->now ? s->ops->now(s->userdata) : now_monotonic_ns();
}

/* Whether the client's next message may be taken now: none parked, and
 * its replies under the bound. */
static bool may_take(const struct kctl_client *c)
{
	return !c->parked && !c->stream && c->queued < KCTL_OUTQ_BYTES;
}

static void client_free(struct kctl_client *c)
{
	struct kctl_server *s = c->srv;
	s->ops->closed(s->userdata, c);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n_clients--;
	kio_free(c->io);
	close(c->fd);
	drop_replies(c);
	free(c->parked);
	free_list(c->held);
	free(c);
}

static void wake(struct kctl_server *s);

static void update_events(struct kctl_client *c)
{
	uint32_t ev = 0;
	if (!c->io)
		return; /* hung up with a parked request: see on_client() */
	/* read unless parked or backed up on our replies (what was held is
	 * taken first, see wake()) */
	if (may_take(c) && !c->eof && !c->srv->stopped)
		ev |= EPOLLIN;
	if ((c->head || c->stream) && !c->gone)
		ev |= EPOLLOUT;
	kio_set_events(c->io, ev);
}

/* Frees a client that has nothing left to do: all its requests read (end
 * of file) and handled (none parked), all its replies sent or undeliverable.
 * Until then a client that hung up is kept: what it sent before it went is
 * still handled, and what it is owed still sent if it only shut down its
 * writing side.  Returns whether it was freed. */
static bool client_done(struct kctl_client *c)
{
	if (!c->eof || c->parked || c->held || ((c->head || c->stream) && !c->gone))
		return false;
	client_free(c);
	return true;
}

static void produce(struct kctl_client *c);

/* Sends what the socket takes; returns whether it is full. */
static bool send_queued(struct kctl_client *c)
{
	/* a storm of sends is answered by a storm of "ok": one sendmmsg() for
	 * up to SEND_BATCH of them instead of one send() each */
	struct mmsghdr mm[SEND_BATCH];
	struct iovec iov[SEND_BATCH];
	if (c->head && c->srv->ops->before_send)
		c->srv->ops->before_send(c->srv->userdata);
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
			return true;
		if (sent < 0) {
			c->gone = true;
			return true;
		}
		if (sent > 0)
			kfault("replied");
		for (int i = 0; i < sent; i++) {
			struct outmsg *m = c->head;
			c->head = m->next;
			c->queued -= cost(m);
			free(m);
		}
		if (!c->head)
			c->tail = NULL;
		if ((unsigned)sent < n)
			return true; /* the socket's buffer is full: wait for EPOLLOUT */
	}
	return false;
}

/* Sends what can be sent now, and what more of a stream the socket takes.
 * A peer that cannot take replies any more is marked gone, and its replies
 * dropped; the client itself is not freed here (see client_done()). */
void kctl_client_flush(struct kctl_client *c)
{
	/* a stream's next parts are made only once what was queued is in
	 * the socket: what keventd holds for it is what the client has not
	 * read, up to the bound */
	while (!send_queued(c) && c->stream && !c->gone) {
		size_t before = c->queued;
		produce(c);
		if (c->queued == before && c->stream)
			break; /* nothing made: never spin */
	}
	if (c->gone)
		drop_replies(c);
	update_events(c);
	if (c->held && may_take(c))
		wake(c->srv); /* it read enough of its replies: take what waits */
}

void kctl_client_send(struct kctl_client *c, const char *const *fields, size_t n)
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
	if (c->stream && !c->streaming) {
		/* not the stream's: it goes after the stream's last reply */
		if (c->later_tail)
			c->later_tail->next = m;
		else
			c->later = m;
		c->later_tail = m;
		c->later_bytes += cost(m);
		return;
	}
	if (c->tail)
		c->tail->next = m;
	else
		c->head = m;
	c->tail = m;
	c->queued += cost(m);
}

/* Queues the first data reply of the stream's pending text (from
 * pending_off), cut where kctl_client_reply_data() would cut the whole
 * text: at the last line end within CHUNK bytes, once more than CHUNK
 * bytes are pending, or all that is left once the text is all rendered.
 * The text cut is passed over, not moved: what is left is moved to the
 * front once, before the stream renders more (compact()).  Returns
 * whether it queued one. */
static bool cut_chunk(struct kctl_client *c)
{
	struct strbuf *p = &c->pending;
	size_t n = p->len - c->pending_off;
	if (!n || (n <= CHUNK && !c->stream_done))
		return false;
	char *at = p->buf + c->pending_off;
	if (n > CHUNK) {
		n = CHUNK;
		const char *nl = memrchr(at, '\n', n);
		if (nl)
			n = (size_t)(nl - at) + 1;
	}
	char keep = at[n];
	at[n] = '\0';
	kctl_client_reply(c, "data", at);
	at[n] = keep;
	c->pending_off += n;
	return true;
}

/* The pending text not yet cut moved to the front of its buffer. */
static void compact(struct kctl_client *c)
{
	struct strbuf *p = &c->pending;
	if (!c->pending_off)
		return;
	memmove(p->buf, p->buf + c->pending_off, p->len - c->pending_off + 1);
	p->len -= c->pending_off;
	c->pending_off = 0;
}

/* The stream is over: its last reply, then what waited for it. */
static void finish_stream(struct kctl_client *c)
{
	const char *kind = "ok", *text = NULL;
	if (c->pending.oom) {
		kind = "err";
		text = "out of memory";
	} else {
		c->stream->end(c->stream, &kind, &text);
	}
	kctl_client_reply(c, kind, text);
	end_stream(c);
	if (c->later) {
		if (c->tail)
			c->tail->next = c->later;
		else
			c->head = c->later;
		c->tail = c->later_tail;
		c->queued += c->later_bytes;
		c->later = c->later_tail = NULL;
		c->later_bytes = 0;
	}
}

/* Renders and queues the stream's next replies while c's queue is under
 * the bound: what keventd holds for it is at most KCTL_OUTQ_BYTES, one
 * reply of CHUNK bytes, and the text of one part not yet cut. */
static void produce(struct kctl_client *c)
{
	c->streaming = true;
	while (c->stream && c->queued < KCTL_OUTQ_BYTES) {
		if (cut_chunk(c))
			continue;
		if (c->stream_done || c->pending.oom) {
			c->stream_done = true;
			if (!cut_chunk(c))
				finish_stream(c);
			continue;
		}
		compact(c);
		if (!c->stream->next(c->stream, &c->pending))
			c->stream_done = true;
	}
	c->streaming = false;
}

void kctl_client_stream(struct kctl_client *c, struct kctl_stream *s)
{
	if (c->gone || c->stream) {
		/* nobody to send it to; or (never) one already going */
		s->free(s);
		return;
	}
	c->stream = s;
	c->pending = (struct strbuf)STRBUF_INIT;
	c->pending_off = 0;
	c->stream_done = false;
	produce(c);
}

void kctl_client_reply(struct kctl_client *c, const char *kind, const char *text)
{
	const char *f[] = {kind, text};
	kctl_client_send(c, f, text ? 2 : 1);
}

void kctl_client_reply_data(struct kctl_client *c, const char *text)
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
		_cleanup_free_ char *part = strndup(text, n);
		if (!part)
			return;
		kctl_client_reply(c, "data", part);
		text += n;
		len -= n;
	}
}

/* Lets the parked request in, when there is room again or when a message
 * is handled after it: a client's requests keep their order, so a sync
 * comes after its posts, an error reply after the replies before it. */
static void unpark(struct kctl_client *c)
{
	_cleanup_free_ char *parked = TAKE_PTR(c->parked);
	struct kctl_msg m;
	if (parked && kctl_decode(parked, c->parked_len, &m) == 0)
		(void)c->srv->ops->request(c->srv->userdata, c, &m, false);
}

static void bad_message(struct kctl_client *c, enum kctl_bad why, const char *buf, size_t len)
{
	unpark(c);
	c->srv->ops->bad(c->srv->userdata, c, why, buf, len);
}

/* Handles one received request. */
static void handle(struct kctl_client *c, char *buf, size_t len)
{
	struct kctl_server *s = c->srv;
	struct kctl_msg m;
	unpark(c);
	if (kctl_decode(buf, len, &m) < 0) {
		bad_message(c, KCTL_BAD_MALFORMED, buf, len);
		return;
	}
	if (s->ops->request(s->userdata, c, &m, true) != -EAGAIN)
		return;
	c->parked = malloc(len);
	if (!c->parked) {
		/* no memory to hold it: in it goes, over the owner's limit */
		(void)s->ops->request(s->userdata, c, &m, false);
		return;
	}
	memcpy(c->parked, buf, len);
	c->parked_len = len;
}

/* Takes one received message: len is its whole length (with MSG_TRUNC),
 * of which buf has at most KCTL_MSG_MAX + 1 bytes. */
static void take(struct kctl_client *c, char *buf, size_t len)
{
	if (len == 0)
		bad_message(c, KCTL_BAD_EMPTY, "", 0);
	else if (len > KCTL_MSG_MAX)
		bad_message(c, KCTL_BAD_TOO_LONG, buf, len);
	else
		handle(c, buf, len);
}

/* Keeps a message read when it may not be taken yet, for take_held(). */
static void hold(struct kctl_client *c, char *buf, size_t len)
{
	size_t have = len > KCTL_MSG_MAX ? KCTL_MSG_MAX + 1 : len;
	struct outmsg *m = malloc(sizeof(*m) + have);
	if (!m) {
		take(c, buf, len); /* no memory to hold it: in it goes, over the bound */
		return;
	}
	m->next = NULL;
	m->len = len;
	memcpy(m->data, buf, have);
	if (c->held_tail)
		c->held_tail->next = m;
	else
		c->held = m;
	c->held_tail = m;
}

/* Takes the held messages, in order, while they may be taken. */
static void take_held(struct kctl_client *c)
{
	while (c->held && may_take(c)) {
		_cleanup_free_ struct outmsg *m = c->held;
		c->held = m->next;
		if (!c->held)
			c->held_tail = NULL;
		take(c, m->data, m->len);
	}
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

/* How many messages to read in one call: no more than the owner's room
 * (so a batch never has to park more than one request), one when there
 * is none.  What is read after the client went over its bound is held. */
static size_t batch_size(const struct kctl_client *c, int left)
{
	struct kctl_server *s = c->srv;
	size_t want = s->rbuf ? RECV_BATCH : 1, room = s->ops->room(s->userdata);
	if (room < want)
		want = room ? room : 1;
	if ((size_t)left < want)
		want = (size_t)left;
	return want;
}

/* Takes what was held and reads what the client sent, as many messages a
 * call and a wake-up as may be taken now.  Returns false when it has been
 * freed. */
static bool read_requests(struct kctl_client *c)
{
	struct kctl_server *s = c->srv;
	char buf[KCTL_MSG_MAX + 1];
	if (!s->rbuf)
		s->rbuf = malloc((size_t)RECV_BATCH * (KCTL_MSG_MAX + 1));
	take_held(c);
	/* no more while it does not read its replies (monitor or not), or a
	 * request waits: the bound is KCTL_OUTQ_BYTES and the replies to
	 * one request */
	for (int i = 0; i < READS_PER_WAKEUP && may_take(c) && !c->held && !c->eof;) {
		size_t want = batch_size(c, READS_PER_WAKEUP - i);
		struct mmsghdr mm[RECV_BATCH];
		struct iovec iov[RECV_BATCH];
		for (size_t k = 0; k < want; k++) {
			iov[k] = (struct iovec){
				.iov_base = s->rbuf ? s->rbuf + k * (KCTL_MSG_MAX + 1) : buf,
				.iov_len = KCTL_MSG_MAX + 1};
			mm[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
		}
		int got = recvmmsg(c->fd, mm, (unsigned)want, MSG_DONTWAIT | MSG_TRUNC, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (got < 0 && errno == ECONNRESET) {
			/* it hung up with our replies unread: the kernel says so
			 * once, ahead of what it sent, which is still to be read */
			c->gone = true;
			drop_replies(c);
			i++;
			continue;
		}
		if (got <= 0) {
			c->eof = c->gone = true; /* a reset connection */
			break;
		}
		i += got;
		c->last_ns = now_ns(s);
		for (int k = 0; k < got; k++) {
			size_t n = mm[k].msg_len; /* with MSG_TRUNC: the whole length */
			if (n == 0 && at_eof(c->fd, mm, k, got)) {
				c->eof = true;
				break;
			}
			/* the rest of a batch that crossed the bound waits, in order */
			if (c->held || !may_take(c))
				hold(c, iov[k].iov_base, n);
			else
				take(c, iov[k].iov_base, n);
		}
		if ((size_t)got < want)
			break; /* drained */
	}
	if (s->ops->taken)
		s->ops->taken(s->userdata);
	kctl_client_flush(c);
	return !client_done(c);
}

static void on_client(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kctl_client *c = userdata;
	(void)io;
	(void)fd;
	/* a peer that hung up cannot take replies: finding out (gone) lets the
	 * rest of what it sent be read even while over its bound */
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
		kctl_client_flush(c);
		if (client_done(c))
			return;
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	if (c->parked && events & (EPOLLHUP | EPOLLERR)) {
		/* it hung up while its request waits for room.  What it sent still
		 * goes in (resume() reads the rest), but a hung-up socket is
		 * always ready: stop polling it, or the loop spins until there
		 * is room */
		kio_free(c->io);
		c->io = NULL;
		return;
	}
	read_requests(c);
}

/* Root and keventd's own user: not held to KCTL_MAX_PER_UID, and the only
 * ones the last slot is for. */
static bool privileged(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static bool peer_allowed(const struct kctl_server *s, int fd, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
		return false;
	if (privileged(cred->uid))
		return true;
	if (s->gid == (gid_t)-1)
		return false;
	if (cred->gid == s->gid)
		return true;
	gid_t groups[256];
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == s->gid)
			return true;
	return false;
}

static void refuse(int fd, const char *why)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *f[] = {"err", why};
	if (kctl_encode(&sb, f, 2) == 0)
		(void)!send(fd, sb.buf, sb.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	/* a request left unread at close() makes the peer's next read fail with
	 * ECONNRESET instead of showing it our answer: discard what it sent */
	char buf[64];
	for (int i = 0; i < 64 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC) > 0; i++)
		;
	close(fd);
}

static int client_new(struct kctl_server *s, int fd, const struct ucred *cred)
{
	struct kctl_client *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct kctl_client){
		.srv = s, .fd = fd, .uid = cred->uid, .pid = cred->pid, .last_ns = now_ns(s)};
	int rc = kloop_add_io(s->loop, fd, EPOLLIN, on_client, c, &c->io);
	if (rc == 0)
		rc = s->ops->opened(s->userdata, c);
	if (rc < 0) {
		kio_free(c->io);
		free(c);
		return rc;
	}
	c->next = s->clients;
	if (s->clients)
		s->clients->prev = c;
	s->clients = c;
	s->n_clients++;
	return 0;
}

static size_t clients_of(const struct kctl_server *s, uid_t uid)
{
	size_t n = 0;
	for (const struct kctl_client *c = s->clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/* The connection to close for room: of those (of uid, unless any) that
 * sent nothing that was read for KCTL_IDLE_NS, are not monitors and do not
 * wait for the daemon, the one silent longest.  NULL: none. */
static struct kctl_client *idlest(const struct kctl_server *s, bool any, uid_t uid, uint64_t now)
{
	struct kctl_client *best = NULL;
	for (struct kctl_client *c = s->clients; c; c = c->next) {
		if ((!any && c->uid != uid) || c->subscriber || c->parked ||
		    now - c->last_ns < KCTL_IDLE_NS)
			continue;
		if (!best || c->last_ns < best->last_ns)
			best = c;
	}
	return best;
}

/* Lets go of the clients that hung up before the loop got to it: a
 * connection closed just before a new one arrives must not keep it out. */
static void reap(struct kctl_server *s)
{
	struct pollfd p[KCTL_MAX_CLIENTS];
	struct kctl_client *cs[KCTL_MAX_CLIENTS];
	nfds_t n = 0;
	for (struct kctl_client *c = s->clients; c && n < KCTL_MAX_CLIENTS; c = c->next)
		if (c->io) {
			p[n] = (struct pollfd){.fd = c->fd, .events = POLLRDHUP};
			cs[n++] = c;
		}
	if (poll(p, n, 0) <= 0)
		return;
	for (nfds_t i = 0; i < n; i++) {
		if (!(p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			continue;
		kctl_client_flush(cs[i]); /* finds out whether it can take replies */
		if (!client_done(cs[i]))
			read_requests(cs[i]); /* frees it (only it) at its end */
	}
}

/*
 * Makes room for a peer of uid, or says why there is none.  Root and
 * keventd's own user may take every slot; anyone else all but the last,
 * and KCTL_MAX_PER_UID at most.  When the peer is over a limit, the
 * clients that already hung up go first, then the idlest connection that
 * counts against that limit.
 */
static int make_room(struct kctl_server *s, uid_t uid, enum kctl_refusal *why)
{
	bool priv = privileged(uid), reaped = false;
	for (;;) {
		if (!priv && clients_of(s, uid) >= KCTL_MAX_PER_UID)
			*why = KCTL_REFUSED_USER;
		else if (s->n_clients >= (size_t)KCTL_MAX_CLIENTS - !priv)
			*why = priv ? KCTL_REFUSED_FULL : KCTL_REFUSED_RESERVED;
		else
			return 0;
		if (!reaped) {
			reap(s);
			reaped = true;
			continue;
		}
		uint64_t now = now_ns(s);
		struct kctl_client *c = idlest(s, *why != KCTL_REFUSED_USER, uid, now);
		if (!c)
			return -EBUSY;
		s->ops->dropped(s->userdata, c, now - c->last_ns);
		client_free(c);
	}
}

static void on_accept(struct kio *io, int lfd, uint32_t events, void *userdata)
{
	/* clang-format off */
	static const char *const answer[] = {
		[KCTL_REFUSED_PEER] = "permission denied",
		[KCTL_REFUSED_FULL] = "too many clients",
		[KCTL_REFUSED_RESERVED] = "too many clients",
		[KCTL_REFUSED_USER] = "too many clients of this user",
	};
	/* clang-format on */
	struct kctl_server *s = userdata;
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
		enum kctl_refusal why = KCTL_REFUSED_PEER;
		if (!peer_allowed(s, fd, &cred) || make_room(s, cred.uid, &why) < 0) {
			s->ops->refused(s->userdata, cred.pid, cred.uid, why);
			refuse(fd, answer[why]);
		} else if (client_new(s, fd, &cred) < 0) {
			close(fd);
		}
	}
}

static void on_resume(struct ktimer *t, void *userdata)
{
	struct kctl_server *s = userdata;
	(void)t;
	s->resume = NULL;
	for (struct kctl_client *c = s->clients, *next; c; c = next) {
		next = c->next;
		if (c->parked) {
			if (!s->ops->room(s->userdata))
				continue;
			unpark(c);
			/* it hung up meanwhile (see on_client()): watch it again, so
			 * that the rest of what it sent is read */
			if (!c->io &&
			    kloop_add_io(s->loop, c->fd, EPOLLIN, on_client, c, &c->io) < 0) {
				client_free(c); /* cannot watch it any more */
				continue;
			}
		} else if (!c->held || !may_take(c)) {
			continue;
		}
		read_requests(c);
	}
}

static void wake(struct kctl_server *s)
{
	/* from the loop, not from inside whoever woke us */
	if (!s->resume && !s->stopped)
		(void)kloop_add_timer(s->loop, 0, on_resume, s, &s->resume);
}

void kctl_server_resume(struct kctl_server *s)
{
	wake(s);
}

void kctl_server_stop(struct kctl_server *s)
{
	if (!s || s->stopped)
		return;
	s->stopped = true;
	kio_free(s->io);
	s->io = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	kctl_unlink_own(s->path, s->dev, s->ino);
	ktimer_cancel(s->resume);
	s->resume = NULL;
	while (s->clients)
		client_free(s->clients);
}

void kctl_server_free(struct kctl_server *s)
{
	if (!s)
		return;
	kctl_server_stop(s);
	free(s->path);
	free(s->rbuf);
	free(s);
}

size_t kctl_server_clients(const struct kctl_server *s)
{
	return s ? s->n_clients : 0;
}

void kctl_client_set_userdata(struct kctl_client *c, void *userdata)
{
	c->userdata = userdata;
}

void *kctl_client_userdata(const struct kctl_client *c)
{
	return c->userdata;
}

pid_t kctl_client_pid(const struct kctl_client *c)
{
	return c->pid;
}

uid_t kctl_client_uid(const struct kctl_client *c)
{
	return c->uid;
}

void kctl_client_set_subscriber(struct kctl_client *c, bool subscriber)
{
	c->subscriber = subscriber;
}

bool kctl_client_full(const struct kctl_client *c)
{
	return c->stream || c->queued >= KCTL_OUTQ_BYTES;
}

size_t kctl_client_queued(const struct kctl_client *c)
{
	return c->queued;
}

int kctl_server_make_dir(const char *path, mode_t mode)
{
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	const char *dir = dirname(copy);
	if (mkdir(dir, mode) < 0)
		return errno == EEXIST ? 0 : -errno;
	/* made here: its mode, not the umask's */
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, mode) < 0)
		return -errno;
	return 0;
}

/* Says when the directory of path keeps the members of gid from searching
 * it, so from the socket: one that keventd did not make (a state
 * directory of mode 0700 that someone made before). */
static void check_dir_admits(const char *path, gid_t gid)
{
	_cleanup_free_ char *copy = strdup(path);
	struct stat st;
	if (gid == (gid_t)-1 || !copy || stat(dirname(copy), &st) < 0)
		return;
	if ((st.st_mode & S_IXOTH) || ((st.st_mode & S_IXGRP) && st.st_gid == gid))
		return;
	log_warning("control: %s (mode %04o) keeps the members of --control-group out of the "
		    "socket in it: give it mode %04o",
		    copy, (unsigned)(st.st_mode & 07777), KCTL_DIR_MODE);
}

static const char *file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISDIR(mode))
		return "a directory";
	return "a special file";
}

/* Clears path for bind(): nothing is there, or a socket nobody listens on
 * (left by a keventd that died), which is removed.  Anything else is not
 * ours to remove. */
static int clear_path(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_error("control: %s is %s, not a socket: refusing to replace it", path,
			  file_kind(st.st_mode));
		return -EEXIST;
	}
	_cleanup_close_ int probe =
		socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -errno;
	/* listening (EAGAIN: with a full backlog; EPROTOTYPE: not as SEQPACKET) */
	if (connect(probe, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno == EAGAIN ||
	    errno == EPROTOTYPE)
		return -EADDRINUSE;
	if (errno != ECONNREFUSED && errno != ENOENT)
		return -errno;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Binds fd to path as a socket of mode, and group gid unless (gid_t)-1.
 * The group and mode are the socket's as it is made (setfsgid(), the
 * umask): nothing follows the path afterwards, which could be another's
 * by then.  Only where that could not be (no CAP_SETGID, a set-group-ID
 * directory, a default ACL) are they set after, on the path without
 * following a symlink, before anyone may connect (listen() comes later). */
static int bind_as(int fd, const struct sockaddr_un *sa, mode_t mode, gid_t gid, dev_t *dev,
		   ino_t *ino)
{
	const char *path = sa->sun_path;
	gid_t fsgid = gid == (gid_t)-1 ? (gid_t)-1 : (gid_t)setfsgid(gid);
	mode_t old = umask(~mode & 0777);
	int rc = bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 ? -errno : 0;
	umask(old);
	if (fsgid != (gid_t)-1)
		(void)setfsgid(fsgid);
	if (rc < 0)
		return rc;
	struct stat st;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST; /* replaced under us */
	if ((gid != (gid_t)-1 && st.st_gid != gid &&
	     fchownat(AT_FDCWD, path, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) < 0) ||
	    ((st.st_mode & 07777) != mode &&
	     fchmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW) < 0)) {
		rc = -errno;
		(void)unlink(path);
		return rc;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

int kctl_listen(const char *path, mode_t mode, gid_t gid, dev_t *dev, ino_t *ino)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = clear_path(path, &sa);
	if (rc == 0)
		rc = bind_as(fd, &sa, mode, gid, dev, ino);
	if (rc < 0)
		return rc;
	if (listen(fd, 128) < 0)
		return -errno;
	return TAKE_FD(fd);
}

void kctl_unlink_own(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;
	if (path && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == dev &&
	    st.st_ino == ino)
		(void)unlink(path);
}

static int listen_on(struct kctl_server *s, const char *path)
{
	int rc = kctl_server_make_dir(path, KCTL_DIR_MODE); /* when the daemon did not */
	if (rc < 0)
		return rc;
	check_dir_admits(path, s->gid);
	return kctl_listen(path, s->gid == (gid_t)-1 ? 0600 : 0660, s->gid, &s->dev, &s->ino);
}

int kctl_server_new(struct kloop *loop, const char *path, gid_t gid,
		    const struct kctl_server_ops *ops, void *userdata, struct kctl_server **out)
{
	struct kctl_server *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct kctl_server){.loop = loop, .ops = ops, .userdata = userdata, .gid = gid};
	s->fd = listen_on(s, path);
	if (s->fd < 0) {
		int rc = s->fd;
		free(s);
		return rc;
	}
	s->path = strdup(path);
	if (!s->path || kloop_add_io(loop, s->fd, EPOLLIN, on_accept, s, &s->io) < 0) {
		kctl_server_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/* The system instance's side of the users socket (users-server.h). */
#include "users-server.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl-server.h"
#include "journal-rec.h"
#include "log.h"
#include "loop.h"
#include "util.h"

#define MAX_GROUPS 64

struct msg {
	char *data;
	size_t len;
};

struct peer {
	struct kusers_server *s;
	struct peer *next;
	int fd;
	struct kio *io;
	struct kusers_peer who;
	char *name;
	char *group_names[MAX_GROUPS];
	gid_t gids[MAX_GROUPS];
	/* the queue, a ring of KUSERS_QUEUE_MAX */
	struct msg q[KUSERS_QUEUE_MAX];
	size_t head, n, bytes;
	uint64_t drop_pending; /* dropped since the last notice sent */
};

struct kusers_server {
	struct kloop *loop;
	struct kusers_facts facts;
	int fd;
	struct kio *io;
	char *path;
	dev_t dev;
	ino_t ino;
	struct peer *peers;
	struct kusers_counts c;
	struct klog_throttle log;
};

static void peer_free(struct peer *p)
{
	kio_free(p->io);
	if (p->fd >= 0)
		close(p->fd);
	for (size_t i = 0; i < p->n; i++)
		free(p->q[(p->head + i) % KUSERS_QUEUE_MAX].data);
	free(p->name);
	for (size_t i = 0; i < p->who.n_groups; i++)
		free(p->group_names[i]);
	free(p);
}

static void drop_peer(struct peer *p, const char *why)
{
	struct kusers_server *s = p->s;
	for (struct peer **pp = &s->peers; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	s->c.peers--;
	log_info("users: the user instance of uid %u (pid %d) went: %s", (unsigned)p->who.uid,
		 (int)p->who.pid, why);
	peer_free(p);
}

/* Sends what is queued until the socket is full; false: p is gone. */
static bool flush_peer(struct peer *p)
{
	while (p->n || p->drop_pending) {
		char notice[sizeof(KUSERS_DROP_MAGIC) - 1 + sizeof(uint64_t)];
		const void *data;
		size_t len;
		if (p->drop_pending) {
			memcpy(notice, KUSERS_DROP_MAGIC, sizeof(KUSERS_DROP_MAGIC) - 1);
			memcpy(notice + sizeof(KUSERS_DROP_MAGIC) - 1, &p->drop_pending,
			       sizeof(uint64_t));
			data = notice;
			len = sizeof(notice);
		} else {
			data = p->q[p->head].data;
			len = p->q[p->head].len;
		}
		if (send(p->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
				break;
			drop_peer(p, strerror(errno));
			return false;
		}
		if (p->drop_pending) {
			p->drop_pending = 0;
			continue;
		}
		p->bytes -= len;
		free(p->q[p->head].data);
		p->head = (p->head + 1) % KUSERS_QUEUE_MAX;
		p->n--;
		p->s->c.sent++;
	}
	(void)kio_set_events(p->io, EPOLLIN | (p->n || p->drop_pending ? EPOLLOUT : 0));
	return true;
}

static void on_peer(struct kio *io, int fd, uint32_t events, void *userdata)
{
	(void)io;
	struct peer *p = userdata;
	if (events & EPOLLIN) {
		/* nothing flows from a user instance: its bytes are dropped */
		char buf[512];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			drop_peer(p, n == 0 ? "hung up" : strerror(errno));
			return;
		}
	}
	if (events & (EPOLLHUP | EPOLLERR)) {
		drop_peer(p, "hung up");
		return;
	}
	if (events & EPOLLOUT)
		(void)flush_peer(p);
}

/* Who the peer is: its uid and pid, its name and groups, looked up once. */
static int identify(struct peer *p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(p->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	p->who.uid = cred.uid;
	p->who.pid = cred.pid;
	char buf[4096];
	struct passwd pw, *pwp = NULL;
	(void)getpwuid_r(cred.uid, &pw, buf, sizeof(buf), &pwp);
	if (!(p->name = strdup(pwp ? pwp->pw_name : "")))
		return -ENOMEM;
	p->who.name = p->name;
	gid_t gids[MAX_GROUPS];
	len = sizeof(gids);
	size_t n = 0;
	gids[n++] = cred.gid;
	gid_t more[MAX_GROUPS];
	if (getsockopt(p->fd, SOL_SOCKET, SO_PEERGROUPS, more, &len) == 0)
		for (size_t i = 0; i < len / sizeof(gid_t) && n < MAX_GROUPS; i++)
			if (more[i] != cred.gid)
				gids[n++] = more[i];
	for (size_t i = 0; i < n; i++) {
		struct group gr, *grp = NULL;
		(void)getgrgid_r(gids[i], &gr, buf, sizeof(buf), &grp);
		if (!(p->group_names[i] = strdup(grp ? grp->gr_name : "")))
			return -ENOMEM;
		p->gids[i] = gids[i];
		p->who.n_groups = i + 1;
	}
	p->who.groups = (const char *const *)p->group_names;
	p->who.gids = p->gids;
	return 0;
}

static size_t peers_of(const struct kusers_server *s, uid_t uid)
{
	size_t n = 0;
	for (const struct peer *p = s->peers; p; p = p->next)
		n += p->who.uid == uid;
	return n;
}

static void on_accept(struct kio *io, int fd, uint32_t events, void *userdata)
{
	(void)io;
	(void)events;
	struct kusers_server *s = userdata;
	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;
		struct peer *p = calloc(1, sizeof(*p));
		if (!p) {
			close(cfd);
			continue;
		}
		p->s = s;
		p->fd = cfd;
		int rc = identify(p);
		const char *why = rc < 0			   ? strerror(-rc)
				  : s->c.peers >= KUSERS_MAX_PEERS ? "too many user instances"
				  : peers_of(s, p->who.uid) >= KUSERS_MAX_PEERS_PER_UID
					  ? "too many instances of this user"
					  : NULL;
		if (!why && kloop_add_io(s->loop, cfd, EPOLLIN, on_peer, p, &p->io) < 0)
			why = "out of memory";
		if (why) {
			s->c.refused++;
			klog_throttled(&s->log, LOG_WARNING, "users: uid %u refused: %s",
				       (unsigned)p->who.uid, why);
			peer_free(p);
			continue;
		}
		p->next = s->peers;
		s->peers = p;
		s->c.peers++;
		log_info("users: the user instance of %s (uid %u, pid %d) connected",
			 p->name[0] ? p->name : "?", (unsigned)p->who.uid, (int)p->who.pid);
	}
}

int kusers_server_new(struct kloop *loop, const char *path, const struct kusers_facts *facts,
		      struct kusers_server **out)
{
	struct kusers_server *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct kusers_server){.loop = loop, .facts = *facts, .fd = -1};
	s->log = (struct klog_throttle){.name = "users", .what = "refusals", .counted = true};
	int rc = kctl_server_make_dir(path, KCTL_DIR_MODE);
	if (rc == 0)
		rc = s->fd = kctl_listen(path, 0666, (gid_t)-1, &s->dev, &s->ino);
	if (rc >= 0 && !(s->path = strdup(path)))
		rc = -ENOMEM;
	if (rc >= 0)
		rc = kloop_add_io(loop, s->fd, EPOLLIN, on_accept, s, &s->io);
	if (rc < 0) {
		if (s->fd >= 0) { /* listening: its socket goes too */
			kctl_unlink_own(path, s->dev, s->ino);
			close(s->fd);
		}
		free(s->path);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void kusers_server_free(struct kusers_server *s)
{
	if (!s)
		return;
	while (s->peers) {
		struct peer *p = s->peers;
		s->peers = p->next;
		peer_free(p);
	}
	kio_free(s->io);
	kctl_unlink_own(s->path, s->dev, s->ino);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}

/* Queues data for p, the oldest dropped to make room. */
static void enqueue(struct peer *p, const struct strbuf *rec)
{
	while (p->n && (p->n == KUSERS_QUEUE_MAX || p->bytes + rec->len > KUSERS_QUEUE_BYTES_MAX)) {
		p->bytes -= p->q[p->head].len;
		free(p->q[p->head].data);
		p->head = (p->head + 1) % KUSERS_QUEUE_MAX;
		p->n--;
		p->drop_pending++;
		p->s->c.dropped++;
	}
	char *copy = malloc(rec->len);
	if (!copy) {
		p->drop_pending++;
		p->s->c.dropped++;
		return;
	}
	memcpy(copy, rec->buf, rec->len);
	p->q[(p->head + p->n) % KUSERS_QUEUE_MAX] = (struct msg){copy, rec->len};
	p->n++;
	p->bytes += rec->len;
}

void kusers_server_offer(struct kusers_server *s, const struct kevent *ev,
			 const struct krule *const *rules, size_t n)
{
	if (!s || !s->peers)
		return;
	_cleanup_strbuf_ struct strbuf rec = STRBUF_INIT;
	for (struct peer *p = s->peers, *next; p; p = next) {
		next = p->next;
		enum kusers_why why;
		if (!kusers_may_see(&p->who, &s->facts, ev, rules, n, &why)) {
			s->c.withheld++;
			continue;
		}
		if (!rec.len) {
			/* the event as the user instance takes it: none of the
			 * system's own bookkeeping (its rules, its journal) */
			struct kevent copy = *ev;
			copy.journal_ids = NULL;
			copy.n_journal_ids = 0;
			copy.redelivered = false;
			kjrec_encode(&rec, &copy);
			if (rec.oom)
				return;
		}
		enqueue(p, &rec);
		(void)flush_peer(p);
	}
}

void kusers_server_counts(const struct kusers_server *s, struct kusers_counts *out)
{
	*out = s ? s->c : (struct kusers_counts){0};
}

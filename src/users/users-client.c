// SPDX-License-Identifier: GPL-2.0-or-later
/* The user instance's side of the users socket (users-client.h). */
#include "users-client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "journal-rec.h"
#include "log.h"
#include "loop.h"
#include "users-server.h"
#include "util.h"

#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS	 30000
#define HELD_RETRY_MS	 50
#define MSG_MAX		 (sizeof(struct kjrec_hdr) + KJREC_BODY_MAX)

struct kusers_client {
	struct ksink sink;
	char *path;
	int fd;
	struct kio *io;
	struct ktimer *timer;
	unsigned backoff_ms;
	bool outage_said;
	struct kevent *held; /* waiting for room in its source's share */
	struct kusers_client_counts c;
	char *buf;
};

static void try_connect(struct kusers_client *c);
static void later(struct kusers_client *c, unsigned ms);

static void on_timer(struct ktimer *t, void *userdata)
{
	(void)t;
	struct kusers_client *c = userdata;
	c->timer = NULL;
	if (c->fd < 0)
		try_connect(c);
	else if (c->held && ksink_room(&c->sink, c->held->source) > 0) {
		(void)ksink_submit(&c->sink, TAKE_PTR(c->held));
		(void)kio_set_events(c->io, EPOLLIN);
	} else if (c->held) {
		later(c, HELD_RETRY_MS);
	}
}

static void later(struct kusers_client *c, unsigned ms)
{
	ktimer_cancel(c->timer);
	c->timer = NULL;
	(void)kloop_add_timer(c->sink.loop, now_monotonic_ns() + ms * 1000000ull, on_timer, c,
			      &c->timer);
}

static void disconnect(struct kusers_client *c, const char *why)
{
	kio_free(TAKE_PTR(c->io));
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	kevent_free(TAKE_PTR(c->held));
	if (c->c.connected)
		log_notice("users: the system instance at %s went (%s): connecting again", c->path,
			   why);
	c->c.connected = false;
	c->backoff_ms = BACKOFF_FIRST_MS;
	later(c, c->backoff_ms);
}

/* One message: an event, handed on, or a drop notice, counted. */
static void take(struct kusers_client *c, const char *data, size_t len)
{
	const size_t magic = sizeof(KUSERS_DROP_MAGIC) - 1;
	if (len == magic + sizeof(uint64_t) && memcmp(data, KUSERS_DROP_MAGIC, magic) == 0) {
		uint64_t n;
		memcpy(&n, data + magic, sizeof(n));
		c->c.dropped_at_system += n;
		log_warning("users: the system instance dropped %llu event(s) for this user: "
			    "its queue for us was full",
			    (unsigned long long)n);
		return;
	}
	struct kjrec r;
	struct kevent *ev = NULL;
	const char *why = "not one record";
	kjrec_next(data, len, 0, &r);
	if (r.kind != KJREC_RECORD || r.off != 0 || r.len != len ||
	    kjrec_decode(r.body, r.body_len, &ev, &why) < 0) {
		c->c.bad++;
		log_warning("users: a message of the system instance is not an event (%s)", why);
		return;
	}
	c->c.received++;
	ev->injected = true; /* the system's, not numbered by a source of ours */
	if (ksink_room(&c->sink, ev->source) == 0) {
		c->held = ev;
		(void)kio_set_events(c->io, 0);
		later(c, HELD_RETRY_MS);
		return;
	}
	(void)ksink_submit(&c->sink, ev);
}

static void on_io(struct kio *io, int fd, uint32_t events, void *userdata)
{
	(void)io;
	struct kusers_client *c = userdata;
	for (int i = 0; i < 64 && !c->held && (events & EPOLLIN); i++) {
		ssize_t n = recv(fd, c->buf, MSG_MAX, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			disconnect(c, n == 0 ? "hung up" : strerror(errno));
			return;
		}
		if ((size_t)n > MSG_MAX) {
			c->c.bad++;
			continue;
		}
		take(c, c->buf, (size_t)n);
	}
	if (events & (EPOLLHUP | EPOLLERR) && !(events & EPOLLIN))
		disconnect(c, "hung up");
}

static void try_connect(struct kusers_client *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    kloop_add_io(c->sink.loop, fd, EPOLLIN, on_io, c, &c->io) == 0) {
		c->fd = fd;
		c->c.connected = true;
		c->c.connects++;
		c->outage_said = false;
		log_info("users: connected to the system instance at %s", c->path);
		return;
	}
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (!c->outage_said)
		log_notice("users: no system instance at %s yet (%s): trying again", c->path,
			   strerror(e));
	c->outage_said = true;
	later(c, c->backoff_ms);
	c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
}

int kusers_client_new(const struct ksink *sink, const char *path, struct kusers_client **out)
{
	struct kusers_client *c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path)) || !(c->buf = malloc(MSG_MAX))) {
		kusers_client_free(c);
		return -ENOMEM;
	}
	c->sink = *sink;
	c->fd = -1;
	c->backoff_ms = BACKOFF_FIRST_MS;
	try_connect(c);
	*out = c;
	return 0;
}

void kusers_client_free(struct kusers_client *c)
{
	if (!c)
		return;
	kio_free(c->io);
	if (c->fd >= 0)
		close(c->fd);
	ktimer_cancel(c->timer);
	kevent_free(c->held);
	free(c->path);
	free(c->buf);
	free(c);
}

void kusers_client_counts(const struct kusers_client *c, struct kusers_client_counts *out)
{
	*out = c ? c->c : (struct kusers_client_counts){0};
}

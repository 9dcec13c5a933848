// SPDX-License-Identifier: GPL-2.0-or-later
/* The control socket's transport on real sockets (docs/control-protocol.md):
 * the bound in bytes on what is queued to a client, monitor or not; the
 * slot kept for root, the limit per user, and the idle connection closed
 * for room, on a clock the test sets; what may be at the socket's path. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-server.h"
#include "testutil.h"
#include "util.h"

#define SEC	  1000000000ull
#define OTHER_GID 65534 /* any group: root's children join it to connect */

struct conn;

/* A server, and what its owner was told. */
struct srv {
	struct kloop *loop;
	struct kctl_server *s;
	char *dir, *path;
	uint64_t clock; /* what the server's now() reads */
	size_t room;
	size_t opened, closed, requests, parks;
	size_t refused[KCTL_REFUSED_USER + 1];
	size_t dropped;
	size_t dropped_id[8];	  /* the opened() order (from 1) of each dropped one */
	size_t max_queued;	  /* the most queued to a client after a request */
	size_t max_reply;	  /* the most one request's replies added */
	size_t streamed;	  /* bytes of text a stream rendered */
	size_t stream_max_queued; /* the most queued to its client while it renders */
	size_t streams_freed;
	bool (*until)(struct srv *t);
};

static void check(struct srv *t)
{
	if (t->until && t->until(t)) {
		t->until = NULL;
		kloop_exit(t->loop, 0);
	}
}

static int srv_opened(void *userdata, struct kctl_client *c)
{
	struct srv *t = userdata;
	kctl_client_set_userdata(c, (void *)(uintptr_t)++t->opened);
	check(t);
	return 0;
}

static void srv_closed(void *userdata, struct kctl_client *c)
{
	struct srv *t = userdata;
	(void)c;
	t->closed++;
	check(t);
}

/* A stream of n bytes of text, lines of 100 (99 'x' and a newline, as
 * "big" sends), rendered in parts of 777 bytes that fall anywhere in a
 * line, then "ok ID". */
struct test_stream {
	struct kctl_stream s;
	struct srv *t;
	struct kctl_client *c;
	size_t n, done;
	char id[16];
};

static bool ts_next(struct kctl_stream *s, struct strbuf *out)
{
	struct test_stream *ts = container_of(s, struct test_stream, s);
	size_t q = kctl_client_queued(ts->c);
	/* a part is rendered only while the client's queue is under the bound */
	assert_true(q < KCTL_OUTQ_BYTES);
	assert_true(kctl_client_full(ts->c));
	if (q > ts->t->stream_max_queued)
		ts->t->stream_max_queued = q;
	if (ts->done == ts->n)
		return false;
	for (size_t k = 0; k < 777 && ts->done < ts->n; k++, ts->done++)
		strbuf_putc(out, ts->done % 100 == 99 ? '\n' : 'x');
	ts->t->streamed = ts->done;
	return true;
}

static void ts_end(struct kctl_stream *s, const char **kind, const char **text)
{
	struct test_stream *ts = container_of(s, struct test_stream, s);
	*kind = "ok";
	*text = ts->id;
}

static void ts_free(struct kctl_stream *s)
{
	struct test_stream *ts = container_of(s, struct test_stream, s);
	ts->t->streams_freed++;
	free(ts);
}

/* "ping ID": ok ID; "big N ID": N bytes of data, then ok ID; "stream N
 * ID": the same as a stream; "monitor": a subscriber; "park ID": waits
 * while there is no room. */
static int srv_request(void *userdata, struct kctl_client *c, const struct kctl_msg *m,
		       bool may_park)
{
	struct srv *t = userdata;
	const char *cmd = m->f[0], *id = m->n > 1 ? m->f[m->n - 1] : "";
	size_t before = kctl_client_queued(c);
	/* a client is read only while what it is owed is under the bound */
	assert_true(before < KCTL_OUTQ_BYTES);
	if (strcmp(cmd, "park") == 0 && may_park && !t->room) {
		t->parks++;
		check(t);
		return -EAGAIN;
	}
	t->requests++;
	if (strcmp(cmd, "big") == 0) {
		size_t n = (size_t)atol(m->f[1]);
		char *text = malloc(n + 1);
		assert_non_null(text);
		memset(text, 'x', n);
		for (size_t i = 99; i < n; i += 100)
			text[i] = '\n';
		text[n] = '\0';
		kctl_client_reply_data(c, text);
		free(text);
	} else if (strcmp(cmd, "stream") == 0) {
		struct test_stream *ts = calloc(1, sizeof(*ts));
		assert_non_null(ts);
		*ts = (struct test_stream){
			.s = {.next = ts_next, .end = ts_end, .free = ts_free},
			.t = t,
			.c = c,
			.n = (size_t)atol(m->f[1]),
		};
		snprintf(ts->id, sizeof(ts->id), "%s", id);
		kctl_client_stream(c, &ts->s);
		check(t);
		return 0;
	} else if (strcmp(cmd, "monitor") == 0) {
		kctl_client_set_subscriber(c, true);
	}
	kctl_client_reply(c, "ok", id);
	size_t after = kctl_client_queued(c);
	if (after > t->max_queued)
		t->max_queued = after;
	if (after - before > t->max_reply)
		t->max_reply = after - before;
	check(t);
	return 0;
}

static void srv_bad(void *userdata, struct kctl_client *c, enum kctl_bad why, const char *buf,
		    size_t len)
{
	(void)why;
	(void)buf;
	(void)len;
	kctl_client_reply(c, "err", "bad");
	check(userdata);
}

static void srv_refused(void *userdata, pid_t pid, uid_t uid, enum kctl_refusal why)
{
	struct srv *t = userdata;
	(void)pid;
	(void)uid;
	t->refused[why]++;
	check(t);
}

static void srv_dropped(void *userdata, struct kctl_client *c, uint64_t idle_ns)
{
	struct srv *t = userdata;
	assert_true(idle_ns >= KCTL_IDLE_NS);
	assert_true(t->dropped < ARRAY_SIZE(t->dropped_id));
	t->dropped_id[t->dropped++] = (uintptr_t)kctl_client_userdata(c);
}

static size_t srv_room(void *userdata)
{
	return ((struct srv *)userdata)->room;
}

static uint64_t srv_now(void *userdata)
{
	return ((struct srv *)userdata)->clock;
}

static const struct kctl_server_ops ops = {
	.opened = srv_opened,
	.closed = srv_closed,
	.request = srv_request,
	.bad = srv_bad,
	.refused = srv_refused,
	.dropped = srv_dropped,
	.room = srv_room,
	.now = srv_now,
};

static void srv_start(struct srv *t, gid_t gid)
{
	*t = (struct srv){.room = 100, .clock = 1000 * SEC};
	assert_int_equal(kloop_new(&t->loop), 0);
	t->dir = tu_mkdtemp();
	t->path = tu_printf("%s/ctl", t->dir);
	assert_int_equal(kctl_server_new(t->loop, t->path, gid, &ops, t, &t->s), 0);
}

static void srv_stop(struct srv *t)
{
	kctl_server_free(t->s);
	kloop_free(t->loop);
	tu_rm_rf(t->dir);
	free(t->dir);
	free(t->path);
}

/* Runs the loop until pred holds (at once if it does), at most 10 s. */
static void run_until(struct srv *t, bool (*pred)(struct srv *t))
{
	if (pred(t))
		return;
	struct tu_deadline dl;
	t->until = pred;
	tu_deadline_arm(&dl, t->loop, 10000);
	assert_true(tu_deadline_run(&dl));
}

static void quiet_done(struct ktimer *timer, void *userdata)
{
	(void)timer;
	kloop_exit(((struct srv *)userdata)->loop, 0);
}

/* Runs the loop for ms: to see that nothing more happens. */
static void run_for(struct srv *t, uint64_t ms)
{
	struct ktimer *timer;
	assert_int_equal(kloop_add_timer(t->loop, now_monotonic_ns() + ms * 1000000ull, quiet_done,
					 t, &timer),
			 0);
	assert_int_equal(kloop_run(t->loop), 0);
}

/* A client, reading in the loop once read_in_loop(). */
struct conn {
	struct srv *t;
	int fd;
	struct kio *io;
	size_t oks, datas;
	size_t data_bytes; /* of the data replies' text */
	bool data_lines;   /* each data reply was whole lines of 99 'x' */
	char *ok_ids[64];
	bool eof;
	bool (*until)(struct conn *c);
};

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* A connection made by a child as uid (and group OTHER_GID), handed back:
 * SO_PEERCRED is what it was at connect(). */
static int connect_as(const char *path, uid_t uid)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(OTHER_GID) < 0 || setuid(uid) < 0)
			_exit(1);
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		strcpy(sa.sun_path, path);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(2);
		char cbuf[CMSG_SPACE(sizeof(int))] = {0};
		struct iovec iov = {.iov_base = "f", .iov_len = 1};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		_exit(sendmsg(sv[1], &mh, 0) == 1 ? 0 : 3);
	}
	close(sv[1]);
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	int status, fd = -1;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	assert_int_equal(recvmsg(sv[0], &mh, 0), 1);
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	close(sv[0]);
	return fd;
}

static void send_msg(int fd, const char *a, const char *b, const char *c)
{
	char buf[256];
	size_t n = 0;
	for (const char *f[] = {a, b, c}, **p = f; p < f + 3 && *p; p++) {
		size_t l = strlen(*p) + 1;
		memcpy(buf + n, *p, l);
		n += l;
	}
	assert_int_equal(send(fd, buf, n, 0), (ssize_t)n);
}

static void on_conn(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct conn *c = userdata;
	(void)io;
	(void)events;
	char buf[KCTL_MSG_MAX + 1];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			c->eof = true;
			kio_free(c->io);
			c->io = NULL;
			break;
		}
		buf[n] = '\0';
		if (strcmp(buf, "ok") == 0) {
			assert_true(c->oks < ARRAY_SIZE(c->ok_ids));
			c->ok_ids[c->oks++] = strdup(buf + 3);
		} else if (strcmp(buf, "data") == 0) {
			size_t len = strlen(buf + 5);
			for (size_t i = 0; i < len; i++)
				c->data_lines &= buf[5 + i] == (i % 100 == 99 ? '\n' : 'x');
			c->data_lines &= len % 100 == 0;
			c->datas++;
			c->data_bytes += len;
		}
	}
	if (c->until && c->until(c)) {
		c->until = NULL;
		kloop_exit(c->t->loop, 0);
	}
}

/* Reads c's replies in the loop until pred holds, at most 10 s. */
static void read_until(struct conn *c, bool (*pred)(struct conn *c))
{
	struct tu_deadline dl;
	if (!c->io)
		assert_int_equal(kloop_add_io(c->t->loop, c->fd, EPOLLIN, on_conn, c, &c->io), 0);
	if (pred(c))
		return;
	c->until = pred;
	tu_deadline_arm(&dl, c->t->loop, 10000);
	assert_true(tu_deadline_run(&dl));
}

static void conn_release(struct conn *c)
{
	kio_free(c->io);
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->oks; i++)
		free(c->ok_ids[i]);
}

static size_t want_opened;

static bool opened_enough(struct srv *t)
{
	return t->opened >= want_opened;
}

static bool went_full(struct srv *t)
{
	return t->max_queued >= KCTL_OUTQ_BYTES;
}

static bool forty_oks(struct conn *c)
{
	return c->oks == 40;
}

/* A client that asks for more than it reads is not read past the bound,
 * monitor or not; it is owed at most the bound and one request's replies;
 * once it reads, the rest of its requests are taken, in order. */
static void test_bound_in_bytes(void **state)
{
	(void)state;
	for (int monitor = 0; monitor < 2; monitor++) {
		struct srv t;
		srv_start(&t, (gid_t)-1);
		struct conn c = {.t = &t, .fd = connect_to(t.path)};
		want_opened = 1;
		run_until(&t, opened_enough);
		if (monitor)
			send_msg(c.fd, "monitor", "m", NULL);
		for (int i = 1; i <= 40 - monitor; i++) {
			char id[16];
			snprintf(id, sizeof(id), "%d", i);
			send_msg(c.fd, "big", "100000", id);
		}
		run_until(&t, went_full);
		run_for(&t, 200); /* what the kernel took is sent; nothing more is read */
		size_t taken = t.requests;
		assert_true(taken < 40);
		assert_true(t.max_queued < KCTL_OUTQ_BYTES + t.max_reply);
		assert_true(t.max_reply > 100000 &&
			    t.max_reply < 100000 + 20 * (KCTL_MSG_COST + 6));
		run_for(&t, 100);
		assert_int_equal(t.requests, taken);
		/* it reads: everything is taken, and answered in order */
		read_until(&c, forty_oks);
		assert_int_equal(t.requests, 40);
		for (int i = 0; i < 40; i++) {
			char id[16];
			snprintf(id, sizeof(id), "%d", i + 1 - monitor);
			assert_string_equal(c.ok_ids[i], monitor && i == 0 ? "m" : id);
		}
		assert_int_equal(c.datas, (40 - monitor) * 13); /* 100000 bytes in 8 KiB chunks */
		conn_release(&c);
		srv_stop(&t);
	}
}

static void connect_n(struct srv *t, int *fds, size_t n, uid_t uid, bool as_self)
{
	for (size_t i = 0; i < n; i++) {
		fds[i] = as_self ? connect_to(t->path) : connect_as(t->path, uid);
		t->clock += SEC / 1000; /* each a millisecond after the last */
		want_opened = t->opened + 1;
		run_until(t, opened_enough);
	}
}

static size_t want_refused, want_requests, want_parks;

static bool requests_enough(struct srv *t)
{
	return t->requests >= want_requests && t->parks >= want_parks;
}

static bool refused_enough(struct srv *t)
{
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(t->refused); i++)
		n += t->refused[i];
	return n >= want_refused;
}

static bool two_oks(struct conn *c)
{
	return c->oks == 2;
}

static bool stream_freed(struct srv *t)
{
	return t->streams_freed == 1 && t->closed == 2;
}

/* A stream of 3 MB to a client that reads nothing: rendered only while the
 * client's queue is under the bound, so keventd holds at most the bound
 * and one reply for it; the client's next request waits for the stream's
 * end.  Once it reads, the text comes cut as kctl_client_reply_data()
 * cuts it, then the stream's last reply, then the next request's; a
 * client that hangs up in the middle takes its stream with it. */
static void test_stream_within_the_bound(void **state)
{
	(void)state;
	const size_t n = 3000000;
	struct srv t;
	srv_start(&t, (gid_t)-1);
	struct conn c = {.t = &t, .fd = connect_to(t.path), .data_lines = true};
	want_opened = 1;
	run_until(&t, opened_enough);
	send_msg(c.fd, "stream", "3000000", "s");
	send_msg(c.fd, "ping", "p", NULL);
	want_requests = 1;
	run_until(&t, requests_enough);
	run_for(&t, 200); /* what the kernel took is sent; nothing more is rendered */
	size_t streamed = t.streamed;
	assert_true(streamed > KCTL_OUTQ_BYTES && streamed < n);
	/* the bound, the kernel's socket buffer, a reply and a part */
	assert_true(streamed < KCTL_OUTQ_BYTES + 4 * 1024 * 1024);
	assert_true(t.stream_max_queued < KCTL_OUTQ_BYTES);
	assert_true(t.max_queued < KCTL_OUTQ_BYTES + KCTL_MSG_MAX + KCTL_MSG_COST);
	run_for(&t, 100);
	assert_int_equal(t.streamed, streamed);
	assert_int_equal(t.requests, 1); /* the ping waits */
	read_until(&c, two_oks);
	assert_int_equal(t.streamed, n);
	assert_int_equal(t.requests, 2);
	assert_string_equal(c.ok_ids[0], "s");
	assert_string_equal(c.ok_ids[1], "p");
	/* 8,100 bytes a reply (81 lines), as "big" would send it */
	assert_int_equal(c.data_bytes, n);
	assert_int_equal(c.datas, (n + 8099) / 8100);
	assert_true(c.data_lines);
	assert_int_equal(t.streams_freed, 1);
	conn_release(&c);

	/* one that hangs up in the middle */
	t.streams_freed = 0;
	int fd = connect_to(t.path);
	want_opened = 2;
	run_until(&t, opened_enough);
	send_msg(fd, "stream", "3000000", "s2");
	want_requests = 3;
	run_until(&t, requests_enough);
	close(fd);
	run_until(&t, stream_freed);
	srv_stop(&t);
}

/* The answer keventd sends a refused peer, then the end. */
static void check_refusal(int fd, const char *text)
{
	char buf[128];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	assert_true(n > 0);
	assert_memory_equal(buf, "err", 4);
	assert_string_equal(buf + 4, text);
	assert_int_equal(recv(fd, buf, sizeof(buf), 0), 0);
}

static int refused_connect(struct srv *t, uid_t uid, bool as_self)
{
	int fd = as_self ? connect_to(t->path) : connect_as(t->path, uid);
	want_refused++;
	run_until(t, refused_enough);
	return fd;
}

/* When every slot is taken, the connection silent longest (no monitor, none
 * waiting on the daemon) makes room once it has been silent KCTL_IDLE_NS;
 * until then a new one is refused. */
static void test_idle_connection_dropped(void **state)
{
	(void)state;
	struct srv t;
	int fds[KCTL_MAX_CLIENTS], extra[2];
	char buf[16];
	srv_start(&t, (gid_t)-1);
	want_refused = want_parks = 0;
	uint64_t t0 = t.clock;
	/* 1, the oldest, is a monitor; 2 waits for room; 3 speaks 30 s later */
	connect_n(&t, fds, 1, 0, true);
	send_msg(fds[0], "monitor", "m", NULL);
	want_requests = 1;
	run_until(&t, requests_enough);
	connect_n(&t, fds + 1, 1, 0, true);
	t.room = 0;
	send_msg(fds[1], "park", "p", NULL);
	want_parks = 1;
	run_until(&t, requests_enough);
	connect_n(&t, fds + 2, KCTL_MAX_CLIENTS - 2, 0, true);
	t.clock = t0 + 30 * SEC;
	send_msg(fds[2], "ping", "3", NULL);
	want_requests = 2;
	run_until(&t, requests_enough);

	/* none silent for a minute yet: refused */
	t.clock = t0 + SEC / 1000 + KCTL_IDLE_NS - 1;
	int fd = refused_connect(&t, 0, true);
	check_refusal(fd, "too many clients");
	close(fd);
	assert_int_equal(t.refused[KCTL_REFUSED_FULL], 1);
	assert_int_equal(t.dropped, 0);

	/* later: the oldest silent one that is neither a monitor nor parked
	 * (4) goes, then the next (5); the one that spoke at 30 s stays */
	t.clock = t0 + KCTL_IDLE_NS + 10 * SEC;
	for (size_t k = 0; k < 2; k++) {
		extra[k] = connect_to(t.path);
		want_opened = t.opened + 1;
		run_until(&t, opened_enough);
		assert_int_equal(t.dropped, k + 1);
		assert_int_equal(t.dropped_id[k], 4 + k);
		assert_int_equal(recv(fds[3 + k], buf, sizeof(buf), 0), 0); /* closed */
	}
	assert_int_equal(kctl_server_clients(t.s), KCTL_MAX_CLIENTS);
	assert_int_equal(t.refused[KCTL_REFUSED_FULL], 1);
	t.room = 1;
	kctl_server_resume(t.s);
	want_requests = 3; /* the parked one is in */
	run_until(&t, requests_enough);
	for (size_t i = 0; i < KCTL_MAX_CLIENTS; i++)
		close(fds[i]);
	close(extra[0]);
	close(extra[1]);
	srv_stop(&t);
}

/* A client that goes on sending while it reads none of its replies is not
 * read: what keventd last took from it ages, and it is closed for room
 * like a quiet one. */
static void test_stuck_client_counts_as_idle(void **state)
{
	(void)state;
	struct srv t;
	int fds[KCTL_MAX_CLIENTS], extra;
	srv_start(&t, (gid_t)-1);
	uint64_t t0 = t.clock;
	connect_n(&t, fds, 1, 0, true);
	for (int i = 0; i < 8; i++)
		send_msg(fds[0], "big", "100000", "s");
	run_until(&t, went_full);
	t.clock = t0 + 30 * SEC;
	connect_n(&t, fds + 1, KCTL_MAX_CLIENTS - 1, 0, true);
	t.clock = t0 + KCTL_IDLE_NS + SEC;
	send_msg(fds[0], "ping", "late", NULL); /* not read: it is over its bound */
	extra = connect_to(t.path);
	want_opened = t.opened + 1;
	run_until(&t, opened_enough);
	assert_int_equal(t.dropped, 1);
	assert_int_equal(t.dropped_id[0], 1);
	for (size_t i = 0; i < KCTL_MAX_CLIENTS; i++)
		close(fds[i]);
	close(extra);
	srv_stop(&t);
}

/* A connection that closed before the new one came is let go first, even
 * if the loop has not seen its end yet. */
static void test_hung_up_make_room(void **state)
{
	(void)state;
	struct srv t;
	int fds[KCTL_MAX_CLIENTS];
	srv_start(&t, (gid_t)-1);
	want_refused = 0;
	connect_n(&t, fds, KCTL_MAX_CLIENTS, 0, true);
	close(fds[10]);
	close(fds[20]);
	/* both in the same wake-up, the new one first or not: none refused */
	int a = connect_to(t.path), b = connect_to(t.path);
	want_opened = t.opened + 2;
	run_until(&t, opened_enough);
	assert_int_equal(t.refused[KCTL_REFUSED_FULL], 0);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.closed, 2);
	close(a);
	close(b);
	for (size_t i = 0; i < KCTL_MAX_CLIENTS; i++)
		if (i != 10 && i != 20)
			close(fds[i]);
	srv_stop(&t);
}

/* Users other than root: KCTL_MAX_PER_UID connections each, and all the
 * slots but the last, which is root's. */
static void test_per_user_and_root_slot(void **state)
{
	(void)state;
	if (geteuid() != 0)
		tu_skip("needs root (connects as other users)");
	struct srv t;
	int fds[KCTL_MAX_CLIENTS + 1], fd;
	srv_start(&t, OTHER_GID);
	want_refused = 0;
	struct stat st;
	assert_int_equal(lstat(t.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, OTHER_GID);

	connect_n(&t, fds, KCTL_MAX_PER_UID, 60001, false);
	fd = refused_connect(&t, 60001, false);
	check_refusal(fd, "too many clients of this user");
	close(fd);
	assert_int_equal(t.refused[KCTL_REFUSED_USER], 1);
	/* three more users fill all but the last slot */
	connect_n(&t, fds + KCTL_MAX_PER_UID, KCTL_MAX_PER_UID, 60002, false);
	connect_n(&t, fds + 2 * KCTL_MAX_PER_UID, KCTL_MAX_PER_UID, 60003, false);
	connect_n(&t, fds + 3 * KCTL_MAX_PER_UID, KCTL_MAX_PER_UID - 1, 60004, false);
	assert_int_equal(kctl_server_clients(t.s), KCTL_MAX_CLIENTS - 1);
	fd = refused_connect(&t, 60004, false);
	check_refusal(fd, "too many clients");
	close(fd);
	assert_int_equal(t.refused[KCTL_REFUSED_RESERVED], 1);
	/* root gets the last one, and then is refused like anyone */
	connect_n(&t, fds + KCTL_MAX_CLIENTS - 1, 1, 0, true);
	fd = refused_connect(&t, 0, true);
	check_refusal(fd, "too many clients");
	close(fd);
	assert_int_equal(t.refused[KCTL_REFUSED_FULL], 1);

	/* a minute on, every one is idle.  A user at its limit makes room
	 * among its own (its oldest, 17), and then, the root slot being the
	 * last one left, among anyone's (the oldest, 1); one under its limit
	 * only the latter (2) */
	t.clock += KCTL_IDLE_NS;
	fds[KCTL_MAX_CLIENTS] = connect_as(t.path, 60002);
	want_opened = t.opened + 1;
	run_until(&t, opened_enough);
	assert_int_equal(t.dropped, 2);
	assert_int_equal(t.dropped_id[0], KCTL_MAX_PER_UID + 1);
	assert_int_equal(t.dropped_id[1], 1);
	assert_int_equal(kctl_server_clients(t.s), KCTL_MAX_CLIENTS - 1);
	close(fds[KCTL_MAX_PER_UID]);
	fds[KCTL_MAX_PER_UID] = connect_as(t.path, 60004);
	want_opened = t.opened + 1;
	run_until(&t, opened_enough);
	assert_int_equal(t.dropped, 3);
	assert_int_equal(t.dropped_id[2], 2);
	assert_int_equal(kctl_server_clients(t.s), KCTL_MAX_CLIENTS - 1);
	for (size_t i = 0; i <= KCTL_MAX_CLIENTS; i++)
		close(fds[i]);
	srv_stop(&t);
}

/* Only a stale socket at the path is replaced; a live one is refused, and
 * so is anything else, untouched.  The socket is 0600 (0660 with a group),
 * and is unlinked at the end only if it is still ours. */
static void test_socket_path(void **state)
{
	(void)state;
	struct kloop *loop;
	struct kctl_server *s, *other;
	assert_int_equal(kloop_new(&loop), 0);
	char *dir = tu_mkdtemp(), *path = tu_printf("%s/ctl", dir);
	char *target = tu_printf("%s/target", dir);
	struct stat st;
	tu_write(dir, "target", "keep me\n", 0644);

	tu_write(dir, "ctl", "a file\n", 0640);
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &s), -EEXIST);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(kctl_server_new(loop, path, 0, &ops, NULL, &s), -EEXIST);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &s), -EEXIST);
	assert_int_equal(rmdir(path), 0);

	/* a stale socket: replaced */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &s), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* a live one: refused, and left alone */
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &other), -EADDRINUSE);
	kctl_server_free(s);
	assert_int_equal(lstat(path, &st), -1);

	/* with a group (the caller's own: no privilege needed) */
	assert_int_equal(kctl_server_new(loop, path, getegid(), &ops, NULL, &s), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, getegid());
	/* replaced by a file before the end: not ours to remove */
	assert_int_equal(unlink(path), 0);
	tu_write(dir, "ctl", "someone else's\n", 0644);
	kctl_server_free(s);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));

	kloop_free(loop);
	tu_rm_rf(dir);
	free(dir);
	free(path);
	free(target);
}

/* The socket's directory, made when missing: KCTL_DIR_MODE (0755)
 * whatever the umask, so that the socket's group reaches it; one that is
 * there keeps its mode. */
static void test_socket_dir(void **state)
{
	(void)state;
	struct kloop *loop;
	struct kctl_server *s;
	assert_int_equal(kloop_new(&loop), 0);
	char *dir = tu_mkdtemp(), *run = tu_printf("%s/run", dir);
	char *path = tu_printf("%s/ctl", run);
	struct stat st;
	mode_t mask = umask(077);

	assert_int_equal(kctl_server_new(loop, path, getegid(), &ops, NULL, &s), 0);
	assert_int_equal(stat(run, &st), 0);
	assert_int_equal(st.st_mode & 07777, KCTL_DIR_MODE);
	assert_int_equal(KCTL_DIR_MODE, 0755);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	kctl_server_free(s);
	assert_int_equal(kctl_server_make_dir(path, KCTL_DIR_MODE), 0); /* there: nothing to do */

	/* one made before, 0700: left so (and logged, with a group) */
	assert_int_equal(rmdir(run), 0);
	assert_int_equal(mkdir(run, 0700), 0);
	assert_int_equal(kctl_server_new(loop, path, getegid(), &ops, NULL, &s), 0);
	assert_int_equal(stat(run, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	kctl_server_free(s);

	/* the user instance's, 0700 whatever the umask */
	umask(0);
	assert_int_equal(rmdir(run), 0);
	assert_int_equal(kctl_server_make_dir(path, 0700), 0);
	assert_int_equal(stat(run, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	umask(077);

	/* a parent that is not there either: not made */
	char *deep = tu_printf("%s/a/b/ctl", dir);
	assert_int_equal(kctl_server_make_dir(deep, KCTL_DIR_MODE), -ENOENT);
	umask(mask);
	kloop_free(loop);
	tu_rm_rf(dir);
	free(dir);
	free(run);
	free(path);
	free(deep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_in_bytes),
		cmocka_unit_test(test_stream_within_the_bound),
		cmocka_unit_test(test_idle_connection_dropped),
		cmocka_unit_test(test_stuck_client_counts_as_idle),
		cmocka_unit_test(test_hung_up_make_room),
		cmocka_unit_test(test_per_user_and_root_slot),
		cmocka_unit_test(test_socket_path),
		cmocka_unit_test(test_socket_dir),
	};
	return tu_result(cmocka_run_group_tests(tests, NULL, NULL));
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loadgen: pushes N events through keventd's control socket as fast as it
 * takes them, then waits until keventd has handled them all, and prints
 * events/s accepted and handled.  Usage:
 *   loadgen [--post] SOCKET N [OBJECTS] [WINDOW] [SIGNAL] [DONEFILE]
 * --post: the events go as "post" requests, which keventd answers only when
 * one fails; "accepted" is then the moment the "sync" sent after the last
 * one is answered (keventd handles a client's requests in order).  Without
 * it, as "send" requests, each answered "ok SEQNUM".
 * OBJECTS: how many distinct objects the events cycle through (default 64);
 * WINDOW: requests sent at once; the next window goes out before the
 * replies to the last one are read, so up to 2 x WINDOW are in flight (default 64);
 * SIGNAL: the events' signal (default "bench"); their type is power; every
 * request is 200 bytes, as bench-raw's messages (a "Pad:" payload line);
 * DONEFILE: when given, "handled" is not read from status (whose rendering
 * costs keventd ~20 ms with 10,000 rules) but from sentinels: after the N
 * events, one event of signal "done" per object, whose rule must append a
 * line to DONEFILE (run-bench.sh's rule runs bench-stamp); an object's
 * events run in arrival order, so when OBJECTS lines have come, every
 * event has been handled.  DONEFILE is made a FIFO that loadgen reads,
 * blocked, so that waiting costs the machine nothing while the handlers
 * run (polling a file took CPU from them).  The sentinels count as events
 * handled.
 * A window of requests goes out in one sendmmsg(), and the replies are read
 * with recvmmsg(), as a busy source would hand keventd many messages per
 * wake-up.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto.h"
#include "util.h"

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		exit(1);
	}
	return fd;
}

#define WINDOW_MAX 256
#define MSG_BYTES  200 /* a request's size, as bench-raw's messages */

/* Reads n replies, each "ok" (or the run fails). */
static void expect_oks(int fd, unsigned n)
{
	static char bufs[WINDOW_MAX][64];
	struct mmsghdr mm[WINDOW_MAX];
	struct iovec iov[WINDOW_MAX];
	while (n) {
		for (unsigned i = 0; i < n; i++) {
			iov[i] =
				(struct iovec){.iov_base = bufs[i], .iov_len = sizeof(bufs[i]) - 1};
			mm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
		}
		int got = recvmmsg(fd, mm, n, MSG_WAITFORONE, NULL);
		if (got <= 0) {
			fprintf(stderr, "loadgen: keventd closed the connection\n");
			exit(1);
		}
		for (int i = 0; i < got; i++) {
			bufs[i][mm[i].msg_len < 63 ? mm[i].msg_len : 63] = '\0';
			if (strcmp(bufs[i], "ok") != 0) {
				fprintf(stderr, "loadgen: keventd: %s %s\n", bufs[i],
					bufs[i] + strlen(bufs[i]) + 1);
				exit(1);
			}
		}
		n -= (unsigned)got;
	}
}

/* Reads "handled" + "ratelimited" from status --json. */
static uint64_t done_count(const char *path)
{
	int fd = connect_to(path);
	struct strbuf req = STRBUF_INIT, out = STRBUF_INIT;
	const char *f[] = {"status", "json"};
	kctl_encode(&req, f, 2);
	if (send(fd, req.buf, req.len, 0) < 0)
		exit(1);
	char buf[KCTL_MSG_MAX + 1];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			exit(1);
		if (strcmp(buf, "data") == 0)
			strbuf_puts(&out, buf + 5);
		else
			break;
	}
	close(fd);
	uint64_t total = 0;
	const char *keys[] = {"\"handled\":", "\"ratelimited\":"};
	const char *ev = strstr(strbuf_str(&out), "\"events\":");
	for (size_t i = 0; ev && i < 2; i++) {
		const char *p = strstr(ev, keys[i]);
		if (p)
			total += strtoull(p + strlen(keys[i]), NULL, 10);
	}
	strbuf_release(&req);
	strbuf_release(&out);
	return total;
}

/* After posts: any message now is an error reply to one of them. */
static void expect_no_reply(int fd)
{
	char buf[KCTL_MSG_MAX + 1];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		fprintf(stderr, "loadgen: keventd closed the connection\n");
		exit(1);
	}
	buf[n] = '\0';
	fprintf(stderr, "loadgen: keventd: %s %s\n", buf, buf + strlen(buf) + 1);
	exit(1);
}

int main(int argc, char **argv)
{
	bool post = argc > 1 && strcmp(argv[1], "--post") == 0;
	if (post) {
		argc--;
		argv++;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: loadgen [--post] SOCKET N [OBJECTS] [WINDOW] [SIGNAL] "
				"[DONEFILE]\n");
		return 2;
	}
	const char *path = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	unsigned objects = argc > 3 ? (unsigned)atoi(argv[3]) : 64;
	unsigned window = argc > 4 ? (unsigned)atoi(argv[4]) : 64;
	const char *signal = argc > 5 ? argv[5] : "bench";
	const char *donefile = argc > 6 ? argv[6] : NULL;
	if (!objects)
		objects = 1;
	if (!window)
		window = 1;
	if (window > WINDOW_MAX)
		window = WINDOW_MAX;
	uint64_t before = donefile ? 0 : done_count(path);
	int done_fd = -1;
	if (donefile) {
		/* read-write: no end of file between two sentinels' writes */
		unlink(donefile);
		if (mkfifo(donefile, 0644) < 0 || (done_fd = open(donefile, O_RDWR)) < 0) {
			perror(donefile);
			return 1;
		}
	}
	int fd = connect_to(path);
	struct strbuf msg[WINDOW_MAX];
	struct mmsghdr mm[WINDOW_MAX];
	struct iovec iov[WINDOW_MAX];
	char object[64], payload[MSG_BYTES];
	for (unsigned k = 0; k < WINDOW_MAX; k++)
		msg[k] = (struct strbuf)STRBUF_INIT;
	uint64_t t0 = now_monotonic_ns();
	unsigned in_flight = 0;
	for (uint64_t i = 0; i < n;) {
		unsigned k = 0;
		for (; k < window && i < n; k++, i++) {
			snprintf(object, sizeof(object), "/org/kernel/bench/%u",
				 (unsigned)(i % objects));
			/* 200-byte messages, as bench-raw's: a "Pad:" property fills
			 * the payload up to that */
			const char *cmd = post ? "post" : "send";
			int fixed = snprintf(payload, sizeof(payload), "N: %" PRIu64 "\nPad: ", i);
			size_t used = strlen(cmd) + strlen("power") + strlen(object) +
				      strlen(signal) + (size_t)fixed + 1 + 5;
			size_t pad = used < MSG_BYTES ? MSG_BYTES - used : 0;
			if (pad > sizeof(payload) - (size_t)fixed - 2)
				pad = sizeof(payload) - (size_t)fixed - 2;
			memset(payload + fixed, 'x', pad);
			strcpy(payload + fixed + pad, "\n");
			const char *f[] = {cmd, "power", object, signal, payload};
			kctl_encode(&msg[k], f, 5);
			iov[k] = (struct iovec){.iov_base = msg[k].buf, .iov_len = msg[k].len};
			mm[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
		}
		for (unsigned sent = 0; sent < k;) {
			int r = sendmmsg(fd, mm + sent, k - sent, 0);
			if (r < 0) {
				perror("sendmmsg");
				return 1;
			}
			sent += (unsigned)r;
		}
		if (post) {
			expect_no_reply(fd);
			continue;
		}
		in_flight += k;
		if (in_flight > window) {
			expect_oks(fd, in_flight - window);
			in_flight = window;
		}
	}
	if (post) {
		const char *f[] = {"sync"};
		kctl_encode(&msg[0], f, 1);
		if (send(fd, msg[0].buf, msg[0].len, 0) < 0) {
			perror("send");
			return 1;
		}
		in_flight = 1;
	}
	expect_oks(fd, in_flight);
	uint64_t t1 = now_monotonic_ns();
	/* handled: poll the counters (a benchmark, not a test: polling is the
	 * measurement).  A poll costs keventd a status rendering, which with
	 * 10,000 rules is 1 MB of JSON and ~20 ms: poll at most every 10 times
	 * that, and place the moment the count reached n by interpolating
	 * between the last two polls (the rate is steady). */
	uint64_t t_prev = t1, h_prev = 0, t2, handled_n = n;
	if (donefile) {
		for (unsigned k = 0; k < objects; k++) {
			snprintf(object, sizeof(object), "/org/kernel/bench/%u", k);
			const char *f[] = {"send", "power", object, "done", ""};
			kctl_encode(&msg[0], f, 5);
			if (send(fd, msg[0].buf, msg[0].len, 0) < 0) {
				perror("send");
				return 1;
			}
			expect_oks(fd, 1);
		}
		char buf[4096];
		for (unsigned lines = 0; lines < objects;) {
			ssize_t got = read(done_fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				perror(donefile);
				return 1;
			}
			for (ssize_t i = 0; i < got; i++)
				lines += buf[i] == '\n';
		}
		t2 = now_monotonic_ns();
		close(done_fd);
		unlink(donefile);
		handled_n += objects;
	}
	for (; !donefile;) {
		uint64_t a = now_monotonic_ns();
		uint64_t h = done_count(path) - before;
		uint64_t b = now_monotonic_ns();
		uint64_t at = a + (b - a) / 2;
		if (h >= n) {
			t2 = h == h_prev ? at
					 : t_prev + (uint64_t)((double)(at - t_prev) *
							       (double)(n - h_prev) /
							       (double)(h - h_prev));
			break;
		}
		t_prev = at;
		h_prev = h;
		uint64_t pause = 10 * (b - a);
		usleep((useconds_t)((pause > 10000000 ? pause : 10000000) / 1000));
	}
	close(fd);
	for (unsigned k = 0; k < WINDOW_MAX; k++)
		strbuf_release(&msg[k]);
	double acc = (double)(t1 - t0) / 1e9, all = (double)(t2 - t0) / 1e9;
	printf("events %" PRIu64 "  accepted in %.3fs (%.0f/s)  handled in %.3fs (%.0f/s)\n", n,
	       acc, (double)n / acc, all, (double)handled_n / all);
	return 0;
}

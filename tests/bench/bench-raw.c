// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench-raw: the machine's limits, and drivers for keventd's peers.  Each
 * mode prints one number (per second) on stdout, for run-bench.sh.
 *
 *   bench-raw dgram N        AF_UNIX SOCK_DGRAM, 200-byte messages, one
 *   bench-raw seqpacket N    sender process -> one receiver process
 *                            (a socketpair; one send()/recv() per message)
 *   bench-raw echo N         the ceiling of any request/reply protocol on
 *                            SOCK_SEQPACKET: 200-byte requests, each answered
 *                            by a 16-byte reply, batched on both sides as
 *                            loadgen and keventd do (sendmmsg/recvmmsg, 64
 *                            requests a window, 2 windows in flight); the
 *                            server does nothing else
 *   bench-raw spawn N K PROG [ARG]...
 *                            posix_spawn + waitpid of PROG, N times, with K
 *                            in flight; PROG gets this program's environment
 *   bench-raw wait SOCKET T0  waits (up to 30 s) until SOCKET accepts a
 *                            connection and prints the microseconds since
 *                            T0 (CLOCK_REALTIME ns, as "date +%s%N" prints)
 *   bench-raw feed FIFO N MATCH MARKER
 *                            acpid's input: N event lines into FIFO, then
 *                            "bench done", then waits for MARKER to appear
 *                            (the rule of "bench done" creates it).  MATCH:
 *                            K >= 0: every event is "bench/xK XK ...", which
 *                            rule K matches; -1: "bench/none ...", which no
 *                            rule matches
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#define MSG_BYTES 200

extern char **environ;

static double seconds(uint64_t t0)
{
	return (double)(now_monotonic_ns() - t0) / 1e9;
}

static int sockets(int type, unsigned long n)
{
	int sv[2];
	char buf[MSG_BYTES];
	memset(buf, 'x', sizeof(buf));
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		for (unsigned long i = 0; i < n; i++)
			if (recv(sv[1], buf, sizeof(buf), 0) != MSG_BYTES)
				_exit(1);
		_exit(0);
	}
	close(sv[1]);
	uint64_t t0 = now_monotonic_ns();
	for (unsigned long i = 0; i < n; i++)
		if (send(sv[0], buf, sizeof(buf), 0) != MSG_BYTES) {
			perror("send");
			return 1;
		}
	int st;
	waitpid(pid, &st, 0);
	double s = seconds(t0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench-raw: the receiver failed\n");
		return 1;
	}
	printf("%.0f\n", (double)n / s);
	return 0;
}

#define WIN  64
#define SERV 16

static int echo(unsigned long n)
{
	int sv[2];
	static char req[WIN][MSG_BYTES], rep[WIN][16];
	struct mmsghdr mm[WIN];
	struct iovec iov[WIN];
	memset(req, 'x', sizeof(req));
	memset(rep, 'y', sizeof(rep));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		for (unsigned long done = 0; done < n;) {
			for (int i = 0; i < SERV; i++) {
				iov[i] = (struct iovec){req[i], MSG_BYTES};
				mm[i] = (struct mmsghdr){
					.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
			}
			int got = recvmmsg(sv[1], mm, SERV, MSG_WAITFORONE, NULL);
			if (got <= 0)
				_exit(1);
			for (int i = 0; i < got; i++) {
				iov[i] = (struct iovec){rep[i], 16};
				mm[i] = (struct mmsghdr){
					.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
			}
			for (int sent = 0; sent < got;) {
				int r = sendmmsg(sv[1], mm + sent, (unsigned)(got - sent), 0);
				if (r <= 0)
					_exit(1);
				sent += r;
			}
			done += (unsigned long)got;
		}
		_exit(0);
	}
	close(sv[1]);
	uint64_t t0 = now_monotonic_ns();
	unsigned long sent = 0, answered = 0;
	while (answered < n) {
		if (sent < n && sent - answered <= WIN) {
			unsigned k = 0;
			for (; k < WIN && sent + k < n; k++) {
				iov[k] = (struct iovec){req[k], MSG_BYTES};
				mm[k] = (struct mmsghdr){
					.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
			}
			for (unsigned s = 0; s < k;) {
				int r = sendmmsg(sv[0], mm + s, k - s, 0);
				if (r <= 0) {
					perror("sendmmsg");
					return 1;
				}
				s += (unsigned)r;
			}
			sent += k;
			continue;
		}
		unsigned want =
			(unsigned)(sent - answered > WIN ? sent - answered - WIN : sent - answered);
		for (unsigned i = 0; i < want; i++) {
			iov[i] = (struct iovec){rep[i], 16};
			mm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
		}
		int got = recvmmsg(sv[0], mm, want, MSG_WAITFORONE, NULL);
		if (got <= 0) {
			perror("recvmmsg");
			return 1;
		}
		answered += (unsigned long)got;
	}
	int st;
	waitpid(pid, &st, 0);
	printf("%.0f\n", (double)n / seconds(t0));
	return 0;
}

static int spawn(unsigned long n, unsigned long k, char **argv)
{
	unsigned long started = 0, done = 0, running = 0;
	uint64_t t0 = now_monotonic_ns();
	while (done < n) {
		while (running < k && started < n) {
			pid_t pid;
			int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
			if (rc) {
				fprintf(stderr, "bench-raw: posix_spawn %s: %s\n", argv[0],
					strerror(rc));
				return 1;
			}
			started++;
			running++;
		}
		int st;
		if (waitpid(-1, &st, 0) > 0) {
			running--;
			done++;
		}
	}
	printf("%.0f\n", (double)n / seconds(t0));
	return 0;
}

static int wait_socket(const char *path, uint64_t t0)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (int i = 0; i < 300000; i++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (rc == 0) {
			printf("%llu\n", (unsigned long long)(now_realtime_ns() - t0) / 1000);
			return 0;
		}
		usleep(100);
	}
	fprintf(stderr, "bench-raw: %s never accepted a connection\n", path);
	return 1;
}

static int feed(const char *fifo, unsigned long n, int match, const char *marker)
{
	unlink(marker);
	int fd = open(fifo, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(fifo);
		return 1;
	}
	struct strbuf sb = STRBUF_INIT;
	for (unsigned long i = 0; i < n; i++) {
		if (match >= 0)
			strbuf_printf(&sb, "bench/x%lu X%lu 00000080 %08lx\n", (unsigned long)match,
				      (unsigned long)match, i);
		else
			strbuf_printf(&sb, "bench/none NONE 00000080 %08lx\n", i);
	}
	strbuf_puts(&sb, "bench done\n");
	uint64_t t0 = now_monotonic_ns();
	for (size_t off = 0; off < sb.len;) {
		ssize_t w = write(fd, sb.buf + off, sb.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			perror("write");
			return 1;
		}
		off += (size_t)w;
	}
	struct stat st;
	while (stat(marker, &st) < 0) {
		if (seconds(t0) > 120) {
			fprintf(stderr, "bench-raw: no %s after 120 s\n", marker);
			return 1;
		}
		usleep(200);
	}
	printf("%.0f\n", (double)n / seconds(t0));
	close(fd);
	strbuf_release(&sb);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "dgram") == 0)
		return sockets(SOCK_DGRAM, strtoul(argv[2], NULL, 10));
	if (argc >= 3 && strcmp(argv[1], "seqpacket") == 0)
		return sockets(SOCK_SEQPACKET, strtoul(argv[2], NULL, 10));
	if (argc >= 3 && strcmp(argv[1], "echo") == 0)
		return echo(strtoul(argv[2], NULL, 10));
	if (argc >= 5 && strcmp(argv[1], "spawn") == 0)
		return spawn(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10), argv + 4);
	if (argc == 4 && strcmp(argv[1], "wait") == 0)
		return wait_socket(argv[2], strtoull(argv[3], NULL, 10));
	if (argc == 6 && strcmp(argv[1], "feed") == 0)
		return feed(argv[2], strtoul(argv[3], NULL, 10), atoi(argv[4]), argv[5]);
	fprintf(stderr, "usage: bench-raw dgram|seqpacket|echo N | spawn N K PROG [ARG]... | "
			"wait SOCKET T0 | feed FIFO N MATCH MARKER\n");
	return 2;
}

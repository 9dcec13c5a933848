// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loadgen: pushes N events through keventd's control socket as fast as it
 * takes them, then waits until keventd has handled them all, and prints
 * events/s accepted and handled.  Usage:
 *   loadgen SOCKET N [OBJECTS] [WINDOW]
 * OBJECTS: how many distinct objects the events cycle through (default 64);
 * WINDOW: requests in flight before waiting for replies (default 64).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static void expect_ok(int fd)
{
	char buf[KCTL_MSG_MAX + 1];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0) {
			fprintf(stderr, "loadgen: keventd closed the connection\n");
			exit(1);
		}
		if (strcmp(buf, "ok") == 0)
			return;
		if (strcmp(buf, "err") == 0) {
			fprintf(stderr, "loadgen: keventd: %s\n", buf + 4);
			exit(1);
		}
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

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: loadgen SOCKET N [OBJECTS] [WINDOW]\n");
		return 2;
	}
	const char *path = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	unsigned objects = argc > 3 ? (unsigned)atoi(argv[3]) : 64;
	unsigned window = argc > 4 ? (unsigned)atoi(argv[4]) : 64;
	if (!objects)
		objects = 1;
	if (!window)
		window = 1;
	uint64_t before = done_count(path);
	int fd = connect_to(path);
	struct strbuf msg = STRBUF_INIT;
	char object[64], payload[64];
	uint64_t t0 = now_monotonic_ns(), in_flight = 0;
	for (uint64_t i = 0; i < n; i++) {
		snprintf(object, sizeof(object), "/org/kernel/bench/%u", (unsigned)(i % objects));
		snprintf(payload, sizeof(payload), "N: %" PRIu64 "\n", i);
		const char *f[] = {"send", "power", object, "bench", payload};
		kctl_encode(&msg, f, 5);
		if (send(fd, msg.buf, msg.len, 0) < 0) {
			perror("send");
			return 1;
		}
		if (++in_flight == window) {
			for (; in_flight; in_flight--)
				expect_ok(fd);
		}
	}
	for (; in_flight; in_flight--)
		expect_ok(fd);
	uint64_t t1 = now_monotonic_ns();
	/* handled: poll the counters (a benchmark, not a test: polling is the measurement) */
	while (done_count(path) - before < n)
		usleep(1000);
	uint64_t t2 = now_monotonic_ns();
	close(fd);
	strbuf_release(&msg);
	double acc = (double)(t1 - t0) / 1e9, all = (double)(t2 - t0) / 1e9;
	printf("events %" PRIu64 "  accepted in %.3fs (%.0f/s)  handled in %.3fs (%.0f/s)\n", n,
	       acc, (double)n / acc, all, (double)n / all);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench-latency: send-to-handler latency through keventd.  Sends N events
 * through the control socket at RATE per second, each with the payload
 * "T: <CLOCK_MONOTONIC ns>", to a rule that runs
 *   bench-stamp FILE ${KEVENT_T}
 * then waits for FILE to hold N lines and prints the median and the 99th
 * percentile, in microseconds:  MEDIAN P99
 * Usage: bench-latency SOCKET RATE N FILE
 *        bench-latency --raw PROG RATE N FILE
 * --raw: the floor, with no keventd: at the same pace, posix_spawn
 * PROG FILE <now> itself (PROG is bench-stamp), so the figure is the
 * spawn's alone.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "util.h"
#include "bench-values.h"

extern char **environ;

int main(int argc, char **argv)
{
	const char *raw = argc == 6 && strcmp(argv[1], "--raw") == 0 ? argv[2] : NULL;
	if (raw) {
		argc--;
		argv++;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: bench-latency SOCKET RATE N FILE\n"
				"       bench-latency --raw PROG RATE N FILE\n");
		return 2;
	}
	unsigned rate = (unsigned)atoi(argv[2]);
	size_t n = strtoul(argv[3], NULL, 10);
	const char *file = argv[4];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	int fd = raw ? -1 : socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (raw)
		signal(SIGCHLD, SIG_IGN); /* the children reap themselves */
	else if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		return 1;
	}
	unlink(file);
	uint64_t *v = calloc(n + 1, sizeof(*v));
	if (!v || !rate)
		return 1;
	struct strbuf msg = STRBUF_INIT;
	char object[64], payload[64], buf[KCTL_MSG_MAX + 1];
	uint64_t period = 1000000000ull / rate, next = now_monotonic_ns();
	for (size_t i = 0; i < n; i++) {
		next += period;
		struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		snprintf(object, sizeof(object), "/org/kernel/bench/%zu", i % 64);
		if (raw) {
			char t[24];
			snprintf(t, sizeof(t), "%llu", (unsigned long long)now_monotonic_ns());
			char *av[] = {(char *)raw, (char *)file, t, NULL};
			pid_t pid;
			if (posix_spawn(&pid, raw, NULL, NULL, av, environ) != 0) {
				perror(raw);
				return 1;
			}
			continue;
		}
		snprintf(payload, sizeof(payload), "T: %llu\n",
			 (unsigned long long)now_monotonic_ns());
		const char *f[] = {"send", "power", object, "latency", payload};
		kctl_encode(&msg, f, 5);
		if (send(fd, msg.buf, msg.len, 0) < 0 || recv(fd, buf, sizeof(buf), 0) <= 0 ||
		    strcmp(buf, "ok") != 0) {
			fprintf(stderr, "bench-latency: send refused\n");
			return 1;
		}
	}
	size_t got = 0;
	for (int i = 0; i < 10000 && (got = bench_read_values(file, v, n)) < n; i++)
		usleep(1000);
	if (got < n) {
		fprintf(stderr, "bench-latency: %zu of %zu handlers ran\n", got, n);
		return 1;
	}
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	printf("%.0f %.0f\n", (double)v[n / 2] / 1e3, (double)v[(n * 99 + 99) / 100 - 1] / 1e3);
	strbuf_release(&msg);
	free(v);
	if (fd >= 0)
		close(fd);
	return 0;
}

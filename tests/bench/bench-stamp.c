// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench-stamp: the handler of run-bench.sh's latency test.  Run as
 *   bench-stamp FILE SENT_NS
 * it appends (now - SENT_NS) in nanoseconds, CLOCK_MONOTONIC, to FILE: the
 * time from the sender's send() to the handler's first instruction.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (argc != 3)
		return 2;
	unsigned long long now =
		(unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
	unsigned long long sent = strtoull(argv[2], NULL, 10);
	char line[32];
	int n = snprintf(line, sizeof(line), "%llu\n", now - sent);
	int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		return 1;
	return close(fd) < 0;
}

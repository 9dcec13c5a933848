// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench-trace: run-trace-bench.sh's load generator for the trace source.
 * It hits the tracepoint syscalls/sys_enter_lseek with lseek() on a
 * descriptor that is never open (the call fails at once with EBADF), so a
 * hit costs the calling code a system call and the tracepoint, nothing
 * more.  A trace entry with the filter "fd == 999999" passes the hits
 * made on BENCH_TRACE_FD_PASS and drops those on BENCH_TRACE_FD_MISS in
 * the kernel.
 *
 *   bench-trace hits N EVERY
 *     N hits, one in EVERY on the passing descriptor (100: 1 %; 1: all;
 *     0: none), 100 at a time with a pause of 1 ms between, the pace
 *     being the same whatever passes.  Prints the calls' own time per
 *     hit in nanoseconds (the pauses left out) and how many passed:
 *       NS_PER_HIT PASSED
 *   bench-trace stamp N RATE FILE
 *     N passing hits at RATE per second, each with the CLOCK_MONOTONIC
 *     time taken just before the call as lseek()'s offset (the field
 *     "offset" of the record), for a handler that runs
 *       bench-stamp FILE OFFSET
 *     then waits up to 60 s for FILE to hold N lines and prints the
 *     median and the 99th percentile in microseconds:  P50 P99 SAMPLES
 *   bench-trace cpu PID
 *     PID's CPU time so far, all its threads: nanoseconds from
 *     /proc/PID/task/ * /schedstat, clock ticks (utime + stime) from
 *     /proc/PID/stat, and its context switches (voluntary and not):
 *       NS TICKS SWITCHES
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-values.h"

#define BENCH_TRACE_FD_PASS 999999
#define BENCH_TRACE_FD_MISS 999998
#define BURST		    100

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pause_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void hit(int fd, off_t offset)
{
	/* fails with EBADF: only the tracepoint at the entry is wanted */
	if (lseek(fd, offset, SEEK_SET) >= 0)
		abort();
}

static int hits(unsigned long n, unsigned long every)
{
	uint64_t busy = 0;
	unsigned long passed = 0;
	for (unsigned long i = 0; i < n;) {
		uint64_t t0 = mono_ns();
		for (unsigned b = 0; b < BURST && i < n; b++, i++) {
			int pass = every && i % every == 0;
			passed += (unsigned long)pass;
			hit(pass ? BENCH_TRACE_FD_PASS : BENCH_TRACE_FD_MISS, 0);
		}
		busy += mono_ns() - t0;
		pause_ns(1000000);
	}
	printf("%llu %lu\n", (unsigned long long)(n ? busy / n : 0), passed);
	return 0;
}

static int stamp(unsigned long n, unsigned long rate, const char *file)
{
	uint64_t *v = calloc(n + 1, sizeof(*v));
	if (!v || !rate || !n)
		return 2;
	unlink(file);
	uint64_t period = 1000000000ull / rate, next = mono_ns();
	for (unsigned long i = 0; i < n; i++) {
		next += period;
		uint64_t now = mono_ns();
		if (next > now)
			pause_ns(next - now);
		hit(BENCH_TRACE_FD_PASS, (off_t)mono_ns());
	}
	size_t got = 0;
	for (uint64_t end = mono_ns() + 60000000000ull; mono_ns() < end; pause_ns(20000000))
		if ((got = bench_read_values(file, v, n)) >= n)
			break;
	if (!got) {
		fprintf(stderr, "bench-trace: no sample in %s\n", file);
		return 1;
	}
	qsort(v, got, sizeof(*v), bench_cmp_u64);
	size_t p99 = (got * 99 + 99) / 100;
	printf("%llu %llu %zu\n", (unsigned long long)(v[(got - 1) / 2] / 1000),
	       (unsigned long long)(v[p99 ? p99 - 1 : 0] / 1000), got);
	free(v);
	return 0;
}

static int cpu(const char *pid)
{
	char path[256], line[512];
	unsigned long long ns = 0, ticks = 0, switches = 0;
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	FILE *f = fopen(path, "r");
	/* utime and stime are the 14th and 15th fields; comm may hold spaces */
	char *p = f && fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	unsigned long long ut, st;
	if (f)
		fclose(f);
	if (!p ||
	    sscanf(p, ") %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
		fprintf(stderr, "bench-trace: cannot read %s\n", path);
		return 1;
	}
	ticks = ut + st;
	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		unsigned long long x;
		snprintf(path, sizeof(path), "/proc/%.32s/task/%.32s/schedstat", pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &x) == 1)
				ns += x;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%.32s/task/%.32s/status", pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			while (fgets(line, sizeof(line), f))
				if (sscanf(line, "voluntary_ctxt_switches: %llu", &x) == 1 ||
				    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &x) == 1)
					switches += x;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	printf("%llu %llu %llu\n", ns, ticks, switches);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "hits") == 0)
		return hits(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
	if (argc == 5 && strcmp(argv[1], "stamp") == 0)
		return stamp(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10), argv[4]);
	if (argc == 3 && strcmp(argv[1], "cpu") == 0)
		return cpu(argv[2]);
	fprintf(stderr, "usage: bench-trace hits N EVERY\n"
			"       bench-trace stamp N RATE FILE\n"
			"       bench-trace cpu PID\n");
	return 2;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench-spawn: the cost of a cgroup per handler run (keventd(8),
 * Containment).  Run as root, by hand:
 *   bench-spawn CGROUP_DIR [RUNS]
 * where CGROUP_DIR is a cgroup v2 directory to use as keventd's delegated
 * subtree (e.g. mkdir /sys/fs/cgroup/bench).  It spawns /bin/true RUNS
 * times (default 2000) as keventd does, one at a time, without a cgroup
 * (vfork) and with one per run (mkdir, clone3 into it, cgroup.kill,
 * rmdir), alternating in rounds of 100 so that both see the same machine,
 * and prints runs/s of each side by side.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "exec.h"
#include "plan.h"
#include "util.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int run_once(const struct kplan *plan, const struct krule *r)
{
	struct kproc p;
	const char *what = "";
	int rc = kexec_spawn(plan, r, &p, &what);
	if (rc < 0) {
		fprintf(stderr, "bench-spawn: %s: %s\n", what, strerror(-rc));
		return rc;
	}
	siginfo_t si;
	(void)waitid(P_PIDFD, (id_t)p.pidfd, &si, WEXITED);
	kproc_close(&p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench-spawn CGROUP_DIR [RUNS]\n");
		return 2;
	}
	long runs = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
	struct kcgroup *cg = NULL;
	const char *why = "";
	int rc = kcgroup_open(argv[1], (int)getpid(), &cg, &why);
	if (rc < 0) {
		fprintf(stderr, "bench-spawn: %s: %s: %s\n", argv[1], why, strerror(-rc));
		return 1;
	}
	struct krule r = {.name = "bench"};
	char *argv_true[] = {"/bin/true", NULL};
	char *envp[] = {"PATH=" KEVENT_HANDLER_PATH, NULL};
	struct kplan plan = {.argv = argv_true, .argc = 1, .envp = envp, .n_env = 1};
	uint64_t t_plain = 0, t_cg = 0, n = 0;
	for (long done = 0; done < runs; done += 100) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < 100; i++) {
			plan.cgroup_fd = -1;
			if (run_once(&plan, &r) < 0)
				return 1;
		}
		uint64_t t1 = now_ns();
		for (int i = 0; i < 100; i++) {
			char name[KCGROUP_NAME_MAX];
			int fd;
			kcgroup_run_name("bench", 1, ++n, name);
			if ((rc = kcgroup_run_create(cg, name, NULL, &fd, &why)) < 0) {
				fprintf(stderr, "bench-spawn: %s: %s\n", why, strerror(-rc));
				return 1;
			}
			plan.cgroup_fd = fd;
			if (run_once(&plan, &r) < 0)
				return 1;
			(void)kcgroup_run_kill(fd);
			close(fd);
			while (kcgroup_run_remove(cg, name) == -EBUSY)
				; /* the exited child leaves the cgroup a moment later */
		}
		uint64_t t2 = now_ns();
		t_plain += t1 - t0;
		t_cg += t2 - t1;
	}
	double plain = (double)runs * 1e9 / (double)t_plain,
	       with = (double)runs * 1e9 / (double)t_cg;
	printf("%-28s %10s\n", "spawn of /bin/true", "runs/s");
	printf("%-28s %10.0f\n", "process group (vfork)", plain);
	printf("%-28s %10.0f\n", "a cgroup per run (clone3)", with);
	printf("cost of the cgroup: %.1f %% of the spawn rate (%.1f us a run)\n",
	       100.0 * (1.0 - with / plain), (1e6 / with) - (1e6 / plain));
	kcgroup_free(cg);
	return 0;
}

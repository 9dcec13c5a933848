// SPDX-License-Identifier: GPL-2.0-or-later
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

int kexec_resolve(const char *prog, char **out)
{
	if (strchr(prog, '/')) {
		if (access(prog, X_OK) < 0)
			return -errno;
		*out = strdup(prog);
		return *out ? 0 : -ENOMEM;
	}
	int rc = -ENOENT;
	const char *p = KEVENT_HANDLER_PATH;
	while (*p) {
		size_t n = strcspn(p, ":");
		char *cand;
		if (asprintf(&cand, "%.*s/%s", (int)n, p, prog) < 0)
			return -ENOMEM;
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0) {
				*out = cand;
				return 0;
			}
			rc = -EACCES;
		}
		free(cand);
		p += n + (p[n] == ':');
	}
	return rc;
}

void kproc_close(struct kproc *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	p->pidfd = p->out_fd = p->err_fd = -1;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The descriptors /proc/self/fd lists from lowfd up, closed; false when
 * /proc cannot be read.  getdents64() into a buffer on the stack: no
 * malloc, so a vfork child may call it.  A pass that closed something is
 * followed by another from the start, as a directory read while it
 * changes may skip entries. */
static bool close_listed(int lowfd)
{
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	bool again = true;
	while (again) {
		again = false;
		char buf[2048] __attribute__((aligned(8)));
		long n;
		if (lseek(dfd, 0, SEEK_SET) < 0)
			break;
		while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				const struct linux_dirent64 *d = (const void *)(buf + off);
				off += d->d_reclen;
				long fd = 0;
				const char *c = d->d_name;
				for (; *c >= '0' && *c <= '9' && fd < 0x7fffffff; c++)
					fd = fd * 10 + (*c - '0');
				if (*c || c == d->d_name || fd < lowfd || fd == dfd)
					continue;
				close((int)fd);
				again = true;
			}
		}
	}
	close(dfd);
	return true;
}

int kexec_close_from(int lowfd, bool try_close_range)
{
	if (try_close_range && close_range((unsigned)lowfd, ~0u, 0) == 0)
		return 0;
	if (close_listed(lowfd))
		return 0;
	/* no /proc: every number the descriptor limit allows */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	rlim_t top =
		rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 0x7fffffff ? 0x7fffffff : rl.rlim_max;
	for (rlim_t fd = (rlim_t)lowfd; fd < top; fd++)
		close((int)fd);
	return 0;
}

/* The kernel's struct sigaction, for rt_sigaction(2): glibc's sigaction()
 * refuses its own internal signals (32, 33), which must be reset too. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

/*
 * The signals not at their default in keventd: ignored ones (SIGPIPE, and
 * whatever whoever started keventd left ignored), which a handler would
 * inherit, and caught ones, whose handler must not run in a child that
 * still shares keventd's memory (keventd catches none: it reads signals
 * from a signalfd).  Read once, at the first spawn (keventd sets its
 * dispositions at start-up and never again), rather than resetting all 62
 * in every child: that was 17 us of system calls per handler, with keventd
 * stopped in vfork() meanwhile.  A signal whose disposition cannot be read
 * is reset.
 */
static uint64_t non_default_signals(void)
{
	static uint64_t mask;
	static bool known;
	for (int sig = 1; !known && sig <= 64; sig++) {
		struct ksigaction cur;
		if (sig != SIGKILL && sig != SIGSTOP &&
		    (syscall(SYS_rt_sigaction, sig, NULL, &cur, sizeof(uint64_t)) != 0 ||
		     cur.handler != SIG_DFL))
			mask |= 1ull << (sig - 1);
	}
	known = true;
	return mask;
}

/* In a child: the signals of mask to their default disposition (every
 * other one is at its default already), none blocked. */
static void reset_signals(uint64_t mask)
{
	struct ksigaction dfl = {.handler = SIG_DFL};
	uint64_t none = 0;
	for (int sig = 1; sig <= 64; sig++)
		if (mask & (1ull << (sig - 1)))
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(uint64_t));
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(uint64_t));
}

static _Noreturn void child_fail(const char *msg, size_t len)
{
	ssize_t _unused_ n = write(2, msg, len);
	_exit(126);
}

#define CHILD_FAIL(msg) child_fail(msg, sizeof(msg) - 1)

/* The child side of the fork path (rules with a user, limits or
 * no_new_privs).  Only async-signal-safe calls: no malloc, no stdio. */
static _Noreturn void child(const char *path, const struct kplan *plan, const struct krule *r,
			    const struct kuser_ids *ids, int devnull, int out_w, int err_w,
			    uint64_t to_reset, int join_cgroup)
{
	if (join_cgroup >= 0) {
		/* no CLONE_INTO_CGROUP: into the run's cgroup before anything runs */
		int fd = openat(join_cgroup, "cgroup.procs", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			CHILD_FAIL("keventd: cannot enter the run's cgroup\n");
		close(fd);
	}
	reset_signals(to_reset);
	if (setsid() < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
		_exit(126);
	if (kexec_close_from(3, true) < 0)
		CHILD_FAIL("keventd: cannot close the handler's other descriptors\n");
	if (chdir("/") < 0)
		_exit(126);
	umask(022);
	const struct krule_extra *x = krule_extra(r);
	for (size_t i = 0; i < x->n_limits; i++) {
		rlim_t v = x->limits[i].value == UINT64_MAX ? RLIM_INFINITY
							    : (rlim_t)x->limits[i].value;
		struct rlimit rl = {v, v};
		if (setrlimit(x->limits[i].resource, &rl) < 0)
			CHILD_FAIL("keventd: cannot set the rule's resource limits\n");
	}
	if (ids && (setgroups(ids->n_groups, ids->groups) < 0 ||
		    setresgid(ids->gid, ids->gid, ids->gid) < 0 ||
		    setresuid(ids->uid, ids->uid, ids->uid) < 0))
		CHILD_FAIL("keventd: cannot switch to the rule's user\n");
	if (r->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		CHILD_FAIL("keventd: cannot set no_new_privs\n");
	execve(path, plan->argv, plan->envp);
	_exit(errno == ENOENT ? 127 : 126);
}

/* clone3(2)'s arguments, as the kernel has them (5.7 for cgroup). */
struct kclone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};
#define KCLONE_INTO_CGROUP 0x200000000ull

/* A child straight in the cgroup cgfd: clone3() with CLONE_INTO_CGROUP, so
 * that not one instruction of it runs outside; -ENOSYS (or what an older
 * kernel says to the flag) when the kernel cannot, remembered. */
static pid_t clone_into_cgroup(int cgfd)
{
	static bool unsupported;
	if (unsupported) {
		errno = ENOSYS;
		return -1;
	}
	struct kclone_args args = {
		.flags = KCLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgfd};
	long p = syscall(SYS_clone3, &args, sizeof(args));
	if (p < 0 && (errno == ENOSYS || errno == E2BIG))
		unsupported = true;
	return (pid_t)p;
}

static int spawn_fork(const char *path, const struct kplan *plan, const struct krule *r,
		      int devnull, int out_w, int err_w, pid_t *pid, const char **what)
{
	const struct krule_extra *x = krule_extra(r);
	if (x->user && !x->ids) {
		*what = "the rule's user"; /* never: the parser resolves it */
		return -ESRCH;
	}
	uint64_t to_reset = non_default_signals();
	int join = -1;
	pid_t p = -1;
	if (plan->cgroup_fd >= 0) {
		p = clone_into_cgroup(plan->cgroup_fd);
		if (p < 0 && errno != ENOSYS && errno != E2BIG) {
			*what = "clone3 into the run's cgroup";
			return -errno;
		}
		if (p < 0)
			join = plan->cgroup_fd;
	}
	if (p < 0)
		p = fork();
	if (p < 0) {
		*what = "fork";
		return -errno;
	}
	if (p == 0)
		child(path, plan, r, x->user ? x->ids : NULL, devnull, out_w, err_w, to_reset,
		      join);
	*pid = p;
	return 0;
}

/*
 * The common path: vfork (the child borrows our memory until it execs, so
 * spawning costs the same however large keventd grows) and exec.  Unlike
 * glibc's posix_spawn, which leaves its internal signals ignored in the
 * child, this gives the handler truly default dispositions.
 */
static int spawn_vfork(const char *path, const struct kplan *plan, int devnull, int out_w,
		       int err_w, pid_t *pid, const char **what)
{
	sigset_t all, old;
	volatile int child_errno = 0;
	/* no handler of ours may run in the child while it shares our memory */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	uint64_t to_reset = non_default_signals();
	pid_t p = vfork();
	if (p == 0) {
		reset_signals(to_reset);
		if (setsid() < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 ||
		    dup2(err_w, 2) < 0 || kexec_close_from(3, true) < 0 || chdir("/") < 0) {
			child_errno = errno;
			_exit(126);
		}
		/* the umask is inherited: keventd sets 022 at start-up */
		execve(path, plan->argv, plan->envp);
		child_errno = errno;
		_exit(127);
	}
	int err = p < 0 ? errno : child_errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (p < 0) {
		*what = "vfork";
		return -err;
	}
	if (err) {
		/* it never ran the program: collect it and say why */
		waitpid(p, NULL, 0);
		*what = "exec";
		return -err;
	}
	*pid = p;
	return 0;
}

int kexec_spawn(const struct kplan *plan, const struct krule *r, struct kproc *p, const char **what)
{
	_cleanup_free_ char *path = NULL;
	int out[2] = {-1, -1}, err[2] = {-1, -1};
	int devnull = -1;
	pid_t pid = -1;
	*p = (struct kproc){.pid = -1, .pidfd = -1, .out_fd = -1, .err_fd = -1};

	int rc = kexec_resolve(plan->argv[0], &path);
	if (rc < 0) {
		*what = "finding the program";
		return rc;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		rc = -errno;
		*what = "pipe";
		goto out;
	}
	/* opened once and kept (close-on-exec): one open() and close() less per run */
	static int devnull_fd = -1;
	if (devnull_fd < 0)
		devnull_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	devnull = devnull_fd;
	if (devnull < 0) {
		rc = -errno;
		*what = "opening /dev/null";
		goto out;
	}
	if (krule_extra(r)->user || r->no_new_privs || krule_extra(r)->n_limits ||
	    plan->cgroup_fd >= 0)
		/* credentials, limits, no_new_privs, a cgroup: work for a child of
		 * its own */
		rc = spawn_fork(path, plan, r, devnull, out[1], err[1], &pid, what);
	else
		rc = spawn_vfork(path, plan, devnull, out[1], err[1], &pid, what);
	if (rc < 0)
		goto out;
	p->pid = pid;
	p->pidfd = pidfd_open(pid, 0);
	if (p->pidfd < 0) {
		rc = -errno;
		*what = "pidfd_open";
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out;
	}
	p->out_fd = TAKE_FD(out[0]);
	p->err_fd = TAKE_FD(err[0]);
	fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
	rc = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	if (rc < 0)
		kproc_close(p);
	return rc;
}

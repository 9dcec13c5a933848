// SPDX-License-Identifier: GPL-2.0-or-later
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "statedir.h"
#include "util.h"

char *tu_diag(const struct kdiag *d)
{
	struct strbuf sb = STRBUF_INIT;
	kdiag_format(d, &sb);
	return strbuf_steal(&sb);
}

struct kfile *tu_parse(const char *yaml, const char *path)
{
	struct kdiags d = {0};
	struct kfile *f = NULL;
	int rc = krules_parse(yaml, strlen(yaml), path ? path : "t.yaml", &f, &d);
	for (size_t i = 0; i < d.n; i++) {
		char *s = tu_diag(&d.v[i]);
		print_error("unexpected: %s\n", s);
		free(s);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(d.n, 0);
	assert_non_null(f);
	kdiags_free(&d);
	return f;
}

struct kdiags tu_parse_fail(const char *yaml, const char *path)
{
	struct kdiags d = {0};
	struct kfile *f = NULL;
	int rc = krules_parse(yaml, strlen(yaml), path ? path : "t.yaml", &f, &d);
	assert_int_equal(rc, -EINVAL);
	assert_null(f);
	assert_true(d.n > 0);
	return d;
}

struct kevent *tu_event(int type, const char *object, const char *signal, const char *payload)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kevent_new(type, object, signal, payload, KEVENT_SOURCE_SOCKET, 1, 2, NULL, 0, &ev,
			    &why);
	if (rc < 0)
		print_error("bad test event: %s\n", why ? why : "?");
	assert_int_equal(rc, 0);
	return ev;
}

char *tu_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	return s;
}

char *tu_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *p = tu_printf("%s/kevent-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(p));
	assert_int_equal(chmod(p, 0755), 0);
	return p;
}

int tu_dirfd(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

struct kstatedir *tu_statedir(const char *dir)
{
	struct kstatedir *sd = NULL;
	const char *why = NULL;
	int rc = kstatedir_open(dir, &sd, &why);
	if (rc < 0)
		fail_msg("state directory %s: %s: %s", dir, why ? why : "", strerror(-rc));
	return sd;
}

char *tu_subdir(const char *dir, const char *sub)
{
	char *p = tu_printf("%s/%s", dir, sub);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chmod(p, 0755), 0);
	return p;
}

void tu_write(const char *dir, const char *name, const char *content, mode_t mode)
{
	char *p = tu_printf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	size_t len = strlen(content);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	free(p);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tu_rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char **tu_strv_dup(char *const *v)
{
	size_t n = strv_length(v);
	char **copy = calloc(n + 1, sizeof(*copy));
	assert_non_null(copy);
	for (size_t i = 0; i < n; i++) {
		copy[i] = strdup(v[i]);
		assert_non_null(copy[i]);
	}
	return copy;
}

static volatile sig_atomic_t term_status;

static void exit_on_term(int sig)
{
	(void)sig;
	_exit(term_status);
}

static _Noreturn void child_main(const struct tu_child *how, int out_w, int err_w,
				 const sigset_t *term)
{
	(void)setpgid(0, 0);
	if (dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
		_exit(126);
	if (how->term == TU_TERM_IGNORE) {
		signal(SIGTERM, SIG_IGN);
	} else if (how->term == TU_TERM_EXIT) {
		term_status = how->status;
		signal(SIGTERM, exit_on_term);
	}
	/* blocked since before the fork: a SIGTERM sent meanwhile comes now */
	sigprocmask(SIG_UNBLOCK, term, NULL);
	while (how->hang)
		pause();
	_exit(how->status);
}

int tu_spawn(const struct tu_child *how, struct kproc *p)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1};
	*p = (struct kproc){.pid = -1, .pidfd = -1, .out_fd = -1, .err_fd = -1};
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		int rc = -errno;
		for (int i = 0; i < 2; i++) {
			if (out[i] >= 0)
				close(out[i]);
			if (err[i] >= 0)
				close(err[i]);
		}
		return rc;
	}
	sigset_t term, old;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	pid_t pid = fork();
	if (pid == 0)
		child_main(how, out[1], err[1], &term);
	int rc = pid < 0 ? -errno : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(out[1]);
	close(err[1]);
	if (rc == 0) {
		/* as the child does: the group exists before anyone signals it */
		(void)setpgid(pid, pid);
		p->pidfd = pidfd_open(pid, 0);
		if (p->pidfd < 0) {
			rc = -errno;
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
	if (rc < 0) {
		close(out[0]);
		close(err[0]);
		return rc;
	}
	p->pid = pid;
	p->out_fd = out[0];
	p->err_fd = err[0];
	fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

void tu_reap(pid_t pid)
{
	siginfo_t si = {0};
	if (pid <= 0 || waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return; /* reaped already: the pid may be someone else's by now */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void poll_fire(struct ktimer *t, void *userdata)
{
	struct tu_poll *p = userdata;
	(void)t;
	p->timer = NULL;
	if (p->cond(p->userdata)) {
		p->then(p->userdata);
		return;
	}
	assert_int_equal(
		kloop_add_timer(p->loop, now_monotonic_ns() + 1000000ull, poll_fire, p, &p->timer),
		0);
}

void tu_poll_arm(struct tu_poll *p, struct kloop *l, bool (*cond)(void *), void (*then)(void *),
		 void *userdata)
{
	*p = (struct tu_poll){.loop = l, .cond = cond, .then = then, .userdata = userdata};
	assert_int_equal(kloop_add_timer(l, 0, poll_fire, p, &p->timer), 0);
}

void tu_poll_cancel(struct tu_poll *p)
{
	ktimer_cancel(p->timer);
	p->timer = NULL;
}

static void deadline_expired(struct ktimer *t, void *userdata)
{
	struct tu_deadline *dl = userdata;
	(void)t;
	dl->timer = NULL;
	dl->expired = true;
	print_error("the loop was still running after its deadline\n");
	kloop_exit(dl->loop, -ETIME);
}

void tu_deadline_arm(struct tu_deadline *dl, struct kloop *l, uint64_t ms)
{
	*dl = (struct tu_deadline){.loop = l};
	assert_int_equal(kloop_add_timer(l, now_monotonic_ns() + ms * 1000000ull, deadline_expired,
					 dl, &dl->timer),
			 0);
}

bool tu_deadline_run(struct tu_deadline *dl)
{
	int rc = kloop_run(dl->loop);
	if (dl->expired)
		return false;
	ktimer_cancel(dl->timer);
	dl->timer = NULL;
	assert_int_equal(rc, 0);
	return true;
}

void tu_tree_make(struct tu_tree *t)
{
	t->root = tu_mkdtemp();
	t->etc = tu_subdir(t->root, "etc");
	t->run = tu_subdir(t->root, "run");
	t->lib = tu_subdir(t->root, "lib");
	t->dirs[0] = t->etc;
	t->dirs[1] = t->run;
	t->dirs[2] = t->lib;
}

void tu_tree_free(struct tu_tree *t)
{
	tu_rm_rf(t->root);
	free(t->root);
	free(t->etc);
	free(t->run);
	free(t->lib);
}

void tu_capture_begin(struct tu_capture *c)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	c->fd = dup(fileno(f));
	fclose(f);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->fd >= 0 && c->saved >= 0);
	assert_int_equal(dup2(c->fd, STDERR_FILENO), STDERR_FILENO);
}

char *tu_capture_end(struct tu_capture *c)
{
	assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
	close(c->saved);
	char *text = NULL;
	size_t len;
	assert_int_equal(lseek(c->fd, 0, SEEK_SET), 0);
	assert_int_equal(read_fd(c->fd, 1 << 20, &text, &len), 0);
	close(c->fd);
	return text;
}

static unsigned skipped;

void tu_skipped(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("SKIP: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	skipped++;
}

int tu_result(int failed)
{
	if (failed)
		return failed;
	if (skipped) {
		fprintf(stderr, "%u test(s) skipped: the program exits 77\n", skipped);
		return 77;
	}
	return 0;
}

struct ynode *tu_yaml(const char *text)
{
	struct ynode *root = NULL;
	unsigned line = 0, col = 0;
	char *msg = NULL;
	if (ytree_parse(text, strlen(text), &root, &line, &col, &msg) != 0)
		fail_msg("%u:%u: %s, in:\n%s", line, col, msg ? msg : "?", text);
	free(msg);
	return root;
}

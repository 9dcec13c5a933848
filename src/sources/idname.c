// SPDX-License-Identifier: GPL-2.0-or-later
#include "idname.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util.h"

struct request {
	uint64_t token;
	uint32_t id;
	uint32_t group;
};

struct answer {
	uint64_t token;
	uint32_t found;
	char name[KIDNAME_MAX];
};

struct kidname {
	int req_w, ans_r; /* the loop's ends; the thread owns the others */
	struct kio *io;
	kidname_fn fn;
	void *userdata;
	unsigned outstanding;
};

/* Writes or reads all of a record (less than PIPE_BUF: one piece). */
static bool whole(ssize_t n, size_t size)
{
	return n >= 0 && (size_t)n == size;
}

struct ends {
	int req_r, ans_w;
};

static void *run(void *arg)
{
	struct ends e = *(struct ends *)arg;
	free(arg);
	struct request q;
	char buf[16384];
	for (;;) {
		ssize_t n = read(e.req_r, &q, sizeof(q));
		if (n < 0 && errno == EINTR)
			continue;
		if (!whole(n, sizeof(q)))
			break; /* the loop's end closed */
		struct answer a = {.token = q.token};
		const char *name = NULL;
		if (q.group) {
			struct group gr, *r = NULL;
			if (getgrgid_r((gid_t)q.id, &gr, buf, sizeof(buf), &r) == 0 && r)
				name = r->gr_name;
		} else {
			struct passwd pw, *r = NULL;
			if (getpwuid_r((uid_t)q.id, &pw, buf, sizeof(buf), &r) == 0 && r)
				name = r->pw_name;
		}
		if (name && strlen(name) < sizeof(a.name)) {
			strcpy(a.name, name);
			a.found = 1;
		}
		do
			n = write(e.ans_w, &a, sizeof(a));
		while (n < 0 && errno == EINTR);
		if (!whole(n, sizeof(a)))
			break; /* nobody listens */
	}
	close(e.req_r);
	close(e.ans_w);
	return NULL;
}

static void on_answer(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kidname *r = userdata;
	(void)io, (void)events;
	struct answer a;
	while (whole(read(fd, &a, sizeof(a)), sizeof(a))) {
		if (r->outstanding)
			r->outstanding--;
		a.name[sizeof(a.name) - 1] = '\0';
		r->fn(r->userdata, a.token, a.found ? a.name : NULL);
	}
}

int kidname_new(struct kloop *loop, kidname_fn fn, void *userdata, struct kidname **out)
{
	int req[2] = {-1, -1}, ans[2] = {-1, -1};
	struct kidname *r = calloc(1, sizeof(*r));
	struct ends *e = malloc(sizeof(*e));
	int rc = !r || !e ? -ENOMEM : 0;
	if (rc == 0 && (pipe2(req, O_CLOEXEC) < 0 || pipe2(ans, O_CLOEXEC | O_NONBLOCK) < 0))
		rc = -errno;
	/* the loop never waits to ask */
	if (rc == 0 && fcntl(req[1], F_SETFL, O_NONBLOCK) < 0)
		rc = -errno;
	if (rc == 0) {
		r->req_w = req[1];
		r->ans_r = ans[0];
		r->fn = fn;
		r->userdata = userdata;
		rc = kloop_add_io(loop, ans[0], EPOLLIN, on_answer, r, &r->io);
	}
	if (rc == 0) {
		*e = (struct ends){req[0], ans[1]};
		/* no signal is ever taken on the thread: the loop takes them */
		sigset_t all, old;
		sigfillset(&all);
		pthread_attr_t attr;
		pthread_t th;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = -pthread_create(&th, &attr, run, e);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	if (rc < 0) {
		kio_free(r ? r->io : NULL);
		for (int i = 0; i < 2; i++) {
			if (req[i] >= 0)
				close(req[i]);
			if (ans[i] >= 0)
				close(ans[i]);
		}
		free(r);
		free(e);
		return rc;
	}
	*out = r;
	return 0;
}

int kidname_ask(struct kidname *r, bool group, uint32_t id, uint64_t token)
{
	if (r->outstanding >= KIDNAME_OUTSTANDING)
		return -EBUSY;
	struct request q = {.token = token, .id = id, .group = group};
	ssize_t n = write(r->req_w, &q, sizeof(q));
	if (!whole(n, sizeof(q)))
		return n < 0 && errno != EAGAIN ? -errno : -EBUSY;
	r->outstanding++;
	return 0;
}

unsigned kidname_outstanding(const struct kidname *r)
{
	return r->outstanding;
}

void kidname_free(struct kidname *r)
{
	if (!r)
		return;
	kio_free(r->io);
	/* the thread reads the end, or writes to none, and goes */
	close(r->req_w);
	close(r->ans_r);
	free(r);
}

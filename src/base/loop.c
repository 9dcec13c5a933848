// SPDX-License-Identifier: GPL-2.0-or-later
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "util.h"

struct kio {
	struct kloop *loop;
	int fd;
	uint32_t events;
	kio_fn fn;
	void *userdata;
	bool dead;
	struct kio *next_dead;
};

struct ktimer {
	struct kloop *loop;
	uint64_t deadline;
	ktimer_fn fn;
	void *userdata;
	bool firing;
	struct ktimer *prev, *next; /* sorted by deadline */
};

struct kloop {
	int epfd;
	int tfd;
	struct kio *timer_io;
	struct ktimer *timers;
	uint64_t armed; /* deadline the timerfd is set to; 0 = none */
	struct kio *dead;
	unsigned n_ios;
	uint64_t wakeups; /* epoll_wait() returns: a loop that spins shows here */
	bool exiting;
	int exit_code;
	kloop_fn after;
	void *after_userdata;
};

static void timer_fd_ready(struct kio *io, int fd, uint32_t events, void *userdata);

int kloop_new(struct kloop **out)
{
	struct kloop *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int rc = l->epfd < 0 || l->tfd < 0 ? -errno : 0;
	if (rc == 0)
		rc = kloop_add_io(l, l->tfd, EPOLLIN, timer_fd_ready, l, &l->timer_io);
	if (rc < 0) {
		if (l->epfd >= 0)
			close(l->epfd);
		if (l->tfd >= 0)
			close(l->tfd);
		free(l->timer_io);
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

static void reap_dead(struct kloop *l)
{
	while (l->dead) {
		struct kio *io = l->dead;
		l->dead = io->next_dead;
		free(io);
	}
}

void kloop_free(struct kloop *l)
{
	if (!l)
		return;
	while (l->timers)
		ktimer_cancel(l->timers);
	kio_free(l->timer_io);
	reap_dead(l);
	close(l->tfd);
	close(l->epfd);
	free(l);
}

int kloop_add_io(struct kloop *l, int fd, uint32_t events, kio_fn fn, void *userdata,
		 struct kio **out)
{
	struct kio *io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	*io = (struct kio){.loop = l, .fd = fd, .events = events, .fn = fn, .userdata = userdata};
	struct epoll_event ev = {.events = events, .data.ptr = io};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int rc = -errno;
		free(io);
		return rc;
	}
	l->n_ios++;
	*out = io;
	return 0;
}

int kio_set_events(struct kio *io, uint32_t events)
{
	if (io->events == events)
		return 0;
	struct epoll_event ev = {.events = events, .data.ptr = io};
	if (epoll_ctl(io->loop->epfd, EPOLL_CTL_MOD, io->fd, &ev) < 0)
		return -errno;
	io->events = events;
	return 0;
}

uint32_t kio_events(const struct kio *io)
{
	return io->events;
}

void kio_free(struct kio *io)
{
	if (!io || io->dead)
		return;
	struct kloop *l = io->loop;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, io->fd, NULL);
	io->dead = true;
	io->next_dead = l->dead;
	l->dead = io;
	l->n_ios--;
}

static void rearm(struct kloop *l)
{
	uint64_t want = l->timers ? l->timers->deadline : 0;
	if (want == l->armed)
		return;
	struct itimerspec its = {0};
	if (want) {
		/* 0 would disarm: a deadline in the past still fires at once */
		its.it_value.tv_sec = (time_t)(want / 1000000000ull);
		its.it_value.tv_nsec = (long)(want % 1000000000ull);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	l->armed = want;
}

int kloop_add_timer(struct kloop *l, uint64_t deadline, ktimer_fn fn, void *userdata,
		    struct ktimer **out)
{
	struct ktimer *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (!deadline)
		deadline = 1; /* 0 means "not armed" below; 1 ns is as much in the past */
	*t = (struct ktimer){.loop = l, .deadline = deadline, .fn = fn, .userdata = userdata};
	struct ktimer **pp = &l->timers, *prev = NULL;
	while (*pp && (*pp)->deadline <= deadline) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	t->next = *pp;
	t->prev = prev;
	if (*pp)
		(*pp)->prev = t;
	*pp = t;
	rearm(l);
	if (out)
		*out = t;
	return 0;
}

static void timer_unlink(struct ktimer *t)
{
	struct kloop *l = t->loop;
	if (t->prev)
		t->prev->next = t->next;
	else
		l->timers = t->next;
	if (t->next)
		t->next->prev = t->prev;
}

void ktimer_cancel(struct ktimer *t)
{
	if (!t || t->firing)
		return;
	struct kloop *l = t->loop;
	timer_unlink(t);
	free(t);
	rearm(l);
}

static void timer_fd_ready(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kloop *l = userdata;
	uint64_t expirations;
	(void)io;
	(void)events;
	ssize_t _unused_ n = read(fd, &expirations, sizeof(expirations));
	l->armed = 0;
	uint64_t now = now_monotonic_ns();
	/* Fire what is due now; timers added by callbacks wait for the next round. */
	while (l->timers && l->timers->deadline <= now && !l->exiting) {
		struct ktimer *t = l->timers;
		timer_unlink(t);
		t->firing = true;
		t->fn(t, t->userdata);
		free(t);
	}
	rearm(l);
}

int kloop_run(struct kloop *l)
{
	struct epoll_event evs[64];
	while (!l->exiting) {
		int n = epoll_wait(l->epfd, evs, (int)ARRAY_SIZE(evs), -1);
		l->wakeups++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n && !l->exiting; i++) {
			struct kio *io = evs[i].data.ptr;
			if (!io->dead)
				io->fn(io, io->fd, evs[i].events, io->userdata);
		}
		reap_dead(l);
		if (l->after)
			l->after(l->after_userdata);
	}
	l->exiting = false; /* so that it may be run again */
	return l->exit_code;
}

void kloop_set_after(struct kloop *l, kloop_fn fn, void *userdata)
{
	l->after = fn;
	l->after_userdata = userdata;
}

uint64_t kloop_wakeups(const struct kloop *l)
{
	return l->wakeups;
}

void kloop_exit(struct kloop *l, int code)
{
	l->exiting = true;
	l->exit_code = code;
}

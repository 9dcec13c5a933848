/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event loop: epoll over file descriptors, and timers on one timerfd.
 * Callbacks run from kloop_run(); a watch or timer freed from inside a
 * callback is never called again, even later in the same batch.
 */
#ifndef KEVENT_LOOP_H
#define KEVENT_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct kloop;
struct kio;
struct ktimer;

typedef void (*kio_fn)(struct kio *io, int fd, uint32_t events, void *userdata);
typedef void (*ktimer_fn)(struct ktimer *t, void *userdata);
typedef void (*kloop_fn)(void *userdata);

int kloop_new(struct kloop **out);
/* Frees the loop; watches and timers still registered are freed too. */
void kloop_free(struct kloop *l);

/* Watches fd (EPOLLIN, EPOLLOUT...).  Does not take ownership of fd. */
int kloop_add_io(struct kloop *l, int fd, uint32_t events, kio_fn fn, void *userdata,
		 struct kio **out);
int kio_set_events(struct kio *io, uint32_t events);
uint32_t kio_events(const struct kio *io);
/* Stops watching and frees the watch (not the fd).  NULL is fine. */
void kio_free(struct kio *io);

/* Calls fn once at the CLOCK_MONOTONIC time deadline_ns. */
int kloop_add_timer(struct kloop *l, uint64_t deadline_ns, ktimer_fn fn, void *userdata,
		    struct ktimer **out);
/* Cancels and frees a timer that has not fired yet.  NULL is fine; a timer
 * is freed automatically after it fires. */
void ktimer_cancel(struct ktimer *t);

/* Runs until kloop_exit(); returns the code given to it, or -errno.  It may
 * be run again after (tests run it a step at a time). */
int kloop_run(struct kloop *l);
void kloop_exit(struct kloop *l, int code);
/* Calls fn at the end of each round of kloop_run(), once everything
 * epoll_wait() found is handled, before it waits again (one; NULL: none). */
void kloop_set_after(struct kloop *l, kloop_fn fn, void *userdata);
/* How many times kloop_run() has woken from epoll_wait(), all runs. */
uint64_t kloop_wakeups(const struct kloop *l);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An event source: something that turns outside input into bounded,
 * checked events and hands them on through its sink.  A source knows the
 * sink's callbacks only, never the daemon behind them, so data flows one
 * way (source -> sink) and a test can feed a source into a fake sink.
 * Each source lives in its own file (source-*.c) behind this interface.
 */
#ifndef KEVENT_SOURCE_H
#define KEVENT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct kfdstore;
struct kstatedir;
struct kloop;
struct strbuf;

/* What a source may tell its sink.  Every callback is called from the
 * loop, never from inside another callback of the same sink. */
struct ksink_ops {
	/* An accepted event, taken (ownership too).  0, or -ENOMEM: the
	 * event was counted and freed all the same. */
	int (*submit)(void *userdata, struct kevent *ev);
	/* Input refused at the edge: counted, and logged at a bounded rate.
	 * why is a static string or a string the callee copies. */
	void (*reject)(void *userdata, enum kevent_source src, const char *why);
	/* A receive buffer overrun (ENOBUFS): input was lost in the kernel. */
	void (*overrun)(void *userdata, enum kevent_source src);
	/* n events known lost (a gap in sequence numbers). */
	void (*lost)(void *userdata, enum kevent_source src, uint64_t n);
	/* The next event submitted had to be cut to fit the limits. */
	void (*truncated)(void *userdata, enum kevent_source src);
	/* How many more events src may submit now; 0: stop reading until the
	 * source's pause(false) is called. */
	size_t (*room)(void *userdata, enum kevent_source src);
};

struct ksink {
	struct kloop *loop; /* where the source watches its descriptors */
	const struct ksink_ops *ops;
	void *userdata;
	/* the state directory, where a source keeps what outlives keventd
	 * (its position, its table), each file through kstatedir_openat();
	 * NULL: none, nothing is kept */
	const struct kstatedir *state;
	/* the descriptors a source takes back at start and hands over at a
	 * clean stop (fdstore.h); NULL: none */
	struct kfdstore *fdstore;
};

static inline int ksink_submit(const struct ksink *s, struct kevent *ev)
{
	return s->ops->submit(s->userdata, ev);
}

static inline void ksink_reject(const struct ksink *s, enum kevent_source src, const char *why)
{
	s->ops->reject(s->userdata, src, why);
}

static inline void ksink_overrun(const struct ksink *s, enum kevent_source src)
{
	s->ops->overrun(s->userdata, src);
}

static inline void ksink_lost(const struct ksink *s, enum kevent_source src, uint64_t n)
{
	s->ops->lost(s->userdata, src, n);
}

static inline void ksink_truncated(const struct ksink *s, enum kevent_source src)
{
	s->ops->truncated(s->userdata, src);
}

static inline size_t ksink_room(const struct ksink *s, enum kevent_source src)
{
	return s->ops->room(s->userdata, src);
}

struct ksource {
	const char *name;
	enum kevent_source kind;
	/* Stop (true) or resume (false) reading: the sink has no room. */
	void (*pause)(struct ksource *s, bool pause);
	/* Stop reading for good (shutdown); the source stays allocated. */
	void (*stop)(struct ksource *s);
	/* May be NULL.  At a stop, before stop(): ev, which this source
	 * submitted, will not be handled after all (it was dropped from the
	 * queue).  A source that can fetch its events again keeps it for
	 * its next start (the kernel source: in its position file, saved
	 * by stop()).  0: the next start handles it; -errno: it is gone. */
	int (*unhandled)(struct ksource *s, const struct kevent *ev);
	/* May be NULL.  ev, which this source submitted, is handled: it
	 * queued no run, or the runs it queued are over.  Also after stop().
	 * A source that can fetch its events again keeps those that are not
	 * handled yet in its position, so that its next start after a crash
	 * runs them (the kernel source, keventd(8)). */
	void (*handled)(struct ksource *s, const struct kevent *ev);
	/* May be NULL.  Every event this source submitted so far is in the
	 * journal (or, without one, handed on): a source that keeps a
	 * position saves it here, never before, so that its position never
	 * covers an event the journal does not hold (the kmsg source:
	 * kmsg.pos).  Called after each write of the journal that leaves
	 * nothing pending, and at the end of each round of the loop when
	 * nothing is; also after stop(), and from inside ksink_submit() (a
	 * run that starts at once writes the journal first). */
	void (*journaled)(struct ksource *s);
	/* May be NULL.  What the source watches now, or why it waits, in a
	 * few words on one line, for the verdict of keventctl status
	 * ("2 zones, 3 trip points", "waiting for the kevent family"). */
	void (*describe)(struct ksource *s, struct strbuf *out);
	void (*free)(struct ksource *s);
};

#endif

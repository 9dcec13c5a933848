/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Generic Netlink sources: one implementation, configured per family
 * by a const descriptor.  A source follows the netlink controller, so it
 * subscribes to its family's groups as soon as the family appears and
 * again whenever it comes back; takes datagrams only from the kernel
 * (sender port id 0, read from the socket address, never from the
 * message); hands each message to the descriptor's decoder; and reports
 * through its sink: events, rejected input, overruns, events known lost.
 * A new family is a descriptor and a decoder.
 */
#ifndef KEVENT_SOURCE_GENL_H
#define KEVENT_SOURCE_GENL_H

#include <stddef.h>

#include "genl.h"
#include "source.h"

struct nlmsghdr;

struct ksource_genl_desc {
	const char *name; /* the source's name (kevent_source_name(kind)) */
	enum kevent_source kind;
	const char *family;	   /* the Generic Netlink family */
	const char *const *groups; /* its multicast groups, every one subscribed */
	size_t n_groups;
	size_t recv_buf; /* bytes; a longer datagram is rejected as oversize */

	/* Decodes one message of a datagram (left bytes from nlh on, which
	 * may hold more than this message) of the family, whose id is now
	 * family_id.  0 with *ev, 0 with *ev NULL for a message that makes no
	 * event, or -errno with *why: the message is rejected. */
	int (*decode)(void *state, const struct nlmsghdr *nlh, size_t left, int family_id,
		      struct kevent **ev, const char **why);

	/* Each of the rest may be NULL. */
	/* The source's own state, from the constructor's arg; and its end. */
	int (*init)(const void *arg, void **state);
	void (*fini)(void *state);
	/* An event decoded, before it is submitted (a sequence-number gap is
	 * reported with ksink_lost()). */
	void (*track)(void *state, const struct ksink *sink, const struct kevent *ev);
	/* Instead of track: whether to submit the event (false: it is freed,
	 * a duplicate or one that the source fetches otherwise). */
	bool (*accept)(void *state, const struct ksink *sink, const struct kevent *ev);
	/* A receive buffer overrun, after it was counted. */
	void (*overrun)(void *state, const struct ksink *sink);
	/* The datagrams of one wakeup are handled. */
	void (*batch)(void *state, const struct ksink *sink);
	/* The source is paused (true) or resumed. */
	void (*pause)(void *state, bool pause);
	/* The family is in view afresh: once at start-up, subscribed or not,
	 * and after each subscription to it coming back.  May submit. */
	void (*resync)(void *state, const struct ksink *sink);
	/* Reading has stopped for good (shutdown, or the source freed): once,
	 * before fini.  May report to the sink, not submit. */
	void (*stop)(void *state, const struct ksink *sink);
	/* The source's unhandled() (source.h), before stop. */
	int (*unhandled)(void *state, const struct kevent *ev);
	/* The source's handled() (source.h), also after stop. */
	void (*handled)(void *state, const struct kevent *ev);
	/* What the state watches, once the family is subscribed (source.h's
	 * describe(); the family's name and groups are said without it). */
	void (*describe)(void *state, struct strbuf *out);

	/* What the source logs, after "NAME: "; NULL logs nothing (but see say_subscribed). */
	const char *say_subscribed; /* info; NULL: the family's name, id and groups */
	const char *say_absent;	    /* notice: at start-up, the family is not registered */
	const char *say_waiting; /* status, while it is not: "waiting for ..." (NULL: the family) */
	const char *say_appeared;	  /* info: the controller announced the family */
	const char *say_gone;		  /* notice: the family was unregistered */
	const char *say_cannot_subscribe; /* error, and why */
	const char *say_cannot_follow;	  /* error: the controller, and why */
};

/* A source for desc, reporting to sink (copied), its state made by
 * desc->init(arg).  The family need not be registered yet.  0, or -errno. */
int ksource_genl_new(const struct ksource_genl_desc *desc, const struct ksink *sink,
		     const void *arg, struct ksource **out);

/* The kevent family of kevent.ko: the "kernel" source. */
int ksource_kernel_new(const struct ksink *sink, struct ksource **out);
/* The stock kernel's "thermal" family; zones read under sysfs_root. */
int ksource_thermal_new(const struct ksink *sink, const char *sysfs_root, struct ksource **out);
/* ksource_thermal_desc's init argument: its zones' sysfs, and the state
 * directory where it keeps the zones above a trip across restarts (NULL:
 * nowhere). */
struct ksource_thermal_arg {
	const char *sysfs_root;
	const struct kstatedir *state;
};
/* The stock kernel's "acpi_event" family: the "acpi" source. */
int ksource_acpi_new(const struct ksink *sink, struct ksource **out);

/*
 * For tests, no socket needed.  The descriptors of the sources above; a
 * source that never opens a socket, taking its family's id to be
 * family_id (no resync either); and what a source does with the outcome
 * of one receive (kgenl_recv()): a datagram of len bytes in buf is split
 * into messages and decoded, anything else is counted and logged.
 * Returns whether to go on reading.
 */
extern const struct ksource_genl_desc ksource_kernel_desc;
extern const struct ksource_genl_desc ksource_thermal_desc;
extern const struct ksource_genl_desc ksource_acpi_desc;
int ksource_genl_new_detached(const struct ksource_genl_desc *desc, const struct ksink *sink,
			      const void *arg, int family_id, struct ksource **out);
bool ksource_genl_handle(struct ksource *s, enum kgenl_recv r, const void *buf, size_t len,
			 int err);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the kernel events layer.
 *
 * Kernel code calls send_kevent() or send_kevent_atomic(); the event is
 * multicast over the Generic Netlink family "kevent" to the group named
 * after its type.  Every event carries a sequence number and the time it
 * was sent.  No message is built when no one listens.
 *
 * The sequence number starts at 1 when the module is loaded and grows by
 * one for every event, whether or not anyone listens, so a listener
 * subscribed to every group sees a gap only when it lost events.  The
 * most recent events stay in a ring bounded in bytes (ring_kb), from
 * which KEVENT_CMD_GET dumps the events after a number: a listener that
 * overran or restarted fetches what it missed.
 *
 * send_kevent() multicasts the event itself.  send_kevent_atomic() only
 * stores it and queues a worker that multicasts the stored events in
 * sequence order: netlink's paths (a tap such as nlmon) must not run with
 * interrupts off.  While atomic events wait for the worker, process
 * context events queue behind them, so order is kept.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/hardirq.h>
#include <linux/kernel.h>
#include <linux/kevent.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "kevent_internal.h"

#define CREATE_TRACE_POINTS
#include "kevent_trace.h"

/* Index into this table == enum kevent_type. */
static const struct genl_multicast_group kevent_genl_mcgrps[] = {
	[KEVENT_GENERAL] = { .name = KEVENT_MCGRP_GENERAL, },
	[KEVENT_STORAGE] = { .name = KEVENT_MCGRP_STORAGE, },
	[KEVENT_POWER]   = { .name = KEVENT_MCGRP_POWER, },
	[KEVENT_FS]      = { .name = KEVENT_MCGRP_FS, },
	[KEVENT_HOTPLUG] = { .name = KEVENT_MCGRP_HOTPLUG, },
};

static_assert(ARRAY_SIZE(kevent_genl_mcgrps) == __KEVENT_TYPE_MAX);

/*
 * What the kernel sends, and KEVENT_A_SEQNUM of KEVENT_CMD_GET, the one
 * command the family takes from user space.
 */
static const struct nla_policy kevent_genl_policy[KEVENT_A_MAX + 1] = {
	[KEVENT_A_TYPE]		= { .type = NLA_U32 },
	[KEVENT_A_OBJECT]	= { .type = NLA_NUL_STRING,
				    .len = KEVENT_OBJECT_MAX },
	[KEVENT_A_SIGNAL]	= { .type = NLA_NUL_STRING,
				    .len = KEVENT_SIGNAL_MAX },
	[KEVENT_A_PAYLOAD]	= { .type = NLA_NUL_STRING,
				    .len = KEVENT_PAYLOAD_MAX },
	[KEVENT_A_SEQNUM]	= { .type = NLA_U64 },
	[KEVENT_A_TIMESTAMP]	= { .type = NLA_U64 },
	[KEVENT_A_INSTANCE]	= { .type = NLA_U64 },
	[KEVENT_A_LOST]		= { .type = NLA_U64 },
};

static int kevent_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
static int kevent_get_start(struct netlink_callback *cb);

static const struct genl_ops kevent_genl_ops[] = {
	{
		.cmd	= KEVENT_CMD_GET,
		.flags	= GENL_ADMIN_PERM,
		.start	= kevent_get_start,
		.dumpit	= kevent_get_dumpit,
	},
};

static struct genl_family kevent_genl_family __ro_after_init = {
	.module		= THIS_MODULE,
	.name		= KEVENT_GENL_NAME,
	.version	= KEVENT_GENL_VERSION,
	.maxattr	= KEVENT_A_MAX,
	.policy		= kevent_genl_policy,
	.ops		= kevent_genl_ops,
	.n_ops		= ARRAY_SIZE(kevent_genl_ops),
	.mcgrps		= kevent_genl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(kevent_genl_mcgrps),
};

static unsigned int ring_kb = 1024;
module_param(ring_kb, uint, 0444);
MODULE_PARM_DESC(ring_kb, "size of the ring of recent events in KiB (default 1024, 0: off)");

/* At most this much waits for the worker, ring or no ring. */
#define KEVENT_PENDING_MAX	(4U << 20)
#define KEVENT_RING_KB_MAX	(1024U * 1024)	/* 1 GiB */

/**
 * struct kevent_rec - one event, as stored in the ring
 * @pending: in kevent_ring.pending, while @is_pending
 * @seqnum: its sequence number
 * @timestamp: when it was sent, nanoseconds since the epoch
 * @size: its allocation, in bytes: what it counts against the ring's bound
 * @type: enum kevent_type
 * @signal: offset of the signal in @data
 * @payload: offset of the payload in @data
 * @in_ring: kept in the ring
 * @is_pending: waiting for the worker to multicast it
 * @data: the object, the signal and the payload, each NUL-terminated
 *
 * A record is freed once it is neither in the ring nor pending.
 */
struct kevent_rec {
	struct list_head pending;
	u64 seqnum;
	u64 timestamp;
	u32 size;
	u32 type;
	u16 signal;
	u16 payload;
	bool in_ring;
	bool is_pending;
	char data[];
};

/*
 * The ring, the worker's queue and the sequence number, under one lock
 * that is taken with interrupts saved: send_kevent_atomic() takes it in
 * any context.
 *
 * The ring is an array of pointers to the records, indexed by @first (the
 * oldest) up to @end (one past the newest), modulo its size: keeping an
 * event and evicting one are a store and a load, and the events after a
 * number are found by bisection.  It has a slot for every record of the
 * smallest size that ring_kb can hold, so only the bound in bytes ever
 * evicts an event.
 */
static struct {
	spinlock_t lock;		/* protects everything below */
	struct kevent_rec **slots;	/* mask + 1 of them; NULL: no ring */
	u64 mask;
	u64 first;			/* index of the oldest event */
	u64 end;			/* one past the newest */
	struct list_head pending;	/* oldest first */
	size_t bytes;			/* of the records in the ring */
	size_t pending_bytes;		/* of the records in pending */
	size_t limit;			/* ring_kb in bytes */
	u64 seqnum;			/* the last number given */
	struct kevent_rec *spare;	/* freed, for the next event: xchg() */
} kevent_ring = {
	.lock		= __SPIN_LOCK_UNLOCKED(kevent_ring.lock),
	.pending	= LIST_HEAD_INIT(kevent_ring.pending),
};

/* The record of ring index i.  Lock held. */
static inline struct kevent_rec *kevent_ring_at(u64 i)
{
	return kevent_ring.slots[i & kevent_ring.mask];
}

static u64 kevent_instance;

static void kevent_work_fn(struct work_struct *work);
static DECLARE_WORK(kevent_work, kevent_work_fn);

/*
 * Whether the family is registered.  Built into the kernel, kevent
 * registers it in a device initcall, and code in an earlier initcall may
 * already send; before the family is registered, and after it is
 * unregistered, an event goes nowhere, as when no one listens.
 */
static bool kevent_registered;

static struct {
	atomic64_t sent;
	atomic64_t no_listener;
	atomic64_t overrun;
	atomic64_t errors;
	atomic64_t atomic_in_irq;
	atomic64_t deferred;
	atomic64_t evicted;
	atomic64_t pending_full;
} kevent_stats;

const char *kevent_type_name(unsigned int type)
{
	if (type >= ARRAY_SIZE(kevent_genl_mcgrps))
		return NULL;
	return kevent_genl_mcgrps[type].name;
}

static bool kevent_valid_object(const char *object)
{
	size_t len, i;

	if (!object || object[0] != '/')
		return false;
	len = strnlen(object, KEVENT_OBJECT_MAX + 1);
	if (len > KEVENT_OBJECT_MAX)
		return false;
	/* Printable ASCII only: the kernel's isprint() accepts Latin-1. */
	for (i = 0; i < len; i++)
		if (object[i] < 0x20 || object[i] > 0x7e)
			return false;
	return true;
}

static bool kevent_valid_signal(const char *signal)
{
	size_t len, i;

	if (!signal)
		return false;
	len = strnlen(signal, KEVENT_SIGNAL_MAX + 1);
	if (len < 1 || len > KEVENT_SIGNAL_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char c = signal[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == ':' || c == '-'))
			return false;
	}
	return true;
}

/* Returns NULL if the arguments are valid, else why they are not. */
const char *kevent_check_args(unsigned int type, const char *object,
			      const char *signal)
{
	if (type > KEVENT_TYPE_MAX)
		return "unknown type";
	if (!kevent_valid_object(object))
		return "object must start with '/', be printable ASCII and at most 1024 bytes";
	if (!kevent_valid_signal(signal))
		return "signal must be 1-64 bytes of [A-Za-z0-9_.:-]";
	return NULL;
}

void kevent_read_counters(struct kevent_counters *c)
{
	unsigned long flags;

	c->sent = atomic64_read(&kevent_stats.sent);
	c->no_listener = atomic64_read(&kevent_stats.no_listener);
	c->overrun = atomic64_read(&kevent_stats.overrun);
	c->errors = atomic64_read(&kevent_stats.errors);
	c->atomic_in_irq = atomic64_read(&kevent_stats.atomic_in_irq);
	c->deferred = atomic64_read(&kevent_stats.deferred);
	c->evicted = atomic64_read(&kevent_stats.evicted);
	c->pending_full = atomic64_read(&kevent_stats.pending_full);
	c->instance = kevent_instance;
	spin_lock_irqsave(&kevent_ring.lock, flags);
	c->seqnum = kevent_ring.seqnum;
	c->ring_events = kevent_ring.end - kevent_ring.first;
	c->ring_bytes = kevent_ring.bytes;
	c->ring_limit = kevent_ring.limit;
	spin_unlock_irqrestore(&kevent_ring.lock, flags);
}

static inline const char *kevent_rec_object(const struct kevent_rec *rec)
{
	return rec->data;
}

static inline const char *kevent_rec_signal(const struct kevent_rec *rec)
{
	return rec->data + rec->signal;
}

static inline const char *kevent_rec_payload(const struct kevent_rec *rec)
{
	return rec->data + rec->payload;
}

/*
 * Frees rec unless the ring or the worker still holds it.  The record
 * freed last is kept as the spare, for the next event: once the ring is
 * full every event evicts one of about its size, and reusing it spares
 * the sender a trip through the slab allocator each time.  Lock held.
 */
static void kevent_rec_release(struct kevent_rec *rec)
{
	if (!rec->in_ring && !rec->is_pending)
		kfree(xchg(&kevent_ring.spare, rec));
}

/* The spare record if it has exactly @size bytes, else a new one. */
static struct kevent_rec *kevent_rec_alloc(size_t size, gfp_t gfp)
{
	struct kevent_rec *rec = xchg(&kevent_ring.spare, NULL);

	if (rec && rec->size == size)
		return rec;
	kfree(rec);
	rec = kmalloc(size, gfp);
	if (rec)
		rec->size = size;
	return rec;
}

/*
 * Numbers rec and keeps it in the ring, evicting the oldest events to stay
 * within ring_kb; queues it for the worker if @defer.  An event larger
 * than the whole ring is numbered but not kept.  Lock held.
 */
static void kevent_ring_add(struct kevent_rec *rec, bool defer)
{
	struct kevent_rec *old;

	rec->seqnum = ++kevent_ring.seqnum;
	if (rec->size <= kevent_ring.limit) {
		while (kevent_ring.bytes + rec->size > kevent_ring.limit) {
			old = kevent_ring_at(kevent_ring.first++);
			old->in_ring = false;
			kevent_ring.bytes -= old->size;
			atomic64_inc(&kevent_stats.evicted);
			kevent_rec_release(old);
		}
		/* Cannot be full: each record is at least the smallest size. */
		kevent_ring.slots[kevent_ring.end++ & kevent_ring.mask] = rec;
		rec->in_ring = true;
		kevent_ring.bytes += rec->size;
	}
	if (defer) {
		if (kevent_ring.pending_bytes + rec->size > KEVENT_PENDING_MAX) {
			/* Not multicast; still in the ring, if it fits. */
			atomic64_inc(&kevent_stats.pending_full);
			return;
		}
		list_add_tail(&rec->pending, &kevent_ring.pending);
		rec->is_pending = true;
		kevent_ring.pending_bytes += rec->size;
	}
}

/* Puts rec's attributes into msg; the sequence number at *seqnum_attr. */
static int kevent_put_event(struct sk_buff *msg, const struct kevent_rec *rec,
			    u32 portid, u32 seq, int flags,
			    struct nlattr **seqnum_attr)
{
	struct nlattr *attr;
	void *hdr;

	hdr = genlmsg_put(msg, portid, seq, &kevent_genl_family, flags,
			  KEVENT_CMD_EVENT);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(msg, KEVENT_A_TYPE, rec->type) ||
	    nla_put_string(msg, KEVENT_A_OBJECT, kevent_rec_object(rec)) ||
	    nla_put_string(msg, KEVENT_A_SIGNAL, kevent_rec_signal(rec)) ||
	    nla_put_string(msg, KEVENT_A_PAYLOAD, kevent_rec_payload(rec)))
		goto cancel;
	attr = nla_reserve_64bit(msg, KEVENT_A_SEQNUM, sizeof(u64),
				 KEVENT_A_PAD);
	if (!attr)
		goto cancel;
	memcpy(nla_data(attr), &rec->seqnum, sizeof(rec->seqnum));
	if (nla_put_u64_64bit(msg, KEVENT_A_TIMESTAMP, rec->timestamp,
			      KEVENT_A_PAD) ||
	    nla_put_u64_64bit(msg, KEVENT_A_INSTANCE, kevent_instance,
			      KEVENT_A_PAD))
		goto cancel;
	genlmsg_end(msg, hdr);
	if (seqnum_attr)
		*seqnum_attr = attr;
	return 0;

cancel:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

/* A multicast message for rec, or NULL without memory. */
static struct sk_buff *kevent_build_msg(const struct kevent_rec *rec,
					struct nlattr **seqnum_attr)
{
	struct sk_buff *msg;
	size_t size;

	size = nla_total_size(sizeof(u32)) +
	       nla_total_size(strlen(kevent_rec_object(rec)) + 1) +
	       nla_total_size(strlen(kevent_rec_signal(rec)) + 1) +
	       nla_total_size(strlen(kevent_rec_payload(rec)) + 1) +
	       3 * nla_total_size_64bit(sizeof(u64));

	msg = genlmsg_new(size, GFP_KERNEL);
	if (!msg)
		return NULL;
	if (kevent_put_event(msg, rec, 0, 0, 0, seqnum_attr)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Multicasts msg (consumed) to the group of type; counts the outcome. */
static void kevent_multicast(struct sk_buff *msg, u32 type)
{
	int ret;

	/* Consumes msg on every path. */
	ret = genlmsg_multicast(&kevent_genl_family, msg, 0, type, GFP_KERNEL);
	switch (ret) {
	case 0:
		atomic64_inc(&kevent_stats.sent);
		break;
	case -ESRCH:
		/*
		 * There were listeners a moment ago, but the message reached
		 * none: their receive buffers were full (or they just left).
		 */
		atomic64_inc(&kevent_stats.overrun);
		break;
	case -ENOBUFS:
		/*
		 * A listener that set NETLINK_BROADCAST_ERROR overran (others
		 * overrun silently); it sees ENOBUFS on its socket.  Not the
		 * caller's error.
		 */
		atomic64_inc(&kevent_stats.overrun);
		break;
	default:
		atomic64_inc(&kevent_stats.errors);
		break;
	}
}

/*
 * The worker: multicasts the pending events, oldest first.  A record
 * stays on the pending list until it has been multicast, so that process
 * context senders queue behind it meanwhile.
 */
static void kevent_work_fn(struct work_struct *work)
{
	struct kevent_rec *rec;
	unsigned long flags;
	struct sk_buff *msg;

	for (;;) {
		spin_lock_irqsave(&kevent_ring.lock, flags);
		rec = list_first_entry_or_null(&kevent_ring.pending,
					       struct kevent_rec, pending);
		spin_unlock_irqrestore(&kevent_ring.lock, flags);
		if (!rec)
			return;

		/* Only this worker takes records off the pending list. */
		if (genl_has_listeners(&kevent_genl_family, &init_net,
				       rec->type)) {
			msg = kevent_build_msg(rec, NULL);
			if (msg)
				kevent_multicast(msg, rec->type);
			else
				atomic64_inc(&kevent_stats.errors);
		} else {
			atomic64_inc(&kevent_stats.no_listener);
		}

		spin_lock_irqsave(&kevent_ring.lock, flags);
		list_del(&rec->pending);
		rec->is_pending = false;
		kevent_ring.pending_bytes -= rec->size;
		kevent_rec_release(rec);
		spin_unlock_irqrestore(&kevent_ring.lock, flags);
		cond_resched();
	}
}

/* A record for the event, its payload formatted from fmt and args. */
static __printf(5, 0)
struct kevent_rec *kevent_rec_new(enum kevent_type type, const char *object,
				  const char *signal, gfp_t gfp,
				  const char *fmt, va_list args)
{
	size_t olen = strlen(object), slen = strlen(signal);
	struct kevent_rec *rec;
	va_list aq;
	int len = 0;

	if (fmt) {
		va_copy(aq, args);
		len = vsnprintf(NULL, 0, fmt, aq);
		va_end(aq);
		if (len > KEVENT_PAYLOAD_MAX)
			return ERR_PTR(-EINVAL);
	}

	rec = kevent_rec_alloc(kmalloc_size_roundup(struct_size(rec, data,
								olen + slen + len + 3)),
			       gfp);
	if (!rec)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&rec->pending);
	rec->type = type;
	rec->seqnum = 0;
	rec->in_ring = false;
	rec->is_pending = false;
	rec->signal = olen + 1;
	rec->payload = olen + slen + 2;
	memcpy(rec->data, object, olen + 1);
	memcpy(rec->data + rec->signal, signal, slen + 1);
	if (fmt)
		vsnprintf(rec->data + rec->payload, len + 1, fmt, args);
	else
		rec->data[rec->payload] = '\0';
	rec->timestamp = ktime_get_real_ns();
	return rec;
}

static __printf(5, 0)
int kevent_vsend(enum kevent_type type, const char *object,
		 const char *signal, bool atomic, const char *fmt,
		 va_list args)
{
	struct nlattr *seqnum_attr = NULL;
	struct sk_buff *msg = NULL;
	struct kevent_rec *rec;
	unsigned long flags;
	bool listeners, defer;
	u64 seqnum;
	int ret;

	if (kevent_check_args(type, object, signal)) {
		ret = -EINVAL;
		goto out_count_error;
	}

	/*
	 * Not registered (yet, or any more): do not touch the family.  Pairs
	 * with the release in kevent_init(), so that a sender that sees the
	 * flag also sees the family as genl_register_family() left it.
	 */
	if (!smp_load_acquire(&kevent_registered)) {
		if (fmt && vsnprintf(NULL, 0, fmt, args) > KEVENT_PAYLOAD_MAX) {
			ret = -EINVAL;
			goto out_count_error;
		}
		atomic64_inc(&kevent_stats.no_listener);
		return 0;
	}

	rec = kevent_rec_new(type, object, signal,
			     atomic ? GFP_ATOMIC : GFP_KERNEL, fmt, args);
	if (IS_ERR(rec)) {
		ret = PTR_ERR(rec);
		goto out_count_error;
	}

	listeners = genl_has_listeners(&kevent_genl_family, &init_net, type);
	if (!listeners)
		atomic64_inc(&kevent_stats.no_listener);
	if (listeners && !atomic) {
		/* Built before the lock; the number is filled in under it. */
		msg = kevent_build_msg(rec, &seqnum_attr);
		if (!msg) {
			kfree(rec);
			ret = -ENOMEM;
			goto out_count_error;
		}
	}

	spin_lock_irqsave(&kevent_ring.lock, flags);
	/* Behind the events that wait for the worker, to keep the order. */
	defer = listeners && (atomic || !list_empty(&kevent_ring.pending));
	kevent_ring_add(rec, defer);
	seqnum = rec->seqnum;
	if (msg)
		memcpy(nla_data(seqnum_attr), &rec->seqnum, sizeof(rec->seqnum));
	kevent_rec_release(rec);
	spin_unlock_irqrestore(&kevent_ring.lock, flags);
	/* outside the lock: a traced hit costs the sender, not the others */
	trace_kevent_send(type, object, signal, seqnum);

	if (defer) {
		atomic64_inc(&kevent_stats.deferred);
		nlmsg_free(msg);
		queue_work(system_wq, &kevent_work);
	} else if (msg) {
		kevent_multicast(msg, type);
	}
	return 0;

out_count_error:
	atomic64_inc(&kevent_stats.errors);
	return ret;
}

int send_kevent(enum kevent_type type, const char *object,
		const char *signal, const char *fmt, ...)
{
	va_list args;
	int ret;

	might_sleep();

	va_start(args, fmt);
	ret = kevent_vsend(type, object, signal, false, fmt, args);
	va_end(args);
	return ret;
}
EXPORT_SYMBOL_GPL(send_kevent);

int send_kevent_atomic(enum kevent_type type, const char *object,
		       const char *signal, const char *fmt, ...)
{
	va_list args;
	int ret;

	if (in_hardirq())
		atomic64_inc(&kevent_stats.atomic_in_irq);

	va_start(args, fmt);
	ret = kevent_vsend(type, object, signal, true, fmt, args);
	va_end(args);
	return ret;
}
EXPORT_SYMBOL_GPL(send_kevent_atomic);

/* The dump's position, in netlink_callback.args. */
enum {
	KEVENT_DUMP_NEXT,	/* the next number to send */
	KEVENT_DUMP_LOST,	/* numbers skipped: no longer in the ring */
	KEVENT_DUMP_DONE,	/* the final message is out */
};

static int kevent_get_start(struct netlink_callback *cb)
{
	const struct nlattr *attr;
	u64 after = 0;

	attr = nlmsg_find_attr(cb->nlh, GENL_HDRLEN, KEVENT_A_SEQNUM);
	if (attr) {
		if (nla_len(attr) != sizeof(u64))
			return -EINVAL;
		after = nla_get_u64(attr);
	}
	cb->args[KEVENT_DUMP_NEXT] = after == U64_MAX ? after : after + 1;
	cb->args[KEVENT_DUMP_LOST] = 0;
	cb->args[KEVENT_DUMP_DONE] = 0;
	return 0;
}

/*
 * The ring index of the oldest event numbered at least next, or
 * kevent_ring.end if there is none.  Numbers grow along the ring (with a
 * gap where an event was too large to keep).  Lock held.
 */
static u64 kevent_ring_find(u64 next)
{
	u64 lo = kevent_ring.first, hi = kevent_ring.end, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (kevent_ring_at(mid)->seqnum < next)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * KEVENT_CMD_GET: the ring's events after the number asked for, as many
 * per call as fit, then the final message with the current number and
 * how many numbers were skipped because the ring no longer had them.
 */
static int kevent_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u32 portid = NETLINK_CB(cb->skb).portid;
	u32 seq = cb->nlh->nlmsg_seq;
	u64 next = cb->args[KEVENT_DUMP_NEXT];
	u64 lost = cb->args[KEVENT_DUMP_LOST];
	struct kevent_rec *rec;
	unsigned long flags;
	u64 current_seqnum;
	int count = 0;
	bool more;
	void *hdr;
	u64 i;

	if (cb->args[KEVENT_DUMP_DONE])
		return 0;

	spin_lock_irqsave(&kevent_ring.lock, flags);
	current_seqnum = kevent_ring.seqnum;
	for (i = kevent_ring_find(next); i < kevent_ring.end; i++) {
		rec = kevent_ring_at(i);
		if (kevent_put_event(skb, rec, portid, seq, NLM_F_MULTI, NULL))
			break;
		if (rec->seqnum > next)
			lost += rec->seqnum - next;
		next = rec->seqnum + 1;
		count++;
	}
	more = i < kevent_ring.end;
	if (!more && next <= current_seqnum) {
		/* The newest numbers were not kept (too large for the ring). */
		lost += current_seqnum - next + 1;
		next = current_seqnum + 1;
	}
	spin_unlock_irqrestore(&kevent_ring.lock, flags);

	cb->args[KEVENT_DUMP_NEXT] = next;
	cb->args[KEVENT_DUMP_LOST] = lost;
	if (more)
		/* The message is full: the rest in the next one. */
		return count ? skb->len : -EMSGSIZE;

	hdr = genlmsg_put(skb, portid, seq, &kevent_genl_family, NLM_F_MULTI,
			  KEVENT_CMD_GET);
	if (!hdr)
		return skb->len;
	/* At or past the current number, "after" was a status query. */
	if (nla_put_u64_64bit(skb, KEVENT_A_SEQNUM,
			      min(next - 1, current_seqnum), KEVENT_A_PAD) ||
	    nla_put_u64_64bit(skb, KEVENT_A_LOST, lost, KEVENT_A_PAD) ||
	    nla_put_u64_64bit(skb, KEVENT_A_INSTANCE, kevent_instance,
			      KEVENT_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return skb->len;
	}
	genlmsg_end(skb, hdr);
	cb->args[KEVENT_DUMP_DONE] = 1;
	return skb->len;
}

/* The ring's slots: one for every record of the smallest size it holds. */
static int __init kevent_ring_init(void)
{
	struct kevent_rec *rec;
	size_t smallest = kmalloc_size_roundup(struct_size(rec, data, 5));

	kevent_ring.limit = (size_t)min(ring_kb, KEVENT_RING_KB_MAX) * 1024;
	if (!kevent_ring.limit)
		return 0;
	kevent_ring.mask = kevent_ring.limit / smallest;
	kevent_ring.mask = roundup_pow_of_two(max_t(u64, kevent_ring.mask, 1)) - 1;
	kevent_ring.slots = kvmalloc_array(kevent_ring.mask + 1,
					   sizeof(*kevent_ring.slots),
					   GFP_KERNEL);
	return kevent_ring.slots ? 0 : -ENOMEM;
}

static int __init kevent_init(void)
{
	int ret;

	ret = kevent_ring_init();
	if (ret)
		return ret;
	/* Never 0: a listener's position of 0 means "none". */
	do {
		kevent_instance = get_random_u64();
	} while (!kevent_instance);

	ret = genl_register_family(&kevent_genl_family);
	if (ret) {
		pr_err("cannot register the Generic Netlink family: %d\n", ret);
		kvfree(kevent_ring.slots);
		return ret;
	}
	/* Senders may use the family from here on: see kevent_vsend(). */
	smp_store_release(&kevent_registered, true);

	kevent_debugfs_init();

	ret = kevent_bridges_start();
	if (ret)
		goto out_unregister;
	return 0;

out_unregister:
	kevent_debugfs_exit();
	WRITE_ONCE(kevent_registered, false);
	genl_unregister_family(&kevent_genl_family);
	kvfree(kevent_ring.slots);
	return ret;
}

/* At unload: every record, the ring's and the worker's. */
static void kevent_ring_free(void)
{
	struct kevent_rec *rec, *tmp;

	list_for_each_entry_safe(rec, tmp, &kevent_ring.pending, pending) {
		list_del(&rec->pending);
		rec->is_pending = false;
		kevent_rec_release(rec);
	}
	while (kevent_ring.first < kevent_ring.end) {
		rec = kevent_ring_at(kevent_ring.first++);
		rec->in_ring = false;
		kevent_rec_release(rec);
	}
	kvfree(kevent_ring.slots);
	kfree(xchg(&kevent_ring.spare, NULL));
}

static void __exit kevent_exit(void)
{
	/* No notifier calls in after this: every bridge is torn down. */
	kevent_bridges_stop();
	/* Waits for emit and bench writers still running. */
	kevent_debugfs_exit();
	/*
	 * Callers are other modules, unloaded before this one, and the
	 * debugfs writers, gone: no send is under way.  The flag only keeps
	 * a late caller off the family.
	 */
	WRITE_ONCE(kevent_registered, false);
	/* The events still pending go out before the family goes. */
	flush_work(&kevent_work);
	genl_unregister_family(&kevent_genl_family);
	kevent_ring_free();
}

module_init(kevent_init);
module_exit(kevent_exit);

MODULE_AUTHOR("The keventd authors");
MODULE_DESCRIPTION("Kernel events layer: send_kevent() over Generic Netlink");
MODULE_LICENSE("GPL");
MODULE_ALIAS_GENL_FAMILY(KEVENT_GENL_NAME);

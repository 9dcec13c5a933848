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
 * one for every event that is multicast to a group with listeners, so a
 * listener subscribed to every group sees a gap only when it lost events.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/hardirq.h>
#include <linux/kernel.h>
#include <linux/kevent.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "kevent_internal.h"

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
 * What the kernel sends.  The family takes no command from user space;
 * the policy documents the attributes and their limits for listeners.
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
};

static struct genl_family kevent_genl_family __ro_after_init = {
	.module		= THIS_MODULE,
	.name		= KEVENT_GENL_NAME,
	.version	= KEVENT_GENL_VERSION,
	.maxattr	= KEVENT_A_MAX,
	.policy		= kevent_genl_policy,
	.mcgrps		= kevent_genl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(kevent_genl_mcgrps),
};

static atomic64_t kevent_seqnum = ATOMIC64_INIT(0);

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
	c->sent = atomic64_read(&kevent_stats.sent);
	c->no_listener = atomic64_read(&kevent_stats.no_listener);
	c->overrun = atomic64_read(&kevent_stats.overrun);
	c->errors = atomic64_read(&kevent_stats.errors);
	c->atomic_in_irq = atomic64_read(&kevent_stats.atomic_in_irq);
	c->seqnum = atomic64_read(&kevent_seqnum);
}

static int kevent_send(enum kevent_type type, const char *object,
		       const char *signal, const char *payload, gfp_t gfp)
{
	struct sk_buff *msg;
	u64 timestamp;
	size_t size;
	void *hdr;
	int ret;

	if (!genl_has_listeners(&kevent_genl_family, &init_net, type)) {
		atomic64_inc(&kevent_stats.no_listener);
		return 0;
	}

	timestamp = ktime_get_real_ns();
	size = nla_total_size(sizeof(u32)) +
	       nla_total_size(strlen(object) + 1) +
	       nla_total_size(strlen(signal) + 1) +
	       nla_total_size(strlen(payload) + 1) +
	       2 * nla_total_size_64bit(sizeof(u64));

	msg = genlmsg_new(size, gfp);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put(msg, 0, 0, &kevent_genl_family, 0, KEVENT_CMD_EVENT);
	if (!hdr) {
		ret = -ENOMEM;
		goto out_free_msg;
	}

	if (nla_put_u32(msg, KEVENT_A_TYPE, type) ||
	    nla_put_string(msg, KEVENT_A_OBJECT, object) ||
	    nla_put_string(msg, KEVENT_A_SIGNAL, signal) ||
	    nla_put_string(msg, KEVENT_A_PAYLOAD, payload) ||
	    nla_put_u64_64bit(msg, KEVENT_A_SEQNUM,
			      atomic64_inc_return(&kevent_seqnum),
			      KEVENT_A_PAD) ||
	    nla_put_u64_64bit(msg, KEVENT_A_TIMESTAMP, timestamp,
			      KEVENT_A_PAD)) {
		ret = -ENOMEM;
		goto out_cancel_msg;
	}

	genlmsg_end(msg, hdr);

	/* Consumes msg on every path. */
	ret = genlmsg_multicast(&kevent_genl_family, msg, 0, type, gfp);
	switch (ret) {
	case 0:
		atomic64_inc(&kevent_stats.sent);
		return 0;
	case -ESRCH:
		/*
		 * There were listeners a moment ago, but the message reached
		 * none: their receive buffers were full (or they just left).
		 */
		atomic64_inc(&kevent_stats.overrun);
		return 0;
	case -ENOBUFS:
		/*
		 * A listener that set NETLINK_BROADCAST_ERROR overran (others
		 * overrun silently); it sees ENOBUFS on its socket.  Not the
		 * caller's error.
		 */
		atomic64_inc(&kevent_stats.overrun);
		return 0;
	default:
		return -ENOMEM;
	}

out_cancel_msg:
	genlmsg_cancel(msg, hdr);
out_free_msg:
	nlmsg_free(msg);
	return ret;
}

static __printf(5, 0)
int kevent_vsend(enum kevent_type type, const char *object,
		 const char *signal, gfp_t gfp, const char *fmt,
		 va_list args)
{
	char *payload = NULL;
	va_list aq;
	int len = 0, ret;

	if (kevent_check_args(type, object, signal)) {
		ret = -EINVAL;
		goto out_count_error;
	}

	if (fmt) {
		va_copy(aq, args);
		len = vsnprintf(NULL, 0, fmt, aq);
		va_end(aq);
		if (len > KEVENT_PAYLOAD_MAX) {
			ret = -EINVAL;
			goto out_count_error;
		}
	}

	/*
	 * Not registered (yet, or any more): do not touch the family.  Pairs
	 * with the release in kevent_init(), so that a sender that sees the
	 * flag also sees the family as genl_register_family() left it.
	 */
	if (!smp_load_acquire(&kevent_registered)) {
		atomic64_inc(&kevent_stats.no_listener);
		return 0;
	}

	if (fmt) {
		payload = kmalloc(len + 1, gfp);
		if (!payload) {
			ret = -ENOMEM;
			goto out_count_error;
		}
		vsnprintf(payload, len + 1, fmt, args);
	}

	ret = kevent_send(type, object, signal, payload ? payload : "", gfp);
	kfree(payload);
	if (ret)
		goto out_count_error;
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
	ret = kevent_vsend(type, object, signal, GFP_KERNEL, fmt, args);
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
	ret = kevent_vsend(type, object, signal, GFP_ATOMIC, fmt, args);
	va_end(args);
	return ret;
}
EXPORT_SYMBOL_GPL(send_kevent_atomic);

static int __init kevent_init(void)
{
	int ret;

	ret = genl_register_family(&kevent_genl_family);
	if (ret) {
		pr_err("cannot register the Generic Netlink family: %d\n", ret);
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
	return ret;
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
	genl_unregister_family(&kevent_genl_family);
}

module_init(kevent_init);
module_exit(kevent_exit);

MODULE_AUTHOR("The keventd authors");
MODULE_DESCRIPTION("Kernel events layer: send_kevent() over Generic Netlink");
MODULE_LICENSE("GPL");
MODULE_ALIAS_GENL_FAMILY(KEVENT_GENL_NAME);

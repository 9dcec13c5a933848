// SPDX-License-Identifier: GPL-2.0
/*
 * kevent bridges: what the stock kernel announces on its own notifier
 * chains, sent on as kevents, so that the events layer has something to
 * say the day it is loaded, with no other kernel code calling it.
 *
 *   pm   power   /org/kernel/power/sleep          suspend, resume,
 *                                                 hibernate, restore
 *   net  hotplug /org/kernel/net/<ifname>         up, down, carrier-on,
 *                                                 carrier-off
 *   cpu  power   /org/kernel/devices/system/cpu/cpu<N>   online, offline
 *   mce  general /org/kernel/devices/system/machinecheck/cpu<N>
 *                                                 corrected, uncorrected
 *
 * Each chain calls its notifier in process context (the PM notifier
 * chain, the netdevice chain under RTNL, the CPU hotplug thread, the
 * machine-check decoder chain from a work item), so each bridge sends
 * with send_kevent() and GFP_KERNEL.  The module parameter bridges= (a
 * comma list, default all) chooses them; every bridge that was set up is
 * torn down on unload, before the family is unregistered.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/kernel.h>
#include <linux/kevent.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#ifdef CONFIG_X86_MCE
#include <asm/mce.h>
#endif

#include "kevent_internal.h"

static char *bridges = "pm,net,cpu,mce";
module_param(bridges, charp, 0444);
MODULE_PARM_DESC(bridges,
		 "Notifier chains sent on as kevents: a comma list of pm, net, cpu and mce (default all; empty: none)");

/* --- pm: suspend and resume, hibernation and restore ------------------ */

static int kevent_pm_notify(struct notifier_block *nb, unsigned long action,
			    void *data)
{
	const char *signal;

	switch (action) {
	case PM_SUSPEND_PREPARE:
		signal = "suspend";
		break;
	case PM_POST_SUSPEND:
		signal = "resume";
		break;
	case PM_HIBERNATION_PREPARE:
		signal = "hibernate";
		break;
	case PM_POST_HIBERNATION:
		signal = "restore";
		break;
	default:
		return NOTIFY_DONE;
	}
	send_kevent(KEVENT_POWER, "/org/kernel/power/sleep", signal, NULL);
	return NOTIFY_DONE;
}

static struct notifier_block kevent_pm_nb = {
	.notifier_call = kevent_pm_notify,
};

static int kevent_pm_start(void)
{
	return register_pm_notifier(&kevent_pm_nb);
}

static void kevent_pm_stop(void)
{
	unregister_pm_notifier(&kevent_pm_nb);
}

/* --- net: links up and down, carrier on and off ----------------------- */

/*
 * The last carrier state sent per ifindex (xa_mk_value(1 + on)), so that
 * NETDEV_CHANGE, which also reports flag changes, sends only a change of
 * carrier.  Written under RTNL.
 */
static DEFINE_XARRAY(kevent_carrier);

/*
 * register_netdevice_notifier() and its unregistering replay
 * NETDEV_REGISTER/UP and DOWN/UNREGISTER for every existing device, in
 * the calling task: those are not news.
 */
static struct task_struct *kevent_net_replaying;

static void kevent_net_send(struct net_device *dev, const char *signal)
{
	char object[sizeof("/org/kernel/net/") + IFNAMSIZ];

	snprintf(object, sizeof(object), "/org/kernel/net/%s", dev->name);
	send_kevent(KEVENT_HOTPLUG, object, signal,
		    "Ifindex: %d\nAddress: %*phC\n", dev->ifindex,
		    (int)min_t(unsigned int, dev->addr_len, MAX_ADDR_LEN),
		    dev->dev_addr);
}

static void kevent_net_carrier(struct net_device *dev)
{
	bool on = netif_carrier_ok(dev);
	void *old;

	old = xa_store(&kevent_carrier, dev->ifindex, xa_mk_value(1 + on),
		       GFP_KERNEL);
	if (xa_is_err(old) || (old && xa_to_value(old) == 1 + on))
		return;
	kevent_net_send(dev, on ? "carrier-on" : "carrier-off");
}

static int kevent_net_notify(struct notifier_block *nb, unsigned long action,
			     void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	/* Names are per network namespace: keventd lives in the first. */
	if (current == READ_ONCE(kevent_net_replaying) ||
	    !net_eq(dev_net(dev), &init_net))
		return NOTIFY_DONE;

	switch (action) {
	case NETDEV_UP:
		kevent_net_send(dev, "up");
		break;
	case NETDEV_DOWN:
		kevent_net_send(dev, "down");
		break;
	case NETDEV_CHANGE:
		kevent_net_carrier(dev);
		break;
	case NETDEV_UNREGISTER:
		xa_erase(&kevent_carrier, dev->ifindex);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block kevent_net_nb = {
	.notifier_call = kevent_net_notify,
};

static int kevent_net_start(void)
{
	int ret;

	WRITE_ONCE(kevent_net_replaying, current);
	ret = register_netdevice_notifier(&kevent_net_nb);
	WRITE_ONCE(kevent_net_replaying, NULL);
	return ret;
}

static void kevent_net_stop(void)
{
	WRITE_ONCE(kevent_net_replaying, current);
	unregister_netdevice_notifier(&kevent_net_nb);
	WRITE_ONCE(kevent_net_replaying, NULL);
	xa_destroy(&kevent_carrier);
}

/* --- cpu: processors going online and offline ------------------------- */

static enum cpuhp_state kevent_cpuhp_state;

static int kevent_cpu_send(unsigned int cpu, const char *signal)
{
	char object[64];

	snprintf(object, sizeof(object),
		 "/org/kernel/devices/system/cpu/cpu%u", cpu);
	send_kevent(KEVENT_POWER, object, signal, "Cpu: %u\n", cpu);
	return 0;
}

static int kevent_cpu_online(unsigned int cpu)
{
	return kevent_cpu_send(cpu, "online");
}

static int kevent_cpu_offline(unsigned int cpu)
{
	return kevent_cpu_send(cpu, "offline");
}

static int kevent_cpu_start(void)
{
	int ret;

	/* _nocalls: the processors online now are not news either. */
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "kevent:online",
					kevent_cpu_online, kevent_cpu_offline);
	if (ret < 0)
		return ret;
	kevent_cpuhp_state = ret;
	return 0;
}

static void kevent_cpu_stop(void)
{
	cpuhp_remove_state_nocalls(kevent_cpuhp_state);
}

/* --- mce: machine-check errors (x86) ---------------------------------- */

#ifdef CONFIG_X86_MCE
static int kevent_mce_notify(struct notifier_block *nb, unsigned long val,
			     void *data)
{
	struct mce *m = data;
	char object[80];

	if (!m)
		return NOTIFY_DONE;
	snprintf(object, sizeof(object),
		 "/org/kernel/devices/system/machinecheck/cpu%u", m->extcpu);
	send_kevent(KEVENT_GENERAL, object,
		    m->status & MCI_STATUS_UC ? "uncorrected" : "corrected",
		    "Bank: %u\nStatus: 0x%016llx\nAddr: 0x%016llx\nMisc: 0x%016llx\n",
		    m->bank, m->status, m->addr, m->misc);
	/* The other decoders, and the kernel's own log, still see it. */
	return NOTIFY_DONE;
}

static struct notifier_block kevent_mce_nb = {
	.notifier_call = kevent_mce_notify,
	.priority = MCE_PRIO_LOWEST,
};

static int kevent_mce_start(void)
{
	mce_register_decode_chain(&kevent_mce_nb);
	return 0;
}

static void kevent_mce_stop(void)
{
	mce_unregister_decode_chain(&kevent_mce_nb);
}
#endif

/* --- the table ----------------------------------------------------------- */

struct kevent_bridge {
	const char *name;
	int (*start)(void);
	void (*stop)(void);
	bool started;
};

static struct kevent_bridge kevent_bridges[] = {
	{ .name = "pm", .start = kevent_pm_start, .stop = kevent_pm_stop },
	{ .name = "net", .start = kevent_net_start, .stop = kevent_net_stop },
	{ .name = "cpu", .start = kevent_cpu_start, .stop = kevent_cpu_stop },
#ifdef CONFIG_X86_MCE
	{ .name = "mce", .start = kevent_mce_start, .stop = kevent_mce_stop },
#else
	{ .name = "mce" }, /* known, but there is nothing to hear here */
#endif
};

static struct kevent_bridge *kevent_bridge_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kevent_bridges); i++)
		if (strlen(kevent_bridges[i].name) == len &&
		    !strncmp(kevent_bridges[i].name, name, len))
			return &kevent_bridges[i];
	return NULL;
}

void kevent_bridges_stop(void)
{
	size_t i = ARRAY_SIZE(kevent_bridges);

	while (i--) {
		if (!kevent_bridges[i].started)
			continue;
		kevent_bridges[i].stop();
		kevent_bridges[i].started = false;
	}
}

/*
 * Starts the bridges that bridges= names.  An unknown name fails the load
 * (-EINVAL), as a bad parameter should; a bridge that cannot start is
 * logged and left out, the others go on.
 */
int kevent_bridges_start(void)
{
	const char *p = bridges ? bridges : "";
	struct kevent_bridge *b;
	size_t len;
	int ret;

	while (*p) {
		len = strcspn(p, ",");
		if (len) {
			b = kevent_bridge_find(p, len);
			if (!b) {
				pr_err("bridges=: unknown bridge '%.*s' (pm, net, cpu, mce)\n",
				       (int)len, p);
				kevent_bridges_stop();
				return -EINVAL;
			}
			if (b->start && !b->started) {
				ret = b->start();
				if (ret)
					pr_warn("bridge %s not started: %d\n",
						b->name, ret);
				else
					b->started = true;
			}
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

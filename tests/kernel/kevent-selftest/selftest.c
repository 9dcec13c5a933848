// SPDX-License-Identifier: GPL-2.0
/*
 * kevent_selftest: checks the return values of send_kevent() and
 * send_kevent_atomic() when loaded, and logs
 * "kevent_selftest: PASS: N checks" or "kevent_selftest: FAIL: ...".
 * Seven of its calls send an event (see SELFTEST_EVENTS); with a listener,
 * the test sees them arrive, the longest object, signal and payload among
 * them.
 *
 * With irq_burst=N it only sends N events with send_kevent_atomic() from
 * one irq_work, that is in hard interrupt context, payloads "N: 0" to
 * "N: N-1", and logs "kevent_selftest: PASS: irq burst of N" when every
 * call returned 0.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hardirq.h>
#include <linux/irq_work.h>
#include <linux/kevent.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "selftest.h"

#define SELFTEST_OBJ	"/org/kernel/test/selftest"

static int checks, failures;
static DEFINE_SPINLOCK(selftest_lock);

static unsigned int irq_burst;
module_param(irq_burst, uint, 0444);
MODULE_PARM_DESC(irq_burst, "only send this many atomic events from hard irq");

static unsigned int burst_failed, burst_in_irq;

static void selftest_burst(struct irq_work *work)
{
	unsigned int i;

	burst_in_irq = in_hardirq();
	for (i = 0; i < irq_burst; i++)
		if (send_kevent_atomic(KEVENT_GENERAL, SELFTEST_OBJ "/irq",
				       "burst", "N: %u\n", i))
			burst_failed++;
}

static int selftest_irq_burst(void)
{
	struct irq_work work;

	init_irq_work(&work, selftest_burst);
	if (!irq_work_queue(&work)) {
		pr_err("FAIL: irq_work_queue\n");
		return 0;
	}
	irq_work_sync(&work);
	if (burst_failed || !burst_in_irq)
		pr_err("FAIL: irq burst: %u of %u calls failed, in hard irq: %u\n",
		       burst_failed, irq_burst, burst_in_irq);
	else
		pr_info("PASS: irq burst of %u\n", irq_burst);
	return 0;
}

static void expect(const char *what, int got, int want)
{
	checks++;
	if (got == want)
		return;
	failures++;
	pr_err("FAIL: %s returned %d, expected %d\n", what, got, want);
}

/* A string of len bytes: "/" then "a"s for an object, "s"s otherwise. */
static char *filled(size_t len, bool object)
{
	char *s = kmalloc(len + 1, GFP_KERNEL);

	if (!s)
		return NULL;
	memset(s, object ? 'a' : 's', len);
	if (object)
		s[0] = '/';
	s[len] = '\0';
	return s;
}

static int __init kevent_selftest_init(void)
{
	char *obj_max = filled(KEVENT_OBJECT_MAX, true);
	char *obj_long = filled(KEVENT_OBJECT_MAX + 1, true);
	char *sig_max = filled(KEVENT_SIGNAL_MAX, false);
	char *sig_long = filled(KEVENT_SIGNAL_MAX + 1, false);
	unsigned long flags;

	if (irq_burst) {
		kfree(obj_max);
		kfree(obj_long);
		kfree(sig_max);
		kfree(sig_long);
		return selftest_irq_burst();
	}

	if (!obj_max || !obj_long || !sig_max || !sig_long) {
		pr_err("FAIL: out of memory\n");
		goto out_free;
	}

	/* Seven events: SELFTEST_EVENTS in the guest script. */
	expect("send_kevent(valid)",
	       send_kevent(KEVENT_GENERAL, SELFTEST_OBJ, "valid", "A: %d\n", 1), 0);
	expect("send_kevent(NULL fmt)",
	       send_kevent(KEVENT_STORAGE, SELFTEST_OBJ, "nullfmt", NULL), 0);
	expect("send_kevent(1024-byte object)",
	       send_kevent(KEVENT_POWER, obj_max, "objmax", NULL), 0);
	expect("send_kevent(64-byte signal)",
	       send_kevent(KEVENT_FS, SELFTEST_OBJ, sig_max, NULL), 0);
	expect("send_kevent(4000-byte payload)",
	       send_kevent(KEVENT_HOTPLUG, SELFTEST_OBJ, "paymax", "%*d",
			   KEVENT_PAYLOAD_MAX, 7), 0);

	expect("send_kevent(type 5)",
	       send_kevent(KEVENT_TYPE_MAX + 1, SELFTEST_OBJ, "x", NULL), -EINVAL);
	expect("send_kevent(NULL object)",
	       send_kevent(KEVENT_GENERAL, NULL, "x", NULL), -EINVAL);
	expect("send_kevent(relative object)",
	       send_kevent(KEVENT_GENERAL, "org/x", "x", NULL), -EINVAL);
	expect("send_kevent(object with a tab)",
	       send_kevent(KEVENT_GENERAL, "/org/\tx", "x", NULL), -EINVAL);
	expect("send_kevent(object with Latin-1)",
	       send_kevent(KEVENT_GENERAL, "/org/\xe9", "x", NULL), -EINVAL);
	expect("send_kevent(1025-byte object)",
	       send_kevent(KEVENT_GENERAL, obj_long, "x", NULL), -EINVAL);
	expect("send_kevent(NULL signal)",
	       send_kevent(KEVENT_GENERAL, SELFTEST_OBJ, NULL, NULL), -EINVAL);
	expect("send_kevent(empty signal)",
	       send_kevent(KEVENT_GENERAL, SELFTEST_OBJ, "", NULL), -EINVAL);
	expect("send_kevent(signal with a space)",
	       send_kevent(KEVENT_GENERAL, SELFTEST_OBJ, "a b", NULL), -EINVAL);
	expect("send_kevent(65-byte signal)",
	       send_kevent(KEVENT_GENERAL, SELFTEST_OBJ, sig_long, NULL), -EINVAL);
	expect("send_kevent(4001-byte payload)",
	       send_kevent(KEVENT_GENERAL, SELFTEST_OBJ, "x", "%*d",
			   KEVENT_PAYLOAD_MAX + 1, 7), -EINVAL);

	/* Atomic context: a spinlock held, interrupts off. */
	spin_lock_irqsave(&selftest_lock, flags);
	expect("send_kevent_atomic(valid, irqs off)",
	       send_kevent_atomic(KEVENT_POWER, SELFTEST_OBJ, "atomic",
				  "Cpu: %d\n", 0), 0);
	expect("send_kevent_atomic(4000-byte payload, irqs off)",
	       send_kevent_atomic(KEVENT_POWER, SELFTEST_OBJ, "atomicmax",
				  "%*d", KEVENT_PAYLOAD_MAX, 7), 0);
	expect("send_kevent_atomic(bad signal, irqs off)",
	       send_kevent_atomic(KEVENT_POWER, SELFTEST_OBJ, "a/b", NULL),
	       -EINVAL);
	spin_unlock_irqrestore(&selftest_lock, flags);

	expect("the inline stubs", kevent_selftest_stubs(), 0);

out_free:
	kfree(obj_max);
	kfree(obj_long);
	kfree(sig_max);
	kfree(sig_long);
	if (failures || !checks)
		pr_err("FAIL: %d of %d checks failed\n", failures, checks);
	else
		pr_info("PASS: %d checks\n", checks);
	return 0;
}

static void __exit kevent_selftest_exit(void)
{
}

module_init(kevent_selftest_init);
module_exit(kevent_selftest_exit);

MODULE_DESCRIPTION("Checks of send_kevent() from another module");
MODULE_LICENSE("GPL");

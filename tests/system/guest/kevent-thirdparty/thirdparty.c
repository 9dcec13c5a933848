// SPDX-License-Identifier: GPL-2.0
/*
 * kevent_thirdparty: someone else's module that reports through kevent.ko,
 * built by DKMS against the kevent.ko DKMS built for the same kernel (see
 * send_kevent(9), "Calling it from another out-of-tree module").  When
 * loaded it sends one event from process context and one with interrupts
 * off, and logs what send_kevent() and send_kevent_atomic() returned.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kevent.h>
#include <linux/module.h>
#include <linux/spinlock.h>

#define THIRDPARTY_OBJ "/org/kernel/test/thirdparty"

static DEFINE_SPINLOCK(thirdparty_lock);

static int __init kevent_thirdparty_init(void)
{
	unsigned long flags;
	int ret, ret_atomic;

	ret = send_kevent(KEVENT_GENERAL, THIRDPARTY_OBJ, "loaded",
			  "Module: %s\nAnswer: %d\n", KBUILD_MODNAME, 42);
	spin_lock_irqsave(&thirdparty_lock, flags);
	ret_atomic = send_kevent_atomic(KEVENT_GENERAL, THIRDPARTY_OBJ, "atomic",
					"Module: %s\n", KBUILD_MODNAME);
	spin_unlock_irqrestore(&thirdparty_lock, flags);
	pr_info("send_kevent: %d, send_kevent_atomic: %d\n", ret, ret_atomic);
	return 0;
}

static void __exit kevent_thirdparty_exit(void)
{
}

module_init(kevent_thirdparty_init);
module_exit(kevent_thirdparty_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sends two kevents when loaded (keventd's system tests)");

// SPDX-License-Identifier: GPL-2.0
/*
 * Built without CONFIG_KEVENT: <linux/kevent.h> gives inline stubs, which
 * return 0 whatever the arguments.
 */
#include <linux/kevent.h>

#include "selftest.h"

int kevent_selftest_stubs(void)
{
	return send_kevent(KEVENT_GENERAL, NULL, NULL, NULL) +
	       send_kevent_atomic(KEVENT_TYPE_MAX + 1, "x", "", "%d", 1);
}

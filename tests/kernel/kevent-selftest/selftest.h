/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KEVENT_SELFTEST_H
#define _KEVENT_SELFTEST_H

int kevent_selftest_stubs(void);

#endif /* _KEVENT_SELFTEST_H */

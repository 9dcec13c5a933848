#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the test initramfs built by run-guest.sh (busybox sh).
/bin/busybox mkdir -p /proc /sys /dev /tmp /run /sbin /usr/bin /usr/sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
# the console is a terminal: keventctl would page its text through less,
# which would wait for a key (keventctl(8), --no-pager)
export KEVENTCTL_PAGER=cat
mount -t devtmpfs devtmpfs /dev
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
exec </dev/console >/dev/console 2>&1

. /ktest/env
echo "KTEST-BOOTED kernel=$(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"

# Every wait in the guest is bounded: this one bounds them all.
(
	sleep "$KTEST_GUEST_TIMEOUT"
	echo "KTEST-RESULT: FAIL (guest watchdog: script still running after ${KTEST_GUEST_TIMEOUT}s)"
	poweroff -f
) &

cd /ktest && sh /ktest/script.sh
rc=$?
cd /
if [ "$rc" -eq 0 ]; then
	echo "KTEST-RESULT: PASS"
else
	echo "KTEST-RESULT: FAIL (script exit status $rc)"
fi
echo "KTEST-UPTIME $(cut -d' ' -f1 /proc/uptime)"
sync
poweroff -f

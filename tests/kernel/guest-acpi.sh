#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest script for acpi-qemu-*: the ACPI power button of the machine,
# pressed by the host (QEMU's system_powerdown), reaches keventd's acpi
# source on a stock kernel and fires a rule written on the object and
# signal, one written on acpid's own line, and the packaged rule.
. /ktest/lib.sh

C=/tmp/keventd.ctl
LOG=/tmp/keventd.log
mkdir -p /tmp/out

# out_named PATTERN: a handler output file is named like PATTERN
out_named() { ls /tmp/out | grep -q "$1"; }

check "insmod button.ko (the ACPI button driver)" insmod /ktest/modules/button.ko
check "the power button is there" sh -c 'ls /sys/bus/acpi/drivers/button | grep -qE "PNP0C0C|LNXPWRBN"'
keventd --rules-dir /ktest/acpi/rules --rules-dir /ktest/repo-rules \
	--control "$C" --sources acpi,socket >>"$LOG" 2>&1 &
KPID=$!
check "keventd started" wait_for "$LOG" "running:" 20
check "keventd subscribed to the ACPI family" grep -q "acpi: subscribed to the ACPI event family" "$LOG"

echo "KTEST-HOST: system_powerdown"
check "the button rule fired" wait_until 20 out_named '^button-'
f=/tmp/out/$(ls /tmp/out | grep '^button-' | head -n 1)
cat "$f"
check "object is the power button" grep -qx "KEVENT_OBJECT=/org/kernel/acpi/button/power" "$f"
check "signal pressed" grep -qx "KEVENT_SIGNAL=pressed" "$f"
check "type power" grep -qx "KEVENT_TYPE=power" "$f"
check "source acpi" grep -qx "KEVENT_SOURCE=acpi" "$f"
check "class in the payload" grep -qx "KEVENT_CLASS=button/power" "$f"
check "event 0x80" grep -qx "KEVENT_EVENT=0x00000080" "$f"
check "acpid's line" grep -qE "^KEVENT_ACPID=button/power [A-Z0-9:]+ 00000080 [0-9a-f]{8}$" "$f"
check "the rule on acpid's line fired" wait_until 10 out_named '^acpid-'
check "the packaged power-button rule ran" wait_for "$LOG" "rule power-button" 10
check "status counts it" sh -c "keventctl --control $C status --json | grep -q '\"acpi\":{\"received\":1,'"

kill "$KPID"
check "keventd stopped" wait_pid "$KPID" 15
check "no warning in dmesg" sh -c "! dmesg | grep -E 'WARNING|BUG|Call Trace'"
finish

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest script for thermal-qemu-*: a real trip-point crossing on a stock
# kernel fires the CPU-overheat rule.  The thermal zone comes from an ACPI
# table (thermal/tz.asl) whose temperature is CMOS byte 0x7D.
. /ktest/lib.sh

C=/tmp/keventd.ctl
LOG=/tmp/keventd.log
Z=/sys/class/thermal/thermal_zone0
mkdir -p /tmp/out

# set_temp CELSIUS: CMOS index 0x7D (port 0x70 = 112), value (port 0x71 = 113)
set_temp() {
	printf '\175' | dd of=/dev/port bs=1 seek=112 count=1 conv=notrunc 2>/dev/null
	printf "\\$(printf %o "$1")" | dd of=/dev/port bs=1 seek=113 count=1 conv=notrunc 2>/dev/null
}
# out_named PATTERN: a handler output file is named like PATTERN
out_named() { ls /tmp/out | grep -q "$1"; }
# more_high N: more than N "high" outputs
more_high() { [ "$(ls /tmp/out | grep -c '^high-')" -gt "$1" ]; }
# wait_file PATTERN SECONDS: a handler output file named like PATTERN appears
wait_file() { wait_until "$2" out_named "$1"; }
start_keventd() {
	keventd --rules-dir /ktest/thermal/rules --rules-dir /ktest/repo-rules \
		--control "$C" --sources thermal,socket >>"$LOG" 2>&1 &
	KPID=$!
	wait_for "$LOG" "running:" 20
}

check "an ACPI thermal zone exists" test -d "$Z"
check "its type is acpitz (a CPU zone)" test "$(cat $Z/type)" = acpitz
cat $Z/type $Z/temp $Z/trip_point_*_type $Z/trip_point_*_temp 2>/dev/null | tr '\n' ' '
echo
set_temp 40
check "the zone reads 40 C" wait_for $Z/temp '^40000$' 10

check "keventd started" start_keventd
check "keventd subscribed to the thermal family" grep -q "subscribed to the thermal" "$LOG"

# --- up: the hot trip (90 C) is crossed -------------------------------------
set_temp 95
check "the zone reads 95 C" wait_for $Z/temp '^95000$' 10
check "the overheat rule fired with high" wait_file '^high-' 20
f=/tmp/out/$(ls /tmp/out | grep '^high-' | head -n 1)
cat "$f"
check "object is the CPU temperature" \
	grep -qx "KEVENT_OBJECT=/org/kernel/devices/system/cpu/temperature" "$f"
check "type power" grep -qx "KEVENT_TYPE=power" "$f"
check "source thermal" grep -qx "KEVENT_SOURCE=thermal" "$f"
check "zone 0 in the payload" grep -qx "KEVENT_ZONE=0" "$f"
check "zone type acpitz" grep -qx "KEVENT_ZONETYPE=acpitz" "$f"
check "trip type hot" grep -qx "KEVENT_TRIPTYPE=hot" "$f"
check "temperature in millidegrees" grep -qx "KEVENT_TEMPERATURE=95000" "$f"
check "the shipped cpu-overheat rule matched too" wait_for "$LOG" "rule cpu-overheat" 10

# --- down: normal, once ------------------------------------------------------
set_temp 40
check "the overheat rule fired with normal" wait_file '^normal-' 20
f=/tmp/out/$(ls /tmp/out | grep '^normal-' | head -n 1)
check "normal carries the temperature" grep -qx "KEVENT_TEMPERATURE=40000" "$f"

# --- restart while hot: the high already handled is not said again -------
set_temp 96
check "hot again" wait_file '^high-2' 20
kill -TERM "$KPID"
wait_pid "$KPID" 20
check "keventd stopped cleanly" test $? -eq 0
check "thermal.zones remembers the hot zone" test -s /run/keventd/thermal.zones
before=$(ls /tmp/out | grep -c '^high-')
check "keventd started again while hot" start_keventd
check "its control socket answers" wait_until 10 keventctl --control "$C" status
# the start-up scan submits before the control socket is served
thermal_received() {
	keventctl --control "$C" status --json |
		sed -n 's/.*"thermal":{"received":\([0-9]*\).*/\1/p'
}
check "the zone it knew hot gave no second high" test "$(thermal_received)" = 0

# --- restart while hot, nothing remembered: high at start-up ----------------
kill -TERM "$KPID"
wait_pid "$KPID" 20
check "keventd stopped cleanly again" test $? -eq 0
rm -f /run/keventd/thermal.zones
check "keventd started while hot, its state gone" start_keventd
wait_until 10 more_high "$before"
check "high was emitted at start-up" more_high "$before"
check "the start-up scan said so" grep -q "already above a trip point at start-up" "$LOG"
f=/tmp/out/$(ls /tmp/out | grep '^high-' | tail -n 1)
check "start-up high has the temperature" grep -qx "KEVENT_TEMPERATURE=96000" "$f"

set_temp 30
kill -TERM "$KPID"
wait_pid "$KPID" 20
check "keventd exited 0" test $? -eq 0
tail -n 25 "$LOG"
finish

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest script for input-qemu-*: keventd's input source on a stock kernel
# with no udevd (so the kernel's own uevents say which devices come and
# go).  A uinput device (kevent-uinput) with KEY_POWER, KEY_A and SW_LID,
# its lid on before keventd starts: the start-up state is reported
# (Initial: yes), a press and release of the power key and the lid off and
# on fire rules, KEY_A and the autorepeat never show anywhere; a device
# plugged in later is followed, and one unplugged is dropped while keventd
# runs on, whether its remove uevent or its failing read (ENODEV, counted)
# says so first.
. /ktest/lib.sh

C=/tmp/keventd.ctl
LOG=/tmp/keventd.log
M=/ktest/modules
mkdir -p /tmp/out

# device N NAME LID: kevent-uinput in the background, commands through the
# FIFO /tmp/uN.in (held open on descriptor 3 + N), answers in /tmp/uN.out.
device() {
	rm -f "/tmp/u$1.in" "/tmp/u$1.out"
	mkfifo "/tmp/u$1.in"
	kevent-uinput "$2" "$3" <"/tmp/u$1.in" >"/tmp/u$1.out" 2>&1 &
	eval "exec $((3 + $1))>/tmp/u$1.in"
	wait_for "/tmp/u$1.out" '^created /dev/input/event' 10
}
# send N COMMAND: the command to device N, and its answer awaited.
send() {
	echo "$2" >&$((3 + $1))
	wait_for "/tmp/u$1.out" "^done $2\$" 10 || wait_for "/tmp/u$1.out" "^destroyed" 10
}
# node N: device N's /dev/input/eventM
node() { sed -n 's/^created //p' "/tmp/u$1.out"; }
# fired SIGNAL OBJECT [INITIAL]: a handler recorded it (within 10 s)
has_event() {
	for f in /tmp/out/input-*; do
		[ -e "$f" ] || continue
		grep -qx "KEVENT_OBJECT=$2" "$f" && grep -qx "KEVENT_SIGNAL=$1" "$f" &&
			grep -qx "KEVENT_DEVICE=$3" "$f" &&
			{ [ -z "$4" ] || grep -qx "KEVENT_INITIAL=$4" "$f"; } &&
			{ [ -n "$4" ] || ! grep -q "^KEVENT_INITIAL=" "$f"; } && return 0
	done
	return 1
}
fired() { wait_until 10 has_event "$@"; }
# count SIGNAL OBJECT: how many handler outputs have them
count() {
	grep -lx "KEVENT_SIGNAL=$1" /tmp/out/input-* 2>/dev/null | xargs -r grep -lx "KEVENT_OBJECT=$2" |
		wc -l
}
status_has() { keventctl --control "$C" status --json | grep -q "$1"; }

check "insmod evdev" insmod "$M/evdev.ko"
check "insmod uinput" insmod "$M/uinput.ko"
check "/dev/uinput is there" test -c /dev/uinput
check "no udevd here" test ! -e /run/udev/control
check "device 1 created, lid on" device 1 "kevent test keys" 1
D1=$(node 1)
check "device 1 has an event node" test -c "$D1"

keventd --rules-dir /ktest/input/rules --rules-dir /ktest/repo-rules --control "$C" \
	--sources input,socket --log-level debug >>"$LOG" 2>&1 &
KPID=$!
check "keventd started" wait_for "$LOG" "running:" 20
check "keventd follows device 1" grep -q "input: following $D1 (kevent test keys)" "$LOG"
check "devices followed through the kernel's uevents" grep -q "uevents from the kernel" "$LOG"
check "the lid's start-up state: on, Initial: yes" \
	fired on /org/kernel/input/switch/lid "$D1" yes
f=$(grep -lx "KEVENT_INITIAL=yes" /tmp/out/input-* | head -n 1)
cat "$f"
check "initial: type power, source input" sh -c "grep -qx KEVENT_TYPE=power $f && grep -qx KEVENT_SOURCE=input $f"
check "initial: Name and Code" sh -c "grep -qx 'KEVENT_NAME=kevent test keys' $f && grep -qx KEVENT_CODE=SW_LID $f"

check "device 1: power key" send 1 power
check "power key press" fired press /org/kernel/input/key/power "$D1"
check "power key release" fired release /org/kernel/input/key/power "$D1"
check "device 1: KEY_A" send 1 a
check "device 1: lid off" send 1 "lid 0"
check "lid off" fired off /org/kernel/input/switch/lid "$D1"
check "device 1: lid on" send 1 "lid 1"
check "lid on" fired on /org/kernel/input/switch/lid "$D1"
f=$(grep -lx "KEVENT_SIGNAL=press" /tmp/out/input-* | head -n 1)
cat "$f"
check "press: Code KEY_POWER" grep -qx "KEVENT_CODE=KEY_POWER" "$f"
check "the packaged power-key rule logged it" wait_for "$LOG" "rule power-key" 10
check "the packaged lid rule logged it" wait_for "$LOG" "rule lid-switch" 10
# the events of device 1 so far, each once: autorepeat (2) is no event
check "one press, one release (no autorepeat)" \
	sh -c "[ $(count press /org/kernel/input/key/power) = 1 ] && [ $(count release /org/kernel/input/key/power) = 1 ]"
check "status: 5 events received" status_has '"input":{"received":5,'

# --- plugged in while keventd runs --------------------------------------
check "device 2 created, lid off" device 2 "kevent hotplug keys" 0
D2=$(node 2)
check "keventd follows device 2" wait_for "$LOG" "input: following $D2 (kevent hotplug keys)" 10
check "device 2's lid state: off, Initial: yes" \
	fired off /org/kernel/input/switch/lid "$D2" yes
check "device 2: power key" send 2 power
check "device 2: power key press" fired press /org/kernel/input/key/power "$D2"

# --- unplugged while keventd runs ---------------------------------------
check "device 2 destroyed" send 2 quit
check "keventd dropped device 2" wait_for "$LOG" "input: $D2 (kevent hotplug keys) removed" 10
check "device 1 still heard" send 1 power
check "device 1: another press" wait_until 10 sh -c "[ \$(grep -lx KEVENT_SIGNAL=press /tmp/out/input-* | xargs grep -lx KEVENT_DEVICE=$D1 | wc -l) = 2 ]"
check "keventd still runs" kill -0 "$KPID"
keventctl --control "$C" status
check "status: nothing lost, overrun or rejected" status_has '"input":{"received":10,"recovered":0,"redelivered":0,"rejected":0,"overruns":0,"lost":0,'

# --- a reader that falls behind: SYN_DROPPED, resynced, counted ---------
# Stopped, keventd reads nothing while the lid flips 301 times (off first,
# so it ends off): far more than the kernel's buffer for a reader holds.
last_lid() {
	f=$(grep -lx "KEVENT_DEVICE=$D1" /tmp/out/input-* | xargs grep -lx KEVENT_OBJECT=/org/kernel/input/switch/lid |
		sed 's/.*input-//' | sort -n | tail -n 1)
	sed -n 's/^KEVENT_SIGNAL=//p' "/tmp/out/input-$f"
}
lid_is() { [ "$(last_lid)" = "$1" ]; }
kill -STOP "$KPID"
check "device 1: 301 lid flips" send 1 "flap 301"
kill -CONT "$KPID"
check "the overrun is counted" wait_until 10 sh -c "keventctl --control $C status --json | grep -q '\"input\":{[^}]*\"overruns\":[1-9]'"
check "resynced: the last lid event says off, as the lid is" wait_until 10 lid_is off
check "device 1: lid on after the storm" send 1 "lid 1"
check "and heard normally again" wait_until 10 lid_is on
keventctl --control "$C" status

# --- KEY_A (and everything but the listed codes) never appears ----------
check "KEY_A in no handler's environment" sh -c "! grep -rq KEY_A /tmp/out"
check "KEY_A nowhere in keventd's log" sh -c "! grep -q 'KEY_A' $LOG"
check "no key/a object anywhere" sh -c "! grep -rq 'input/key/a\\b' /tmp/out $LOG"
check "KEY_A not in status" sh -c "! keventctl --control $C status --json | grep -q KEY_A"

check "device 1 destroyed" send 1 quit
check "keventd dropped device 1" wait_for "$LOG" "input: $D1 (kevent test keys) removed" 10
kill "$KPID"
check "keventd stopped cleanly" wait_pid "$KPID" 15
grep 'input: ' "$LOG"

# --- a device that vanishes under the read ------------------------------
# The kernel sends the remove uevent before it hangs up the device's
# readers; with no uevents to hear (udevd's monitor, and no udevd), all
# keventd learns of the unplug is its read failing with ENODEV.
LOG2=/tmp/keventd2.log
check "device 3 created" device 3 "kevent vanishing keys" 1
D3=$(node 3)
keventd --rules-dir /ktest/input/rules --control "$C" --sources input,socket \
	--udev-monitor udev >>"$LOG2" 2>&1 &
KPID=$!
check "keventd (udevd's monitor) started" wait_for "$LOG2" "running:" 20
check "it follows device 3" grep -q "input: following $D3 (kevent vanishing keys)" "$LOG2"
check "device 3 destroyed" send 3 quit
check "keventd dropped device 3 on ENODEV" \
	wait_for "$LOG2" "input: $D3 (kevent vanishing keys) went away while read (No such device)" 10
check "and counted it under rejected" status_has '"input":{"received":1,"recovered":0,"redelivered":0,"rejected":1,'
check "keventd still runs" kill -0 "$KPID"
kill "$KPID"
check "keventd stopped cleanly" wait_pid "$KPID" 15
grep 'input: ' "$LOG2"
check "no warning in dmesg" sh -c "! dmesg | grep -E 'WARNING|BUG|Call Trace'"
finish

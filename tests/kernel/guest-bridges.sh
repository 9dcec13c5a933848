#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest script for kernel-bridges-*: kevent.ko's bridges from the stock
# kernel's notifier chains (pm, net, cpu, mce), seen by kevent-listen
# (run by run-guest.sh with two CPUs, the dummy and mce-inject modules of
# the kernel's own package, and the ip program), and keventd through a
# storm of link flaps.
. /ktest/lib.sh

M=/ktest/modules

# listen OUT: kevent-listen in the background, until stopped, its output
# in OUT; waits (bounded) until it has subscribed.
listen() {
	rm -f "$1"
	kevent-listen -t 120 >"$1" 2>&1 &
	LPID=$!
	wait_for "$1" '^READY' 15
}

# seen OUT PATTERN: an EVENT line of OUT matches PATTERN, within 10 s.
seen() {
	wait_for "$1" "^EVENT .*$2" 10
}

check "insmod kevent.ko" insmod "$M/kevent.ko"
check "the bridges parameter says all four" \
	test "$(cat /sys/module/kevent/parameters/bridges)" = "pm,net,cpu,mce"
check "listener subscribed" listen /tmp/l.out

# --- net: a dummy link up and down -------------------------------------
check "insmod dummy" insmod "$M/dummy.ko" numdummies=0
check "ip link add kt0 type dummy" ip link add kt0 type dummy
check "ip link set kt0 up" ip link set kt0 up
check "net: up" seen /tmp/l.out "type=hotplug object=/org/kernel/net/kt0 signal=up .*payload=Ifindex: [0-9]*\\\\nAddress: "
check "ip link set kt0 down" ip link set kt0 down
check "net: down" seen /tmp/l.out "object=/org/kernel/net/kt0 signal=down"
check "ip link del kt0" ip link del kt0
# the links there were before the module (lo) are not news
check "net: no replayed event for lo" sh -c "! grep -q 'object=/org/kernel/net/lo ' /tmp/l.out"

# --- cpu: cpu1 offline and online ---------------------------------------
check "cpu1 offline" sh -c 'echo 0 >/sys/devices/system/cpu/cpu1/online'
check "cpu: offline" seen /tmp/l.out "type=power object=/org/kernel/devices/system/cpu/cpu1 signal=offline"
check "cpu1 online" sh -c 'echo 1 >/sys/devices/system/cpu/cpu1/online'
check "cpu: online" seen /tmp/l.out "object=/org/kernel/devices/system/cpu/cpu1 signal=online"

# --- pm: a test suspend (the devices are suspended and resumed) ---------
if [ -w /sys/power/pm_test ] && grep -qw freeze /sys/power/state; then
	echo 1 >/sys/module/suspend/parameters/pm_test_delay 2>/dev/null || true
	check "pm_test devices" sh -c 'echo devices >/sys/power/pm_test'
	check "suspend to idle (pm_test)" sh -c 'echo freeze >/sys/power/state'
	check "pm: suspend" seen /tmp/l.out "type=power object=/org/kernel/power/sleep signal=suspend"
	check "pm: resume" seen /tmp/l.out "object=/org/kernel/power/sleep signal=resume"
	check "pm: suspend before resume" sh -c \
		"grep -n 'signal=suspend\|signal=resume' /tmp/l.out | head -n 1 | grep -q suspend"
else
	fail "pm: no /sys/power/pm_test or no freeze state on this kernel"
fi

# --- mce: a corrected error, injected in software -----------------------
I=/sys/kernel/debug/mce-inject
check "insmod mce-inject" insmod "$M/mce-inject.ko"
if [ -d "$I" ]; then
	echo sw >"$I/flags"
	echo 0x9c00000000000001 >"$I/status" # VAL, OVER=0, EN, ADDRV+MISCV, corrected
	echo 0x1234000 >"$I/addr"
	echo 0 >"$I/misc"
	echo 1 >"$I/bank" # writing the bank injects
	check "mce: corrected" seen /tmp/l.out \
		"type=general object=/org/kernel/devices/system/machinecheck/cpu[0-9]* signal=corrected .*payload=Bank: 1\\\\nStatus: 0x9c00000000000001\\\\nAddr: 0x0000000001234000"
else
	fail "mce: no $I"
fi

# --- a notifier storm: 1,000 link flaps, as fast as ip can make them ----
# keventd with the kernel source hears every up and every down: none lost
# (its kernel sequence numbers without a gap, status lost 0), whatever
# overran its socket fetched again from kevent.ko's ring and counted.
C=/tmp/keventd.ctl
KLOG=/tmp/keventd.log
keventd --rules-dir /tmp/no-rules --control "$C" --sources kernel,socket \
	--history 4096 >"$KLOG" 2>&1 &
KPID=$!
check "keventd started" wait_for "$KLOG" "running:" 20
check "keventd subscribed to kevent" wait_for "$KLOG" "kernel: subscribed" 20
check "ip link add d0 type dummy" ip link add d0 type dummy
# 1,000 flaps, up and down, written to the link's flags by the shell itself
# (no process per flap: as fast as the kernel takes them)
F=/sys/class/net/d0/flags
f=$(cat "$F")
t0=$(cut -d' ' -f1 /proc/uptime)
flap() {
	i=0
	while [ "$i" -lt 1000 ]; do
		echo $((f | 1)) >"$F" && echo $((f & ~1)) >"$F" || return 1
		i=$((i + 1))
	done
}
check "1,000 flaps of d0" flap
t1=$(cut -d' ' -f1 /proc/uptime)
echo "KTEST-INFO: 2,000 link changes in $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s"
storm_events() { keventctl --control "$C" events -n 4096 | grep ' kernel seq='; }
have_all() { [ "$(storm_events | grep -c ' /org/kernel/net/d0 ')" -ge 2000 ]; }
# seq and signal of d0's events, in sequence order (recovered ones came later)
d0_by_seq() {
	sed -n 's/.* kernel seq=\([0-9]*\) hotplug \/org\/kernel\/net\/d0 \([a-z-]*\)$/\1 \2/p' \
		/tmp/storm | sort -n
}
alternate() {
	d0_by_seq | awk '{ if ($2 != (NR % 2 ? "up" : "down")) bad++ } END { exit bad ? 1 : 0 }'
}
no_gap() {
	sed -n 's/.* kernel seq=\([0-9]*\) .*/\1/p' /tmp/storm | sort -n |
		awk 'NR > 1 && $1 != prev + 1 { bad++ } { prev = $1 } END { exit bad ? 1 : 0 }'
}
check "keventd received all 2,000" wait_until 60 have_all
storm_events >/tmp/storm
check "exactly 1,000 up" test "$(d0_by_seq | grep -c ' up$')" = 1000
check "exactly 1,000 down" test "$(d0_by_seq | grep -c ' down$')" = 1000
check "up and down alternate, in sequence order" alternate
check "kernel sequence numbers without a gap" no_gap
keventctl --control "$C" status
check "status: kernel lost 0" sh -c "keventctl --control $C status --json | grep -q '\"kernel\":{[^}]*\"lost\":0,'"
check "keventd still runs" kill -0 "$KPID"
check "ip link del d0" ip link del d0
kill "$KPID"
check "keventd stopped" wait_pid "$KPID" 30

# --- unloading with the bridges set up ----------------------------------
kill "$LPID" 2>/dev/null
wait "$LPID" 2>/dev/null
check "rmmod kevent" rmmod kevent
check "no warning in dmesg" sh -c "! dmesg | grep -E 'WARNING|BUG|Call Trace'"
# no bridge is left calling into the unloaded module
check "link up after unload" sh -c 'ip link add kt1 type dummy && ip link set kt1 up && ip link del kt1'
check "cpu1 after unload" sh -c 'echo 0 >/sys/devices/system/cpu/cpu1/online && echo 1 >/sys/devices/system/cpu/cpu1/online'
check "no oops after unload" sh -c "! dmesg | grep -E 'BUG|Oops|Call Trace'"

# --- bridges= chooses ------------------------------------------------------
check "insmod kevent.ko bridges=cpu" insmod "$M/kevent.ko" bridges=cpu
check "listener subscribed again" listen /tmp/l2.out
ip link add kt2 type dummy && ip link set kt2 up
check "cpu1 offline (bridges=cpu)" sh -c 'echo 0 >/sys/devices/system/cpu/cpu1/online'
check "cpu bridge on" seen /tmp/l2.out "cpu1 signal=offline"
check "net bridge off" sh -c "! grep -q 'object=/org/kernel/net/kt2' /tmp/l2.out"
echo 1 >/sys/devices/system/cpu/cpu1/online
kill "$LPID" 2>/dev/null
wait "$LPID" 2>/dev/null
check "rmmod kevent (bridges=cpu)" rmmod kevent
check "insmod kevent.ko bridges=bogus fails" sh -c "! insmod $M/kevent.ko bridges=bogus"
check "and says why" sh -c "dmesg | grep -q \"unknown bridge 'bogus'\""
finish

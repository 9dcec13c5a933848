#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest script for kmsg-qemu-*: keventd's kmsg source under printk storms
# larger than the kernel's log ring, made by kevent.ko's debugfs file
# printk ("COUNT WORD": COUNT records "kevent: printk I/COUNT WORD").
#
# 1. keventd stopped (SIGSTOP) through a storm: the ring keeps its newest
#    records only.  Once it runs again, lost equals exactly the records
#    the kernel overwrote before keventd read them (the first number the
#    ring still has, less the number after keventd's position), and every
#    record from there on is received.
# 2. keventd restarted in the same boot goes on after kmsg.pos.
# 3. A storm while keventd reads, with a handler for every tenth record
#    and a share of 32 events: the source pauses, every number is received
#    or counted lost, none twice, and the source still reads after it.
# 4. An OOM kill in a memory cgroup: oom-kill with the task's pid, name
#    and uid and the cgroup whose limit it hit.
. /ktest/lib.sh

D=/sys/kernel/debug/kevent
C=/tmp/keventd.ctl
ST=/run/keventd-kmsg
STORM=${STORM_COUNT:-50000}
mkdir -p /tmp/marks /tmp/rules "$ST"

# a mark: one record "kevent: printk 1/1 NAME", whose handler writes the
# record's number to /tmp/marks/NAME
cat >/tmp/rules/10-mark.yaml <<'EOF'
rules:
  - name: mark
    match:
      source: kmsg
      payload: {Message: "kevent: printk 1/1 mark-*"}
    shell: 'echo "$KEVENT_KMSG_SEQNUM" >/tmp/marks/.new && mv /tmp/marks/.new "/tmp/marks/${KEVENT_MESSAGE##* }"'
EOF
# every kernel record is an event: no number is passed over below a priority
cat >/tmp/keventd.yaml <<'EOF'
kmsg:
  priority: debug
EOF

status_json() { keventctl --control "$C" status --json; }
# kmsg_num KEY: the first "KEY":N after "kmsg": in status --json
kmsg_num() { status_json | sed -n "s/.*\"kmsg\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"; }
# pos: the number of kmsg.pos, its zeros gone
pos() { sed -n 's/^[^ ]* 0*\([0-9][0-9]*\)$/\1/p' "$ST/kmsg.pos"; }
# mark NAME: its record, and its number once keventd handled it
mark() {
	echo "1 mark-$1" >"$D/printk"
	wait_until 120 test -s "/tmp/marks/mark-$1" && cat "/tmp/marks/mark-$1"
}
# first: the number of the oldest record the ring still has
first() { dd if=/dev/kmsg bs=8192 count=1 2>/dev/null | cut -d, -f2; }
start_keventd() {
	LOG=$1
	shift
	keventd --rules-dir /tmp/rules --control "$C" --sources kmsg,socket \
		--config /tmp/keventd.yaml --state-dir "$ST" "$@" >"$LOG" 2>&1 &
	KPID=$!
	wait_for "$LOG" "running:" 20
}
stop_keventd() {
	kill -TERM "$KPID"
	wait_pid "$KPID" 60
}

check "insmod kevent.ko" insmod /ktest/modules/kevent.ko
check "the printk file is root's, write-only" \
	sh -c "ls -l $D/printk | grep -q '^--w-------'"
check "a bad printk line is refused" sh -c "! echo 'x y' >$D/printk"
check "keventd started" start_keventd /tmp/keventd.log
check "a first start begins at the end of the log" \
	grep -q "kmsg: starting at the end of the log" /tmp/keventd.log

# --- 1. stopped through a storm larger than the ring ---------------------
p=$(mark a1)
check "mark a1 handled ($p)" test -n "$p"
wait_until 20 test "$(pos)" -ge "$p"
P=$(pos)
R=$(kmsg_num received)
L=$(kmsg_num lost)
kill -STOP "$KPID"
echo "$STORM storm-a" >"$D/printk"
echo "1 mark-a2" >"$D/printk"
F=$(first)
kill -CONT "$KPID"
check "the ring overflowed: it starts at $F, keventd was at $P" test "$F" -gt $((P + 1))
E=$(wait_until 120 test -s /tmp/marks/mark-a2 && cat /tmp/marks/mark-a2)
check "mark a2 handled after the storm ($E)" test -n "$E"
wait_until 60 test "$(pos)" -ge "$E"
lost=$(($(kmsg_num lost) - L))
received=$(($(kmsg_num received) - R))
echo "KTEST-BENCH: kmsg storm of $STORM while stopped: ring kept $F..$E," \
	"keventd was at $P: lost $lost, received $received"
check "lost = what the kernel overwrote ($lost = $F - $P - 1)" test "$lost" -eq $((F - P - 1))
check "received every record the ring kept ($received = $E - $F + 1)" \
	test "$received" -eq $((E - F + 1))
check "the loss is logged" grep -q "record(s) before $F lost" /tmp/keventd.log

# --- 2. a restart goes on after kmsg.pos ----------------------------------
check "keventd stopped" stop_keventd
P=$(pos)
check "kmsg.pos after the stop is at mark a2 or later ($P)" test "$P" -ge "$E"
echo "1 mark-while-away" >"$D/printk"
check "keventd started again" start_keventd /tmp/keventd2.log
check "it goes on after kmsg.pos" grep -q "kmsg: going on after record $P" /tmp/keventd2.log
check "the record made while it was away is handled" \
	wait_until 60 test -s /tmp/marks/mark-while-away
check "nothing lost across the restart" test "$(kmsg_num lost)" -eq 0
check "keventd stopped" stop_keventd

# --- 3. a live storm, a handler per tenth record, a share of 32 ----------
cat >/tmp/rules/20-storm.yaml <<'EOF'
rules:
  - name: storm
    match:
      source: kmsg
      payload: {Message: "kevent: printk *0/* storm-b"}
    run: [/bin/true]
EOF
check "keventd started with --queue-size 64" start_keventd /tmp/keventd3.log --queue-size 64
p=$(mark b1)
check "mark b1 handled ($p)" test -n "$p"
wait_until 20 test "$(pos)" -ge "$p"
P=$(pos)
R=$(kmsg_num received)
L=$(kmsg_num lost)
echo "$STORM storm-b" >"$D/printk"
E=$(mark b2)
check "the source still reads after the storm: mark b2 handled ($E)" test -n "$E"
wait_until 60 test "$(pos)" -ge "$E"
lost=$(($(kmsg_num lost) - L))
received=$(($(kmsg_num received) - R))
paused=$(kmsg_num paused_times)
echo "KTEST-BENCH: kmsg storm of $STORM while reading, share 32: received $received," \
	"lost $lost, paused $paused times"
check "every number received or lost, none twice ($received + $lost = $E - $P)" \
	test $((received + lost)) -eq $((E - P))
check "the full share paused the source ($paused)" test "$paused" -ge 1

# --- 4. an OOM kill in a cgroup with a memory limit -----------------------
cat >/tmp/rules/30-oom.yaml <<'EOF'
rules:
  - name: oom
    match: {source: kmsg, signal: oom-kill}
    shell: 'echo "$KEVENT_OBJECT|$KEVENT_PID|$KEVENT_COMM|$KEVENT_UID|$KEVENT_MEMCG" >/tmp/oom.new && mv /tmp/oom.new /tmp/oom'
EOF
check "keventd read the oom rule" keventctl --control "$C" reload
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/kmsg-hog
echo 16M >/sys/fs/cgroup/kmsg-hog/memory.max
sh -c 'echo $$ >/sys/fs/cgroup/kmsg-hog/cgroup.procs && exec dd if=/dev/zero of=/dev/null bs=64M count=1' \
	2>/dev/null &
HOG=$!
wait "$HOG"
hog_status=$?
check "the memory hog was killed (status $hog_status)" test "$hog_status" -gt 128
check "oom-kill ran its rule" wait_until 60 test -f /tmp/oom
echo "oom-kill: $(cat /tmp/oom)"
check "oom-kill: object, pid, comm, uid and the memory cgroup" \
	grep -qx "/org/kernel/mm/oom|$HOG|dd|0|/kmsg-hog" /tmp/oom
check "keventd exited 0 on SIGTERM" stop_keventd
check "no kernel warning" sh -c "! dmesg | grep -q 'WARNING:\|BUG:'"
grep -v "rule storm\|rule mark\|event kmsg seq" /tmp/keventd3.log | tail -n 15
finish

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest script for keventd-qemu-*: the whole path, kernel call -> netlink ->
# keventd -> rule -> handler, on a booted Debian kernel.  keventd starts
# before the module is loaded and must subscribe when the family appears,
# and again after an unload and reload.
. /ktest/lib.sh

D=/sys/kernel/debug/kevent
C=/tmp/keventd.ctl
LOG=/tmp/keventd.log
BENCH_COUNT=${BENCH_COUNT:-20000}
mkdir -p /tmp/out

emit() { echo "$2" >"$D/$1"; }
count() { grep -c "$1" "$LOG"; }
# outputs_at_least N / subscribed_at_least N: handler output files, and
# subscriptions to the kevent family in the log
outputs_at_least() { [ "$(ls /tmp/out | wc -l)" -ge "$1" ]; }
subscribed_at_least() { [ "$(count 'subscribed to the kevent family')" -ge "$1" ]; }
status_json() { keventctl --control "$C" status --json; }
# caught_up: waits (at most 120 s) until keventd has handled every event
# kevent.ko sent so far (its position names the module's last number)
caught_up() { wait_until 120 kernel_caught_up "$KEVENTD_KERNEL_POS"; }
# kernel_num KEY: the first "KEY":N after "kernel": in status --json
kernel_num() { status_json | sed -n "s/.*\"kernel\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"; }
stat_of() { sed -n "s/^$1: //p" "$D/stats"; }
# start_keventd LOG [ENV=VALUE...]: keventd in the background, its log in
# LOG (then $LOG), its pid in $KPID; waits until it runs.
export KEVENTD_KERNEL_POS=/run/keventd-test/kernel.pos
start_keventd() {
	LOG=$1
	shift
	env "$@" keventd --rules-dir /ktest/keventd/rules --control "$C" --sources kernel,socket \
		--log-level debug >"$LOG" 2>&1 &
	KPID=$!
	wait_for "$LOG" "running:" 20
}
stop_keventd() {
	kill -TERM "$KPID"
	wait_pid "$KPID" 20
}

check "keventd started" start_keventd "$LOG"
check "keventd waits for the module" grep -q "kevent module is not loaded" "$LOG"

check "insmod kevent.ko" insmod /ktest/modules/kevent.ko
check "keventd subscribed when the family appeared" \
	wait_for "$LOG" "subscribed to the kevent family" 10

# --- every type, from process and from atomic (hard irq) context ----------
for t in general storage power fs hotplug; do
	emit emit "$t /org/kernel/test/$t process Cpu: 1\nType: $t"
	emit emit_atomic "$t /org/kernel/test/$t atomic Cpu: 2"
done
wait_until 20 outputs_at_least 10
check "10 handlers ran" test "$(ls /tmp/out | wc -l)" -eq 10
for t in general storage power fs hotplug; do
	f=/tmp/out/$t-process
	check "$t/process: KEVENT_TYPE" grep -qx "KEVENT_TYPE=$t" "$f"
	check "$t/process: KEVENT_OBJECT" grep -qx "KEVENT_OBJECT=/org/kernel/test/$t" "$f"
	check "$t/process: KEVENT_SIGNAL" grep -qx "KEVENT_SIGNAL=process" "$f"
	check "$t/process: KEVENT_SOURCE" grep -qx "KEVENT_SOURCE=kernel" "$f"
	check "$t/process: KEVENT_CPU from the payload" grep -qx "KEVENT_CPU=1" "$f"
	check "$t/process: argv" grep -qx "ARGV1=process" "$f"
	check "$t/process: KEVENT_RULE" grep -qx "KEVENT_RULE=kernel-event" "$f"
	f=/tmp/out/$t-atomic
	check "$t/atomic: KEVENT_TYPE" grep -qx "KEVENT_TYPE=$t" "$f"
	check "$t/atomic: KEVENT_CPU" grep -qx "KEVENT_CPU=2" "$f"
	check "$t/atomic: seqnum set" grep -q "^KEVENT_SEQNUM=[1-9]" "$f"
done
cat /tmp/out/power-process

# --- a forged multicast from user space is rejected and counted -----------
kevent-forge general /org/kernel/test/forged forged >/tmp/forge.out 2>&1
check "forged message sent" grep -q '^FORGED' /tmp/forge.out
check "forged message rejected in the log" wait_for "$LOG" "sender port id != 0" 10
check "status counts the forgery as a kernel reject" test "$(kernel_num rejected)" -ge 1
check "the forgery ran no handler" test ! -e /tmp/out/forged-forged

# --- unload and load again: keventd follows ----------------------------------
check "rmmod kevent" rmmod kevent
check "keventd saw the family go" wait_for "$LOG" "family went away" 10
lost_before_reload=$(kernel_num lost)
check "insmod kevent.ko again, a 16 MiB ring" insmod /ktest/modules/kevent.ko ring_kb=16384
wait_until 10 subscribed_at_least 2
check "keventd subscribed again" test "$(count 'subscribed to the kevent family')" -eq 2
emit emit "power /org/kernel/test/reloaded again Cpu: 3"
check "an event after the reload ran its handler" wait_for /tmp/out/reloaded-again \
	"KEVENT_CPU=3" 10
check "the reload: nothing counted lost" test "$(kernel_num lost)" = "$lost_before_reload"
check "the reload: the event was live, not recovered" \
	sh -c '! grep -q KEVENT_RECOVERED /tmp/out/reloaded-again'

# --- keventd stopped, 10000 events sent, keventd started: all recovered -----
check "keventd stopped" stop_keventd
INST=$(stat_of instance)
check "the position file names this instance ($(cat $KEVENTD_KERNEL_POS))" \
	grep -q "^$INST [0-9]*\$" "$KEVENTD_KERNEL_POS"
emit emit "general /org/kernel/test/away sent Cpu: 4"
emit emit_atomic "power /org/kernel/test/away atomic Cpu: 5"
emit bench "9998 general"
check "keventd started again" start_keventd /tmp/keventd2.log
check "the missed events were fetched" wait_for "$LOG" "recovered 10000 missed events" 60
check "keventd caught up" caught_up
check "received 10000 ($(kernel_num received))" test "$(kernel_num received)" = 10000
check "recovered 10000 ($(kernel_num recovered))" test "$(kernel_num recovered)" = 10000
check "lost 0" test "$(kernel_num lost)" = 0
check "a recovered event ran its handler" wait_for /tmp/out/away-sent "KEVENT_CPU=4" 20
check "its handler got KEVENT_RECOVERED=1" grep -qx "KEVENT_RECOVERED=1" /tmp/out/away-sent
check "the atomic one too" wait_for /tmp/out/away-atomic "KEVENT_RECOVERED=1" 20
check "position: $(stat_of seqnum) handled" \
	wait_until 10 grep -q "^$INST $(stat_of seqnum)\$" "$KEVENTD_KERNEL_POS"

# --- a stop drops queued kernel events; the next start runs each once ----
# The first event of .../gate holds its object (once.sh waits for
# /tmp/once-open), so the five after it queue behind it.  SIGTERM drops
# them; the position lists them; the next start runs exactly those, each
# once, recovered, and not the events of another object that ran before.
mkdir -p /tmp/once
once_runs() { [ "$(ls /tmp/once | grep -c '^[0-9]*$')" -ge "$1" ]; }
events_num() { status_json | sed -n "s/.*\"events\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"; }
pending_is() { [ "$(kernel_num pending)" = "$1" ]; }
handled_is() { [ "$(events_num handled)" = "$1" ]; }
pos_is() { [ "$(cat "$KEVENTD_KERNEL_POS")" = "$1" ]; }
# hold_gate N: the gate's next event holds its object (once.sh waits for
# /tmp/once-open) and N more queue behind it, all read by keventd; HELD
# is the first one's number, QUEUED the others', S the last, RUNS how
# many runs there were before.
hold_gate() {
	rm -f /tmp/once-open
	RUNS=$(ls /tmp/once | grep -c '^[0-9]*$')
	emit emit "general /org/kernel/restart/gate held"
	HELD=$(stat_of seqnum)
	check "the gate's event holds its object" wait_until 20 once_runs $((RUNS + 1))
	QUEUED=
	while [ "$(echo $QUEUED | wc -w)" -lt "$1" ]; do
		emit emit "general /org/kernel/restart/gate queued"
		QUEUED="${QUEUED:+$QUEUED }$(stat_of seqnum)"
	done
	S=$(stat_of seqnum)
	check "keventd read them all" caught_up
	check "$1 queued behind the one running" wait_until 10 pending_is $(($1 + 1))
}
# refetch_runs N LOGFILE: keventd started again runs the N events the
# position lists, and nothing else, each recovered, none lost.
refetch_runs() {
	check "keventd started again" start_keventd "$2"
	check "the start says it fetches the $1 again" \
		wait_for "$LOG" "$1 events the last run did not handle are fetched again" 10
	check "the $1 ran" wait_until 30 handled_is "$1"
	check "received $1, no more ($(kernel_num received))" test "$(kernel_num received)" = "$1"
	check "recovered $1 ($(kernel_num recovered))" test "$(kernel_num recovered)" = "$1"
	check "lost 0 ($(kernel_num lost))" test "$(kernel_num lost)" = 0
}
emit emit "general /org/kernel/restart/other first"
emit emit "general /org/kernel/restart/other second"
check "the other object's two events ran" wait_until 20 once_runs 2
hold_gate 5
queued=$QUEUED
kill -TERM "$KPID"
check "the stop dropped the five, to be fetched again" \
	wait_for "$LOG" "dropped: 5 (kernel 5); the next start fetches again: 5 (kernel 5)" 10
check "each one logged as fetched again" test "$(grep -c \
	'not run: kernel seq [0-9]*: general /org/kernel/restart/gate queued (rule kernel-once); the next start fetches it again' \
	"$LOG")" = 5
: >/tmp/once-open
wait_pid "$KPID" 20
check "keventd exited 0 once the held handler was done" test $? -eq 0
check "the position lists the five to redo ($(tail -n 1 "$KEVENTD_KERNEL_POS"))" \
	pos_is "$INST $S
redo $queued"
refetch_runs 5 /tmp/keventd2b.log
ran=$(ls /tmp/once | grep '^[0-9]*$' | sort -n | tr '\n' ' ')
check "exactly the events sent ran ($ran)" test "$ran" = "$((S - 7)) $((S - 6)) $((S - 5)) $queued "
check "none of them twice" sh -c '! ls /tmp/once | grep -q twice'
for n in $queued; do
	check "seq $n: KEVENT_RECOVERED=1" grep -qx KEVENT_RECOVERED=1 "/tmp/once/$n"
done
for n in $((S - 7)) $((S - 6)) $((S - 5)); do
	check "seq $n ran live, before the stop" grep -qx KEVENT_RECOVERED=0 "/tmp/once/$n"
done
check "the position has nothing left to redo" wait_until 10 pos_is "$INST $S"

# --- keventd killed (SIGKILL): what it took and had not handled runs -----
# The gate's event holds its object again and three queue behind it; a
# SIGKILL gives keventd no time to hand anything back, yet the position it
# kept after each read lists the four in flight: the next start runs the
# three queued once each, and the held one again (its run was cut off by
# the kill, as far as keventd can know: keventd(8), FILES).
hold_gate 3
check "the position lists the four in flight ($(tail -n 1 "$KEVENTD_KERNEL_POS"))" \
	pos_is "$INST $S
redo $HELD $QUEUED"
kill -KILL "$KPID"
wait_pid "$KPID" 20
: >/tmp/once-open
refetch_runs 4 /tmp/keventd2k.log
for n in $QUEUED; do
	check "seq $n ran once, recovered" grep -qx KEVENT_RECOVERED=1 "/tmp/once/$n"
	check "seq $n not twice" test ! -e "/tmp/once/twice-$n"
done
check "the held one ran again (cut off by the kill)" test -e "/tmp/once/twice-$HELD"
check "the position has nothing left to redo" wait_until 10 pos_is "$INST $S"

# --- dropped at a stop, then the module loaded again: counted lost --------
# The listed events are gone with the old load: the next start counts
# them lost, exactly, in one line, and runs none of them.
hold_gate 3
kill -TERM "$KPID"
check "the stop listed the three" \
	wait_for "$LOG" "the next start fetches again: 3 (kernel 3)" 10
: >/tmp/once-open
wait_pid "$KPID" 20
check "keventd exited 0" test $? -eq 0
check "rmmod kevent" rmmod kevent
check "insmod kevent.ko again, a 16 MiB ring" insmod /ktest/modules/kevent.ko ring_kb=16384
check "keventd started again" start_keventd /tmp/keventd2c.log
check "the three are counted lost, in one line" wait_for "$LOG" \
	"kernel: 3 events the last run did not handle are lost: kevent.ko was loaded again since" 20
check "lost 3 ($(kernel_num lost))" test "$(kernel_num lost)" = 3
check "the position follows the new instance" \
	wait_until 10 pos_is "$(stat_of instance) 0"
check "none of the three ran" test "$(ls /tmp/once | grep -c '^[0-9]*$')" = $((RUNS + 1))

# --- more than the ring holds, and the module reloaded while keventd was away
check "keventd stopped" stop_keventd
check "rmmod kevent" rmmod kevent
check "insmod kevent.ko ring_kb=64" insmod /ktest/modules/kevent.ko ring_kb=64
emit bench "2000 general"
kept=$(stat_of ring_events)
check "keventd started again" start_keventd /tmp/keventd3.log
check "the ring's events were fetched" wait_for "$LOG" "recovered $kept missed events" 60
check "keventd caught up" caught_up
check "new instance: recovered $kept, all the ring has ($(kernel_num recovered))" \
	test "$(kernel_num recovered)" = "$kept"
check "lost $((2000 - kept)), as the module says ($(kernel_num lost))" \
	test "$(kernel_num lost)" = $((2000 - kept))
check "lost = the module's evicted ($(stat_of ring_evicted))" \
	test "$(kernel_num lost)" = "$(stat_of ring_evicted)"
check "sent = received + lost" test $(($(kernel_num received) + $(kernel_num lost))) = 2000
check "one log line about the loss" \
	test "$(grep -c 'events lost: no longer in kevent.ko' "$LOG")" = 1
check "nothing of the old instance counted lost" \
	grep -q "recovered $kept missed events .*after sequence number 0," "$LOG"

# --- reloaded while keventd runs: the new instance is noticed --------------
lost_before=$(kernel_num lost)
check "rmmod kevent" rmmod kevent
check "insmod kevent.ko, a 64 MiB ring" insmod /ktest/modules/kevent.ko ring_kb=65536
wait_until 10 subscribed_at_least 2
emit emit "power /org/kernel/test/third again Cpu: 6"
check "an event of the new instance ran its handler" wait_for /tmp/out/third-again \
	"KEVENT_CPU=6" 10
check "the reload counted nothing lost" test "$(kernel_num lost)" = "$lost_before"
check "the position follows the new instance" \
	wait_until 10 grep -q "^$(stat_of instance) 1\$" "$KEVENTD_KERNEL_POS"

# --- 200000 events with a small receive buffer: nothing lost ---------------
check "keventd stopped" stop_keventd
check "keventd started, 32 KiB receive buffer" \
	start_keventd /tmp/keventd4.log KEVENTD_GENL_RCVBUF=32768
wait_until 20 subscribed_at_least 1
BURST=${BURST_COUNT:-200000}
emit bench "$BURST general"
k=$(dmesg | grep 'kevent: bench:' | tail -n 1 | sed 's/.*bench: //')
check "burst: keventd caught up" caught_up
received=$(kernel_num received)
echo "KTEST-BENCH: keventd, 32 KiB rcvbuf: $k; received $received," \
	"recovered $(kernel_num recovered), lost $(kernel_num lost), overruns $(kernel_num overruns)"
# Whether this burst overruns the buffer depends on how fast this kernel's
# loop is beside keventd (on 6.12 under TCG keventd may keep up); the stop
# below makes the overrun certain.  Either way nothing may be lost.
check "burst: every one received once ($received of $BURST)" test "$received" = "$BURST"
check "burst: 0 lost" test "$(kernel_num lost)" = 0
check "burst: handled = received" \
	test "$(status_json | sed -n 's/.*"events":{[^}]*"handled":\([0-9]*\).*/\1/p')" = "$BURST"

# --- bench: a kernel loop of send_kevent() through keventd ------------------
before=$(kernel_num received)
lost_before=$(kernel_num lost)
overruns_before=$(kernel_num overruns)
emit bench "$BENCH_COUNT general"
k=$(dmesg | grep 'kevent: bench:' | tail -n 1 | sed 's/.*bench: //')
check "bench: keventd caught up" caught_up
got=$(($(kernel_num received) - before))
overruns=$(($(kernel_num overruns) - overruns_before))
lost=$(($(kernel_num lost) - lost_before))
echo "KTEST-BENCH: keventd: kernel loop of $BENCH_COUNT send_kevent(): $k; keventd received $got, overruns $overruns, lost (seqnum gaps) $lost"
# each event received once or counted lost; what an overrun cost is
# fetched from the ring, so nothing is lost
check "bench: every event received ($got) or counted lost ($lost)" \
	test $((got + lost)) -eq "$BENCH_COUNT"
check "bench: 0 lost" test "$lost" -eq 0
grep -q "receive buffer overrun" "$LOG" && echo "KTEST-BENCH: overruns were logged"

# --- an overrun is counted, logged and recovered, never silent ------------
# keventd stopped (SIGSTOP) while the kernel loop runs: its 32 KiB receive
# buffer must overflow; once it runs again it must say so, and fetch from
# the ring what the buffer could not hold.
before=$(kernel_num overruns)
received_before=$(kernel_num received)
recovered_before=$(kernel_num recovered)
kill -STOP "$KPID"
emit bench "60000 general"
kill -CONT "$KPID"
check "keventd caught up after SIGCONT" caught_up
after=$(kernel_num overruns)
echo "KTEST-BENCH: keventd stopped during 60000 sends: overruns $before -> $after," \
	"recovered $recovered_before -> $(kernel_num recovered), lost $(kernel_num lost)"
check "the overrun was counted" test "$after" -gt "$before"
check "the overrun was logged" grep -q "receive buffer overrun (ENOBUFS)" "$LOG"
check "the overrun: events recovered from the ring" \
	test "$(kernel_num recovered)" -gt "$recovered_before"
check "the overrun: all 60000 received once" \
	test $(($(kernel_num received) - received_before)) = 60000
check "the overrun: 0 lost" test "$(kernel_num lost)" = 0

# --- the trace source: kevent/kevent_send in a burst, lost counted exactly --
# keventd reads only the module's tracepoint (no kernel source), through
# rings of one page per CPU: the kernel drops what keventd has not read
# and says how many, so each of the burst's events is received or counted
# lost, never both, never neither.
check "keventd stopped before the trace source" stop_keventd
cat >/tmp/trace.yaml <<'YAML'
trace:
  - event: kevent/kevent_send
    filter: "seqnum > 0"
  - event: oom/mark_victim
YAML
CT=/tmp/keventd-trace.ctl
LOG=/tmp/keventd-trace.log
KEVENTD_TRACE_RING_PAGES=1 keventd --config /tmp/trace.yaml --rules-dir /ktest/keventd/rules \
	--control "$CT" --sources trace,socket >"$LOG" 2>&1 &
KPID=$!
check "keventd with trace: entries started" wait_for "$LOG" "running:" 20
trace_num() {
	keventctl --control "$CT" status --json |
		sed -n "s/.*\"trace\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"
}
trace_done() { [ $(($(trace_num received) + $(trace_num lost))) -ge "$1" ]; }
TBURST=${BURST_COUNT:-200000}
emit bench "$TBURST general"
k=$(dmesg | grep 'kevent: bench:' | tail -n 1 | sed 's/.*bench: //')
check "trace burst: keventd caught up" wait_until 300 trace_done "$TBURST"
tr=$(trace_num received)
tl=$(trace_num lost)
echo "KTEST-BENCH: trace source, 1-page rings: $k; received $tr, lost $tl"
check "trace burst: received + lost = $TBURST ($tr + $tl)" test $((tr + tl)) -eq "$TBURST"
check "trace burst: the one-page rings dropped some ($tl)" test "$tl" -gt 0

# an OOM kill in a cgroup with a memory limit: oom/mark_victim names the task
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/hog
echo 16M >/sys/fs/cgroup/hog/memory.max
sh -c 'echo $$ >/sys/fs/cgroup/hog/cgroup.procs && exec dd if=/dev/zero of=/dev/null bs=64M count=1' \
	2>/dev/null &
HOG=$!
wait "$HOG"
hog_status=$?
check "the memory hog was killed (status $hog_status)" test "$hog_status" -gt 128
check "oom/mark_victim ran its rule" wait_until 30 test -f /tmp/out/oom-mark_victim
cat /tmp/out/oom-mark_victim
check "mark_victim's pid is the hog's ($HOG)" grep -qx "KEVENT_PID=$HOG" /tmp/out/oom-mark_victim
check "with the task that hit it" grep -q "^KEVENT_TASK_PID=" /tmp/out/oom-mark_victim

kill -TERM "$KPID"
wait_pid "$KPID" 20
check "keventd exited 0 on SIGTERM" test $? -eq 0
grep -v "rule kernel-event\|event kernel seq" "$LOG" | tail -n 20
finish

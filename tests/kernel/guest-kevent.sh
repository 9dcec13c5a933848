#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest script for kernel-qemu-*: kevent.ko end to end, with the
# kevent-listen and kevent-forge test programs (run by run-guest.sh).
# BENCH_COUNT (env) sets the size of the bench run.
. /ktest/lib.sh

D=/sys/kernel/debug/kevent
M=/ktest/modules/kevent.ko
BENCH_COUNT=${BENCH_COUNT:-20000}

# emit FILE LINE: one write of LINE to $D/FILE (busybox echo does not
# interpret backslashes); prints the shell's error message, if any, and
# returns the write's status.
emit() {
	( echo "$2" >"$D/$1" ) 2>&1
}

# einval MESSAGE FILE LINE: the write must fail with EINVAL.
einval() {
	out=$(emit "$2" "$3")
	rc=$?
	case "$rc:$out" in
	[1-9]*"Invalid argument"*) ok "EINVAL: $1" ;;
	*) fail "no EINVAL: $1 (status $rc, got: $out)" ;;
	esac
}

# listen OUT ARGS...: start kevent-listen in the background, its output
# in OUT (a new file: no READY line left from an earlier run), its pid
# in $LPID, and wait (bounded) until it has subscribed.  OUT is removed
# first, so a READY line from an earlier run cannot fool the wait.
listen() {
	out=$1
	shift
	rm -f "$out"
	kevent-listen "$@" >"$out" 2>&1 &
	LPID=$!
	wait_for "$out" '^READY' 15
}

stat_of() {
	sed -n "s/^$1: //p" "$D/stats"
}

check "insmod kevent.ko" insmod "$M"
check "debugfs directory $D" test -d "$D"
for f in emit emit_atomic bench; do
	check "$f is mode 0200" test "$(stat -c %a "$D/$f")" = 200
done
check "stats is mode 0400" test "$(stat -c %a "$D/stats")" = 400

# --- 1. events of all five types, process and atomic context ------------
check "listener 1 subscribed" listen /tmp/l1.out -n 12 -t 40
L1=$LPID

for t in general storage power fs hotplug; do
	out=$(emit emit "$t /org/kernel/test/$t process Context: process\\nType: $t")
	check "emit $t" test -z "$out"
done

# --- 2. a forged multicast from user space, among the real events ---------
kevent-forge general /org/kernel/forged forged >/tmp/forge.out 2>&1
cat /tmp/forge.out
check "forged message sent" grep -q '^FORGED' /tmp/forge.out

for t in 0 1 2 3 4; do
	out=$(emit emit_atomic "$t /org/kernel/test/atomic$t atomic Context: atomic")
	check "emit_atomic type $t" test -z "$out"
done
out=$(emit emit 'power /org/kernel/devices/system/cpu/temperature high Cpu: 0\nTemperature: 95000\nPath: C:\\temp\n')
check "emit multi-line payload" test -z "$out"
out=$(emit emit 'storage /org/kernel/block/sda add')
check "emit empty payload" test -z "$out"

# --- 3. malformed lines: EINVAL, and a warning in dmesg -------------------
long_signal=$(printf '%065d' 0)
long_payload=$(printf '%04001d' 0)
while IFS= read -r line; do
	einval "$(echo "$line" | cut -c1-60)" emit "$line"
done <<LINES
bogus
general /org/kernel/x
nosuchtype /org/kernel/x sig
5 /org/kernel/x sig
-1 /org/kernel/x sig
general org/kernel/noslash sig
general /org/kernel/x bad!signal
general /org/kernel/x $long_signal
general /org/kernel/x sig bad \\t escape
general /org/kernel/x sig trailing \\
general /org/kernel/x sig $long_payload
LINES
einval "emit_atomic, object without /" emit_atomic 'general noslash sig'
einval "bench, no count" bench 'lots'
einval "line over 9 KiB" emit "general /org/kernel/x sig $long_payload$long_payload$long_payload"
check "malformed lines logged" sh -c 'dmesg | grep -q "kevent: emit: "'

wait_pid "$L1" 40
check "listener 1 got 12 events" test $? -eq 0
cat /tmp/l1.out
sed -n 's/ seqnum=[0-9]*//p' /tmp/l1.out | grep '^EVENT' >/tmp/l1.events
cat >/tmp/l1.expected <<'EXPECTED'
EVENT type=general object=/org/kernel/test/general signal=process payload=Context: process\nType: general
EVENT type=storage object=/org/kernel/test/storage signal=process payload=Context: process\nType: storage
EVENT type=power object=/org/kernel/test/power signal=process payload=Context: process\nType: power
EVENT type=fs object=/org/kernel/test/fs signal=process payload=Context: process\nType: fs
EVENT type=hotplug object=/org/kernel/test/hotplug signal=process payload=Context: process\nType: hotplug
EVENT type=general object=/org/kernel/test/atomic0 signal=atomic payload=Context: atomic
EVENT type=storage object=/org/kernel/test/atomic1 signal=atomic payload=Context: atomic
EVENT type=power object=/org/kernel/test/atomic2 signal=atomic payload=Context: atomic
EVENT type=fs object=/org/kernel/test/atomic3 signal=atomic payload=Context: atomic
EVENT type=hotplug object=/org/kernel/test/atomic4 signal=atomic payload=Context: atomic
EVENT type=power object=/org/kernel/devices/system/cpu/temperature signal=high payload=Cpu: 0\nTemperature: 95000\nPath: C:\\temp\n
EVENT type=storage object=/org/kernel/block/sda signal=add payload=
EXPECTED
if cmp -s /tmp/l1.expected /tmp/l1.events; then
	ok "all 12 events intact and in order"
else
	fail "events differ from the expected ones"
	diff /tmp/l1.expected /tmp/l1.events
fi
seqs=$(sed -n 's/.* seqnum=\([0-9]*\) .*/\1/p' /tmp/l1.out | tr '\n' ' ')
check "timestamps are plausible" grep -q '^SUMMARY .* badtime=0 ' /tmp/l1.out
check "seqnums are 1..12 ($seqs)" test "$seqs" = "1 2 3 4 5 6 7 8 9 10 11 12 "
check "forged message rejected (port id != 0)" \
	grep -q '^REJECTED reason=not-kernel' /tmp/l1.out
check "forged message not taken as an event" \
	sh -c '! grep -q "/org/kernel/forged" /tmp/l1.out'
check "stats: sent 12" test "$(stat_of sent)" = 12
check "stats: 5 atomic sends ran in hard irq" test "$(stat_of atomic_in_irq)" = 5
out=$(emit emit 'general /org/kernel/test/nobody none')
check "emit with no listener succeeds" test -z "$out"
check "stats: dropped_no_listener 1" test "$(stat_of dropped_no_listener)" = 1
cat "$D/stats"

# --- 3b. KEVENT_CMD_GET: the ring's events after a number ----------------
INST=$(stat_of instance)
check "instance is a number other than 0 ($INST)" test "${INST:-0}" != 0
check "events carry the instance" grep -q "^SUMMARY .* instance=$INST\$" /tmp/l1.out
# dump AFTER: kevent-listen -g AFTER into /tmp/g$AFTER.out; prints the
# sequence numbers it got into $GOT_SEQS.
dump() {
	kevent-listen -g "$1" -t 30 >"/tmp/g$1.out" 2>&1
	rc=$?
	GOT_SEQS=$(sed -n 's/^EVENT .* seqnum=\([0-9]*\) .*/\1/p' "/tmp/g$1.out" | tr '\n' ' ')
	return $rc
}
check "dump after 5" dump 5
check "dump after 5: events 6..13 ($GOT_SEQS)" test "$GOT_SEQS" = "6 7 8 9 10 11 12 13 "
check "dump after 5: END seqnum=13 lost=0" \
	grep -q "^END seqnum=13 lost=0 instance=$INST\$" /tmp/g5.out
check "dump after 0" dump 0
grep '^EVENT' /tmp/g0.out | sed 's/ seqnum=[0-9]*//' | head -n 12 >/tmp/g0.events
check "dump after 0: the 12 events as they were multicast" cmp -s /tmp/l1.expected /tmp/g0.events
check "dump after 0: and the one nobody heard" \
	grep -q '^EVENT type=general object=/org/kernel/test/nobody signal=none seqnum=13 ' /tmp/g0.out
check "dump after 13 (the current number): a status query" dump 13
check "status query: no events" test -z "$GOT_SEQS"
check "status query: END seqnum=13 lost=0" grep -q "^END seqnum=13 lost=0 instance=$INST\$" /tmp/g13.out
check "dump after 99 (past the current number)" dump 99
check "past the current number: END seqnum=13" grep -q "^END seqnum=13 lost=0 " /tmp/g99.out

# --- 4. unload and load again ---------------------------------------------
check "rmmod kevent" rmmod kevent
check "debugfs dir gone" test ! -e "$D"
kevent-listen -n 1 -t 5 >/tmp/l2.out 2>&1
check "family gone after rmmod" grep -q '^ERROR family kevent not found' /tmp/l2.out
check "insmod kevent.ko again" insmod "$M"
check "listener 3 subscribed" listen /tmp/l3.out -n 2 -t 30
L3=$LPID
emit emit 'hotplug /org/kernel/test/reload add Round: 2' >/dev/null
emit emit_atomic 'power /org/kernel/test/reload change Round: 2' >/dev/null
wait_pid "$L3" 30
check "listener 3 got 2 events after reload" test $? -eq 0
cat /tmp/l3.out
check "events flow after reload" grep -q \
	'^EVENT type=power object=/org/kernel/test/reload signal=change seqnum=2 payload=Round: 2$' \
	/tmp/l3.out

# --- 5. a caller module: send_kevent()'s return values, the limits --------
SELFTEST_EVENTS=7
check "listener 4 subscribed" listen /tmp/l4.out -n $SELFTEST_EVENTS -t 30
L4=$LPID
check "insmod kevent_selftest.ko" insmod /ktest/modules/kevent_selftest.ko
dmesg | grep 'kevent_selftest:'
check "kevent_selftest: all checks pass" \
	sh -c 'dmesg | grep -q "kevent_selftest: PASS" && ! dmesg | grep -q "kevent_selftest: FAIL"'
wait_pid "$L4" 30
check "listener 4 got the selftest's $SELFTEST_EVENTS events" test $? -eq 0
cut -c 1-160 /tmp/l4.out
obj_len=$(sed -n 's/^EVENT type=power object=\(\/a[^ ]*\) signal=objmax .*/\1/p' /tmp/l4.out |
	awk '{ print length($0) }')
check "1024-byte object delivered (length $obj_len)" test "$obj_len" = 1024
sig64=$(printf '%064d' 0 | tr 0 s)
check "64-byte signal delivered" grep -q " signal=$sig64 seqnum=" /tmp/l4.out
check "4000-byte payloads delivered" test "$(grep -c -E 'payload= {3999}7$' /tmp/l4.out)" = 2
check "rmmod kevent_selftest" rmmod kevent_selftest

# --- 5b. atomic sends from hard irq with a netlink tap (nlmon) up ---------
# send_kevent_atomic() leaves the multicast to a worker: netlink's tap
# path must not run with interrupts off.
check "insmod nlmon" insmod /ktest/modules/nlmon.ko
check "ip link add nlmon0 type nlmon" ip link add nlmon0 type nlmon
check "nlmon0 up" ip link set nlmon0 up
BURST=500
dmesg_before=$(dmesg | wc -l)
check "listener 5 subscribed" listen /tmp/l5.out -q -n $BURST -t 60 -b 8388608
L5=$LPID
# a second listener that prints the events, for their order (both with
# a buffer for the whole burst: a slow reader overruns otherwise)
check "listener 6 subscribed" listen /tmp/l6.out -n $BURST -t 60 -b 8388608
L6=$LPID
check "insmod kevent_selftest.ko irq_burst=$BURST" \
	insmod /ktest/modules/kevent_selftest.ko irq_burst=$BURST
check "irq burst: every call returned 0, in hard irq" \
	sh -c "dmesg | grep -q 'kevent_selftest: PASS: irq burst of $BURST'"
wait_pid "$L5" 60
check "listener 5 got the $BURST events" test $? -eq 0
wait_pid "$L6" 60
check "listener 6 got the $BURST events" test $? -eq 0
sed -n 's/^EVENT .*signal=burst seqnum=[0-9]* payload=N: \([0-9]*\)\\n$/\1/p' /tmp/l6.out >/tmp/l6.n
check "irq burst: payloads 0..$((BURST - 1)) in order" \
	test "$(tr '\n' ' ' </tmp/l6.n)" = "$(seq 0 $((BURST - 1)) | tr '\n' ' ')"
first=$(sed -n 's/^EVENT .* seqnum=\([0-9]*\) .*/\1/p' /tmp/l6.out | head -n 1)
check "irq burst: sequence numbers in order, no gap" \
	test "$(sed -n 's/^EVENT .* seqnum=\([0-9]*\) .*/\1/p' /tmp/l6.out | tr '\n' ' ')" = \
	"$(seq "$first" $((first + BURST - 1)) | tr '\n' ' ')"
check "irq burst: the tap saw the multicasts" \
	test "$(cat /sys/class/net/nlmon0/statistics/rx_packets)" -ge $BURST
if dmesg | tail -n +$((dmesg_before + 1)) | grep -E 'BUG:|WARNING:|Call Trace|sleeping function'; then
	fail "irq burst with nlmon up: kernel warnings in dmesg"
else
	ok "irq burst with nlmon up: no kernel warning in dmesg"
fi
check "rmmod kevent_selftest (irq burst)" rmmod kevent_selftest
check "nlmon0 deleted" ip link del nlmon0

# --- 6. bench: a kernel loop of send_kevent(), one listener ----------------
bench() {	# bench NAME LISTENER-OPTIONS...
	name=$1
	shift
	before=$(stat_of dropped_overrun)
	listen "/tmp/bench-$name.out" -q -i 3 -t 120 "$@" ||
		fail "bench listener subscribed"
	emit bench "$BENCH_COUNT general" >/dev/null
	wait_pid "$LPID" 130
	cp "/tmp/bench-$name.out" /tmp/b.out
	cat /tmp/b.out
	k=$(dmesg | grep 'kevent: bench:' | tail -n 1 | sed 's/.*bench: //')
	s=$(grep '^SUMMARY' /tmp/b.out | sed 's/^SUMMARY //')
	got=$(echo "$s" | sed -n 's/^events=\([0-9]*\).*/\1/p')
	missing=$((BENCH_COUNT - ${got:-0}))
	dropped=$(($(stat_of dropped_overrun) - before))
	echo "KTEST-BENCH $KTEST_KVER $name: kernel: $k; listener: $s;" \
		"missing=$missing; kernel dropped_overrun: $dropped"
	# the one listener got each event the kernel did not count dropped
	grep -q "^SUMMARY events=[1-9]" /tmp/b.out && test "$missing" -eq "$dropped"
}
check "bench, default receive buffer" bench rcvbuf-default
check "bench, 8 MiB receive buffer" bench rcvbuf-8M -b 8388608
emit bench "$BENCH_COUNT general" >/dev/null
echo "KTEST-BENCH $KTEST_KVER no-listener: kernel:" \
	"$(dmesg | grep 'kevent: bench:' | tail -n 1 | sed 's/.*bench: //')"

check "rmmod kevent after the bench" rmmod kevent

# --- 7. a small ring: evicted events are counted lost, exactly -------------
check "insmod kevent.ko ring_kb=4" insmod "$M" ring_kb=4
check "ring_limit 4096" test "$(stat_of ring_limit)" = 4096
emit bench "1000 general" >/dev/null
check "dump after 0 with 1000 events sent" dump 0
n=$(grep -c '^EVENT' /tmp/g0.out)
lost=$(sed -n 's/^END seqnum=1000 lost=\([0-9]*\) .*/\1/p' /tmp/g0.out)
echo "ring_kb=4: $n events in the ring, lost=$lost, $(stat_of ring_events) by stats"
check "some events kept ($n), some lost ($lost)" test "$n" -gt 0 -a "${lost:-0}" -gt 0
check "kept + lost = 1000" test $((n + ${lost:-0})) = 1000
check "lost = evicted ($(stat_of ring_evicted))" test "$lost" = "$(stat_of ring_evicted)"
check "kept = the newest: $((lost + 1))..1000" \
	test "$GOT_SEQS" = "$(seq $((lost + 1)) 1000 | tr '\n' ' ')"
check "dump after 990: 991..1000, lost 0" dump 990
check "dump after 990: END lost=0" grep -q '^END seqnum=1000 lost=0 ' /tmp/g990.out
check "dump after 990: ten events" test "$GOT_SEQS" = "$(seq 991 1000 | tr '\n' ' ')"
check "rmmod kevent (small ring)" rmmod kevent

# --- 8. no ring: numbered, not kept ----------------------------------------
check "insmod kevent.ko ring_kb=0" insmod "$M" ring_kb=0
emit bench "100 general" >/dev/null
check "dump after 0, no ring" dump 0
check "no ring: no events, END seqnum=100 lost=100" \
	sh -c "test -z '$GOT_SEQS' && grep -q '^END seqnum=100 lost=100 ' /tmp/g0.out"
check "listener 7 subscribed (no ring)" listen /tmp/l7.out -n 2 -t 30
L7=$LPID
emit emit 'general /org/kernel/test/noring add' >/dev/null
emit emit_atomic 'general /org/kernel/test/noring change' >/dev/null
wait_pid "$L7" 30
check "no ring: events still multicast, 101 and 102" \
	test "$(sed -n 's/^EVENT .* seqnum=\([0-9]*\) .*/\1/p' /tmp/l7.out | tr '\n' ' ')" = "101 102 "

# --- 9. the tracepoint kevent/kevent_send ---------------------------------
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T"
F=$T/events/kevent/kevent_send
check "tracepoint kevent/kevent_send" test -f "$F/format"
for field in 'u32 type;' '__data_loc char[] object;' '__data_loc char[] signal;' \
	'u64 seqnum;'; do
	check "kevent_send has the field $field" grep -qF "field:$field" "$F/format"
done
echo 1 >"$F/enable"
emit emit 'power /org/kernel/test/traced hit' >/dev/null
echo 0 >"$F/enable"
check "the send traced with its number, 103" \
	grep -q 'kevent_send: type=2 object=/org/kernel/test/traced signal=hit seqnum=103$' "$T/trace"

check "rmmod kevent at the end" rmmod kevent
if dmesg | grep -E 'BUG:|WARNING:|Call Trace|sleeping function'; then
	fail "kernel warnings in dmesg"
else
	ok "no kernel warnings in dmesg"
fi
finish

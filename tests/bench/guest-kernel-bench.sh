#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest script of run-kernel-bench.sh (prints figures, asserts nothing but
# that each step ran): kevent.ko's sender rate with the ring off and on,
# keventd's live / recovered / lost counts after a burst, and the latency
# from send_kevent() to a handler's first instruction beside a raw spawn
# of the same handler.  BENCH_COUNT (env) sets the burst, LAT_COUNT the
# latency samples, RATE_COUNT and RING_ROUNDS the no-listener loops.
. /ktest/lib.sh

D=/sys/kernel/debug/kevent
M=/ktest/modules/kevent.ko
N=${BENCH_COUNT:-200000}
L=${LAT_COUNT:-200}
C=/tmp/keventd.ctl
export KEVENTD_KERNEL_POS=/tmp/kernel.pos

rate() { dmesg | grep 'kevent: bench:' | tail -n 1 | sed 's/.*(\([0-9]*\) events\/s).*/\1/'; }
kernel_num() {
	keventctl --control "$C" status --json |
		sed -n "s/.*\"kernel\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"
}
# pct FILE P: the P-th percentile of the numbers in FILE, in microseconds
pct() {
	sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END {
		i = int((NR * p + 99) / 100); if (i < 1) i = 1; printf "%d", v[i] / 1000 }'
}

# median FILE: the median of the numbers in FILE
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%d", v[int((NR + 1) / 2)] }'
}

# --- the sender's rate with no listener, ring off and on in turn ----------
# A loop of RATE_COUNT events takes a few seconds here, and TCG's speed
# moves from one second to the next: RING_ROUNDS rounds each load the
# module with the ring off, 16 KiB (a ring that stays in the caches) and
# the default 1 MiB, in alternating order, and the figures are medians, of
# the rates and of each round's ratio to the ring off.
R=${RING_ROUNDS:-7}
RN=${RATE_COUNT:-1000000}
SIZES="0 16 1024"
rm -f /tmp/rate-* /tmp/ratio-*
i=0
while [ "$i" -lt "$R" ]; do
	order=$SIZES
	[ $((i % 2)) = 1 ] && order=$(echo "$SIZES" | tr ' ' '\n' | sort -rn | tr '\n' ' ')
	for ring in $order; do
		check "insmod ring_kb=$ring (round $i)" insmod "$M" ring_kb=$ring
		echo "$RN general" >"$D/bench"
		rate >>/tmp/rate-$ring
		check "rmmod (ring_kb=$ring, round $i)" rmmod kevent
	done
	off=$(tail -n 1 /tmp/rate-0)
	for ring in $SIZES; do
		[ "$ring" = 0 ] && continue
		echo $(($(tail -n 1 /tmp/rate-$ring) * 1000 / off)) >>/tmp/ratio-$ring
	done
	i=$((i + 1))
done
line="KBENCH $KTEST_KVER no listener, $RN events, $R rounds, medians: ring off $(median /tmp/rate-0) ev/s"
for ring in $SIZES; do
	[ "$ring" = 0 ] && continue
	line="$line; ring_kb=$ring $(median /tmp/rate-$ring) ev/s, on/off $(median /tmp/ratio-$ring)/1000"
	line="$line (rounds: $(tr '\n' ' ' </tmp/ratio-$ring | sed 's/ $//'))"
done
echo "$line"

# --- the sender's rate with one listener, ring off and on ------------------
for ring in 0 1024; do
	check "insmod ring_kb=$ring" insmod "$M" ring_kb=$ring
	rm -f /tmp/l.out
	kevent-listen -q -b 67108864 -i 3 -t 300 >/tmp/l.out 2>&1 &
	lp=$!
	wait_for /tmp/l.out '^READY' 15
	echo "$N general" >"$D/bench"
	one=$(rate)
	wait_pid "$lp" 310
	got=$(sed -n 's/^SUMMARY events=\([0-9]*\).*/\1/p' /tmp/l.out)
	echo "KBENCH $KTEST_KVER ring_kb=$ring: one listener $one ev/s (it got $got of $N)"
	check "rmmod (ring_kb=$ring)" rmmod kevent
done

# --- keventd after a burst: live, recovered, lost ---------------------------
check "insmod (default ring)" insmod "$M"
mkdir -p /tmp/rules
cat >/tmp/rules/10-bench.yaml <<'RULES'
rules:
  - name: bench
    match:
      source: kernel
      signal: bench
  - name: stamp
    match:
      source: kernel
      signal: stamp
    run: [/bin/bench-stamp, /tmp/lat, "${KEVENT_T}"]
RULES
keventd --rules-dir /tmp/rules --control "$C" --sources kernel >/tmp/keventd.log 2>&1 &
KPID=$!
check "keventd runs" wait_for /tmp/keventd.log "running:" 20
wait_for /tmp/keventd.log "subscribed to the kevent family" 10
echo "$N general" >"$D/bench"
k=$(rate)
wait_until 120 kernel_caught_up "$KEVENTD_KERNEL_POS"
received=$(kernel_num received)
recovered=$(kernel_num recovered)
echo "KBENCH $KTEST_KVER keventd: sender $k ev/s; received $received of $N:" \
	"live $((received - recovered)), recovered $recovered, lost $(kernel_num lost)," \
	"overruns $(kernel_num overruns)"

# --- latency: send_kevent() -> the handler's first instruction ------------
rm -f /tmp/lat
echo "$L general stamp" >"$D/bench"
wait_until 60 sh -c "[ \$(wc -l </tmp/lat) -ge $L ]"
echo "KBENCH $KTEST_KVER latency send_kevent()->handler: p50 $(pct /tmp/lat 50) us," \
	"p99 $(pct /tmp/lat 99) us ($(wc -l </tmp/lat) samples)"
kill -TERM "$KPID"
wait_pid "$KPID" 20
# the floor: the same handler spawned at the same pace (50/s), no keventd
rm -f /tmp/raw
lat=$(bench-latency --raw /bin/bench-stamp 50 "$L" /tmp/raw)
echo "KBENCH $KTEST_KVER latency raw spawn: p50 ${lat% *} us, p99 ${lat#* } us"
check "rmmod at the end" rmmod kevent
finish

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The window libmosquitto leaves on the way in, by hand (never under
# ctest; root, for bpftrace).  libmosquitto 2.0 sends a QoS 1 message's
# PUBACK before keventd's callback sees the message, and keventd writes the
# message to its journal at the end of that round of its loop (or before
# the round's first handler starts): a keventd killed in between loses a
# message the broker will not send again.  bpftrace stamps, in keventd,
# each PUBACK handed to the kernel (a 4-byte send whose first byte is 0x40)
# and the end of each journal write (a pwrite of more than 8 bytes; the
# 1- and 4-byte ones mark records done); each PUBACK's window is the time
# to the end of the first journal write after it.  p50, p99 and the
# largest, in two loads:
#
#   one at a time: N1 messages, a mosquitto_pub each (a round a message);
#   a burst: N messages from one mosquitto_pub -l (QoS 1, 20 in flight),
#     the rounds reading up to 256 each;
#
# each with no rule and with a rule that runs /bin/true for every message.
#
# Usage: tests/bench/mqtt-puback-bench.sh [N [N1]]   (default 20000 and 300)
set -eu
n=${1:-20000}
n1=${2:-300}
bench=mqtt-puback-bench
tools="mosquitto_sub mosquitto_pub python3 bpftrace"
conf_extra="max_queued_messages 0"
tries=30000
. "$(dirname "$0")/mqtt-lib.sh"
start_broker

# the messages: one event each, numbered (none is a duplicate)
python3 - "$n" >"$work/msgs" <<'EOF2'
import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"seqnum": i + 1, "source": "socket", "type": "general",
                      "object": "/bench/e", "signal": "n%d" % i, "host": "h1",
                      "instance": "00000000000000b1"}))
EOF2

# run NAME RULE COUNT HOW: a keventd subscribed to bench/# (the host: its
# second level, h1), COUNT messages
# sent HOW (burst or single), the windows of its PUBACKs
run() {
	name=$1 rule=$2 count=$3 how=$4
	rm -rf "$work/state" "$work/rules" "$work/ctl" "$work/spool"
	mkdir -p "$work/rules"
	if [ "$rule" = yes ]; then
		printf 'rules:\n  - name: fleet\n    match: {source: mqtt}\n    run: [/bin/true]\n' \
			>"$work/rules/50-fleet.yaml"
	fi
	printf 'mqtt:\n  url: mqtt://127.0.0.1:%s\n  client_id: bench-%s\n  publish: none\n  subscribe: [{filter: "bench/#", host_level: 2}]\n  spool: {dir: %s/spool}\n' \
		"$port" "$name" "$work" >"$work/k.yaml"
	"$kd" --config "$work/k.yaml" --rules-dir "$work/rules" --control "$work/ctl" \
		--state-dir "$work/state" --sources socket,mqtt --history 0 --log-level warning \
		>>"$work/keventd.log" 2>&1 &
	keventd=$!
	pids="$pids $keventd"
	i=0
	until [ -S "$work/ctl" ] && status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 500 ] || { echo "mqtt-puback-bench: keventd did not start" >&2; exit 1; }
		sleep 0.01
	done
	wait_status "st['mqtt']['connected']"
	sleep 0.3 # the SUBSCRIBE: a benchmark, not a test
	ulimit -l unlimited 2>/dev/null || :
	bpftrace -q -e "
BEGIN { printf(\"READY\n\"); }
tracepoint:syscalls:sys_enter_sendto /pid == $keventd && args->len == 4/ {
	if (*(uint8 *)uptr(args->buff) == 0x40) { printf(\"A %llu\n\", nsecs); }
}
tracepoint:syscalls:sys_enter_write /pid == $keventd && args->count == 4/ {
	if (*(uint8 *)uptr(args->buf) == 0x40) { printf(\"A %llu\n\", nsecs); }
}
tracepoint:syscalls:sys_enter_pwrite64 /pid == $keventd && args->count > 8/ { @w[tid] = 1; }
tracepoint:syscalls:sys_exit_pwrite64 /@w[tid]/ { printf(\"J %llu\n\", nsecs); delete(@w[tid]); }
" >"$work/trace-$name" 2>"$work/bpftrace.err" &
	bt=$!
	pids="$pids $bt"
	# BEGIN runs once every probe is attached
	i=0
	until grep -q READY "$work/trace-$name"; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "mqtt-puback-bench: bpftrace did not start" >&2; cat "$work/bpftrace.err" >&2; exit 1; }
		sleep 0.05
	done
	head -n "$count" "$work/msgs" >"$work/these"
	if [ "$how" = burst ]; then
		mosquitto_pub -h 127.0.0.1 -p "$port" -q 1 -t bench/h1/general -l <"$work/these"
	else
		while IFS= read -r m; do
			mosquitto_pub -h 127.0.0.1 -p "$port" -q 1 -t bench/h1/general -m "$m"
		done <"$work/these"
	fi
	wait_status "st['mqtt']['received'] == $count and st['events']['pending'] == 0"
	kill -INT "$bt"
	wait "$bt" 2>/dev/null || :
	kill "$keventd"
	wait "$keventd" 2>/dev/null || :
	python3 - "$work/trace-$name" "$name" "$count" <<'EOF2'
import bisect, sys
acks, writes = [], []
for line in open(sys.argv[1]):
    kind, _, t = line.partition(" ")
    if kind in ("A", "J") and t.strip().isdigit():
        (acks if kind == "A" else writes).append(int(t))
writes.sort()
win = []
for a in acks:
    i = bisect.bisect_left(writes, a)
    if i < len(writes):
        win.append(writes[i] - a)
win.sort()
def pct(p):
    return win[min(len(win) - 1, int(p * len(win)))] / 1000.0
if not win:
    print("%s: no window measured (%d PUBACKs, %d journal writes)" % (sys.argv[2], len(acks), len(writes)))
else:
    print("%-22s %6d PUBACKs of %s, %5d journal writes: window p50 %7.1f us, p99 %7.1f us, max %7.1f us"
          % (sys.argv[2], len(win), sys.argv[3], len(writes), pct(0.5), pct(0.99), win[-1] / 1000.0))
EOF2
}

echo "mqtt-puback-bench: libmosquitto $(dpkg-query -W -f '${Version}' libmosquitto1 2>/dev/null || echo '?'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
run single-no-rule no "$n1" single
run single-rule yes "$n1" single
run burst-no-rule no "$n" burst
run burst-rule yes "$n" burst

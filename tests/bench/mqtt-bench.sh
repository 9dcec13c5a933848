#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# MQTT publishing, by hand (never under ctest): keventd against a mosquitto
# of its own on 127.0.0.1, and mosquitto_pub fed the same messages in the
# same run, which is what the broker and its client can do at best.
#
#   publish, QoS 0 and 1: N events sent to keventd (keventctl send --batch)
#     until a mosquitto_sub has N messages, against mosquitto_pub -l with
#     the N messages keventd publishes, until the same subscriber has N;
#   the spool's cost per event: N events into a keventd whose broker is
#     away (every one appended to the spool) against N into one that
#     publishes nothing, the difference divided by N;
#   the fleet: 50 keventds send a burst of 200 events each through the
#     broker to a central keventd, whose rule's handler writes when it
#     started: from each event's time stamp on its host to its handler on
#     the central machine, p50 and p99.
#
# Usage: tests/bench/mqtt-bench.sh [N]   (default 20000; from the source
# tree, with ./build built; needs mosquitto, mosquitto-clients, python3)
set -eu
n=${1:-20000}
bench=mqtt-bench
tools="mosquitto_sub mosquitto_pub python3"
conf_extra="max_queued_messages 0
max_inflight_messages 0"
tries=6000
. "$(dirname "$0")/mqtt-lib.sh"
now() { date +%s%N; }
# starts keventd with the mqtt keys $1 (printf %b: "\n" ends a line),
# spooling in spool-$2
start_keventd() {
	printf 'mqtt:\n  url: mqtt://127.0.0.1:%s\n  topic_prefix: bench/h\n  spool: {dir: %s/spool-%s, max_mb: 256}\n%b' \
		"$port" "$work" "$2" "$1" >"$work/k.yaml"
	mkdir -p "$work/rules"
	rm -f "$work/ctl"
	"$kd" --config "$work/k.yaml" --rules-dir "$work/rules" --control "$work/ctl" \
		--sources socket --history 0 --log-level warning >>"$work/keventd.log" 2>&1 &
	keventd=$!
	pids="$pids $keventd"
	i=0
	until [ -S "$work/ctl" ] && status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 500 ] || { echo "mqtt-bench: keventd did not start" >&2; cat "$work/keventd.log" >&2; exit 1; }
		sleep 0.01
	done
}
stop_keventd() {
	kill "$keventd"
	wait "$keventd" 2>/dev/null || :
}
rate() { python3 -c "print('%.0f' % ($n / (($2 - $1) / 1e9)))"; }

python3 - "$n" >"$work/batch" <<'EOF'
import sys
for i in range(int(sys.argv[1])):
    print("general\t/bench/e\tn%d\tSeq: %d" % (i, i))
EOF

start_broker
echo "mqtt-bench: $n events, mosquitto $("$mosq" -h 2>/dev/null | head -1 | awk '{print $3}') on 127.0.0.1:$port, $(nproc) CPUs"

for qos in 0 1; do
	# keventd
	start_keventd "  qos: $qos\n" "q$qos"
	wait_status "st['mqtt']['connected']"
	mosquitto_sub -h 127.0.0.1 -p "$port" -q "$qos" -t 'bench/h/general/#' -C "$n" -W 300 \
		>"$work/got-kd-$qos" &
	sub=$!
	sleep 0.5 # the subscriber's SUBSCRIBE: a benchmark, not a test
	t0=$(now)
	"$ctl" --control "$work/ctl" send --batch "$work/batch"
	wait "$sub"
	t1=$(now)
	stop_keventd
	kd_rate=$(rate "$t0" "$t1")
	# mosquitto_pub fed the same messages, one a line
	mosquitto_sub -h 127.0.0.1 -p "$port" -q "$qos" -t 'bench/pub' -C "$n" -W 300 >/dev/null &
	sub=$!
	sleep 0.5
	t0=$(now)
	mosquitto_pub -h 127.0.0.1 -p "$port" -q "$qos" -t bench/pub -l <"$work/got-kd-$qos"
	wait "$sub"
	t1=$(now)
	pub_rate=$(rate "$t0" "$t1")
	echo "publish QoS $qos: keventd $kd_rate events/s, mosquitto_pub -l $pub_rate messages/s"
done

# the fleet: 50 hosts, 200 events each, one central rule whose handler
# writes the event's time stamp and its own start
hosts=50 per_host=200
mkdir -p "$work/central-rules"
cat >"$work/central-rules/50-fleet.yaml" <<EOF
rules:
  - name: any-host
    match: {source: mqtt, type: general}
    run: [/bin/sh, -c, 'echo "\$KEVENT_TIMESTAMP \$(date +%s%N)" >> $work/latency']
EOF
# all 50 on this machine: its host name under fleet/ (the central keventd
# takes the host from that level), each its own prefix under it
printf 'mqtt:\n  url: mqtt://127.0.0.1:%s\n  topic_prefix: fleet/central\n  client_id: central\n  publish: none\n  subscribe: ["fleet/+/+/general/#"]\n  spool: {dir: %s/spool-central}\n' \
	"$port" "$work" >"$work/central.yaml"
"$kd" --config "$work/central.yaml" --rules-dir "$work/central-rules" \
	--control "$work/ctl-central" --sources socket,mqtt --history 0 --log-level warning \
	>>"$work/keventd.log" 2>&1 &
pids="$pids $!"
python3 - "$per_host" >"$work/fleet-batch" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    print("general\t/fleet/e\tn%d" % i)
PY
h=0
while [ $h -lt $hosts ]; do
	printf 'mqtt:\n  url: mqtt://127.0.0.1:%s\n  topic_prefix: fleet/%s/h%s\n  client_id: h%s\n  spool: {dir: %s/spool-h%s}\n' \
		"$port" "$(hostname)" "$h" "$h" "$work" "$h" >"$work/h$h.yaml"
	"$kd" --config "$work/h$h.yaml" --rules-dir "$work/rules" --control "$work/ctl-h$h" \
		--sources socket --history 0 --max-children 1 --queue-size 256 \
		--log-level warning >>"$work/keventd.log" 2>&1 &
	pids="$pids $!"
	h=$((h + 1))
done
h=0
while [ $h -lt $hosts ]; do
	i=0
	until "$ctl" --control "$work/ctl-h$h" status --json 2>/dev/null |
		grep -q '"mqtt":{"enabled":true,"connected":true'; do
		i=$((i + 1))
		[ $i -lt 2000 ] || { echo "mqtt-bench: host $h never connected" >&2; exit 1; }
		sleep 0.01
	done
	h=$((h + 1))
done
sleep 0.5 # the central keventd's SUBSCRIBE: a benchmark, not a test
h=0 senders=""
while [ $h -lt $hosts ]; do
	"$ctl" --control "$work/ctl-h$h" send --batch "$work/fleet-batch" &
	senders="$senders $!"
	h=$((h + 1))
done
for p in $senders; do wait "$p"; done
i=0
until [ -f "$work/latency" ] && [ "$(wc -l <"$work/latency")" -ge $((hosts * per_host)) ]; do
	i=$((i + 1))
	[ $i -lt 30000 ] || { echo "mqtt-bench: the central rule did not run for every event" >&2; exit 1; }
	sleep 0.01
done
python3 - "$work/latency" <<'PY'
import sys
lat = sorted((int(b) - int(a)) / 1e6 for a, b in (l.split() for l in open(sys.argv[1])))
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print("fleet: 50 hosts x 200 events, host event to central handler: p50 %.1f ms, "
      "p99 %.1f ms, max %.1f ms (%d runs)" % (q(0.5), q(0.99), lat[-1], len(lat)))
PY
# and one event at a time, from host after host: the latency unloaded
mv "$work/latency" "$work/latency-burst"
r=0 rounds=100
while [ $r -lt $rounds ]; do
	"$ctl" --control "$work/ctl-h$((r % hosts))" send general /fleet/one "r$r"
	r=$((r + 1))
	i=0
	until [ -f "$work/latency" ] && [ "$(wc -l <"$work/latency")" -ge $r ]; do
		i=$((i + 1))
		[ $i -lt 3000 ] || { echo "mqtt-bench: event $r never ran" >&2; exit 1; }
		sleep 0.001
	done
done
python3 - "$work/latency" <<'PY'
import sys
lat = sorted((int(b) - int(a)) / 1e6 for a, b in (l.split() for l in open(sys.argv[1])))
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print("fleet: one event at a time, host event to central handler: p50 %.1f ms, "
      "p99 %.1f ms (%d events)" % (q(0.5), q(0.99), len(lat)))
PY

# the spool: the broker away, every event appended; against publish: none
kill "$broker"
wait "$broker" 2>/dev/null || :
start_keventd "  publish: none\n" none
t0=$(now)
"$ctl" --control "$work/ctl" send --batch "$work/batch"
wait_status "st['events']['handled'] == $n"
t1=$(now)
stop_keventd
start_keventd "  qos: 1\n" spool
t2=$(now)
"$ctl" --control "$work/ctl" send --batch "$work/batch"
wait_status "st['mqtt']['spooled'] == $n"
t3=$(now)
bytes=$(du -sb "$work/spool-spool" | cut -f1)
stop_keventd
python3 -c "
base, spool = ($t1 - $t0) / $n, ($t3 - $t2) / $n
print('spool: %.1f us an event with the spool, %.1f without: %.1f us an event, %d bytes on disk each'
      % (spool / 1e3, base / 1e3, (spool - base) / 1e3, $bytes // $n))"

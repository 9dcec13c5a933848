# SPDX-License-Identifier: GPL-2.0-or-later
# What the MQTT benchmarks share (sourced, not run): a mosquitto of their
# own on 127.0.0.1, a work directory removed at the end, keventd's status.
#
# Before sourcing, set: bench (the name errors begin with), tools (the
# programs it needs besides mosquitto), conf_extra (mosquitto.conf lines
# beyond the listener's), tries (status polls of 10 ms before giving up).
here=$(cd "$(dirname "$0")/../.." && pwd)
kd=$here/build/keventd/keventd
ctl=$here/build/keventd/keventctl
for p in mosquitto $tools; do
	command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || {
		echo "$bench: $p is missing (scripts/deps.sh test)" >&2
		exit 1
	}
done
mosq=$(command -v mosquitto || echo /usr/sbin/mosquitto)
work=$(mktemp -d "${TMPDIR:-/tmp}/kevent-$bench.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n%s\nlog_dest none\nuser %s\n' \
	"$port" "$conf_extra" "$(id -un)" >"$work/mosquitto.conf"

# starts the broker ($broker) and waits until it takes a message
start_broker() {
	"$mosq" -c "$work/mosquitto.conf" >/dev/null 2>&1 &
	broker=$!
	pids="$pids $broker"
	i=0
	until mosquitto_pub -h 127.0.0.1 -p "$port" -t bench/ping -m x 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "$bench: mosquitto did not start" >&2; exit 1; }
		sleep 0.05
	done
}
status() { "$ctl" --control "$work/ctl" status --json; }
# waits until the python expression on the status JSON st is true
wait_status() {
	i=0
	until status | python3 -c "import json,sys; st=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"; do
		i=$((i + 1))
		[ $i -lt "$tries" ] || { echo "$bench: never: $1" >&2; exit 1; }
		sleep 0.01
	done
}

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The journal of accepted events, the figures beside intake (run by hand;
# prints figures, asserts nothing; run-journal-bench.sh has intake):
#   rss    keventd's VmRSS, RssAnon, RssFile and RssShmem with 10,000 rules
#          right after start-up and after a storm of N posts, the journal
#          off and on, and the bytes of the journal's segments then
#   burst  the journal's bytes (the sum of its segments, sampled every 2 ms)
#          at most during a burst of N posts, with no handler (10 rules
#          that run nothing) and with handlers (each event runs /bin/true,
#          64 objects, --max-children 8), and how often intake paused:
#          status's journal "full" count and the queue's pauses
#   runs   handler runs per second (loadgen, each event runs /bin/true, 3,000
#          events on 64 objects and 1,500 on one), the journal off and on
# The journal off: KEVENTD_JOURNAL=off (keventd(8)).  On: a state
# directory of its own on /run (tmpfs).  For
# ROUNDS rounds, off and on in turn, the first changing each round.
# Usage: tests/bench/run-journal-figures.sh [BUILD_DIR] [N] [ROUNDS]
set -eu
build=${1:-build}
n=${2:-200000}
rounds=${3:-3}
keventd=$build/keventd/keventd
keventctl=$build/keventd/keventctl
loadgen=$build/tests/bench/loadgen
stamp=$build/tests/bench/bench-stamp
for f in "$keventd" "$keventctl" "$loadgen" "$stamp"; do
	[ -x "$f" ] || { echo "build first: $f" >&2; exit 1; }
done
stamp=$(cd "$(dirname "$stamp")" && pwd)/$(basename "$stamp")
tmp=$(mktemp -d)
run=$(mktemp -d /run/kevent-journal-figures.XXXXXX)
pid= sampler=
cleanup() {
	for p in $pid $sampler; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp" "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run-bench.sh's rule sets: rule k matches (power, signal s<k>, object
# /org/kernel/bench/*); "f" sets run nothing, "t" sets run /bin/true for
# the last rule (the one the events match) too; loadgen's sentinel rule
. "$(dirname "$0")/bench-rules.sh"
gen() { # dir rules last-runs
	bench_rules "$1" "$2" "$3" "[$stamp, $tmp/done, \"0\"]"
}
gen "$tmp/f10" 10 0
gen "$tmp/f10000" 10000 0
gen "$tmp/t10" 10 1
gen "$tmp/t10000" 10000 1

kstart() { # mode rules-dir
	state=$run/$1
	rm -rf "$state"
	rm -f "$tmp/ctl"
	journal=on
	[ "$1" = off ] && journal=off
	KEVENTD_JOURNAL=$journal "$keventd" --rules-dir "$2" --control "$tmp/ctl" --sources socket --state-dir "$state" \
		--log-level err 2>>"$tmp/log" &
	pid=$!
	i=0
	while [ ! -S "$tmp/ctl" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
}
kstop() {
	kill -TERM "$pid"
	wait "$pid" || true
	pid=
}
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
rss() { echo "$(kib "$1" VmRSS) $(kib "$1" RssAnon) $(kib "$1" RssFile) $(kib "$1" RssShmem)"; }
jbytes() { # the journal's segments, bytes
	find "$1" -maxdepth 1 -name 'journal-*' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
status() { "$keventctl" --control "$tmp/ctl" status --json; }
# "full_times paused_times" of status
pauses() {
	status | python3 -c 'import json, sys
st = json.load(sys.stdin)
print(st.get("journal", {}).get("full_times", 0), st["queue"].get("paused_times", 0))'
}
# samples the journal's bytes every 2 ms until killed, then prints the most
start_sampler() {
	python3 -c 'import os, signal, sys, time
d, top = sys.argv[1], 0
def stop(*_):
    print(top)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
while True:
    try:
        s = sum(e.stat().st_size for e in os.scandir(d) if e.name.startswith("journal-"))
    except OSError:
        s = 0
    top = max(top, s)
    time.sleep(0.002)' "$1" >"$tmp/sampled" &
	sampler=$!
}
stop_sampler() {
	kill -TERM "$sampler"
	wait "$sampler" || true
	sampler=
	cat "$tmp/sampled"
}
handled() { sed -n 's/.*handled in [^(]*(\([0-9]*\)\/s).*/\1/p'; }

echo "journal figures, $(nproc) CPUs, $(date -u +%F), $n events a burst, $rounds rounds," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	order="off on"
	[ $((r % 2)) = 0 ] && order="on off"
	for m in $order; do
		# rss: 10,000 rules, at start and after a storm
		kstart "$m" "$tmp/f10000"
		echo "round $r $m rss-start $(rss "$pid") journal $(jbytes "$run/$m")" | tee -a "$tmp/all"
		"$loadgen" --post "$tmp/ctl" "$n" 64 64 s9999 >/dev/null
		echo "round $r $m rss-storm $(rss "$pid") journal $(jbytes "$run/$m")" | tee -a "$tmp/all"
		kstop
		# burst, no handler: 10 rules that run nothing
		kstart "$m" "$tmp/f10"
		start_sampler "$run/$m"
		"$loadgen" --post "$tmp/ctl" "$n" 64 64 s9 >/dev/null
		top=$(stop_sampler)
		echo "round $r $m burst-nohandler max $top pauses $(pauses)" | tee -a "$tmp/all"
		kstop
		# handler runs per second
		kstart "$m" "$tmp/t10"
		run8=$("$loadgen" "$tmp/ctl" 3000 64 64 s9 "$tmp/done" | handled)
		run1=$("$loadgen" "$tmp/ctl" 1500 1 64 s9 "$tmp/done" | handled)
		kstop
		kstart "$m" "$tmp/t10000"
		run8k=$("$loadgen" "$tmp/ctl" 3000 64 64 s9999 "$tmp/done" | handled)
		kstop
		echo "round $r $m runs 10-rules-64-objects $run8 10-rules-1-object $run1 10000-rules-64-objects $run8k" |
			tee -a "$tmp/all"
	done
done
# burst with handlers: once per mode (each event runs /bin/true: minutes)
for m in off on; do
	kstart "$m" "$tmp/t10"
	start_sampler "$run/$m"
	t0=$(date +%s%N)
	"$loadgen" --post "$tmp/ctl" "$n" 64 64 s9 "$tmp/done" >"$tmp/lg"
	t1=$(date +%s%N)
	top=$(stop_sampler)
	echo "$m burst-handlers max $top pauses $(pauses) seconds $(((t1 - t0) / 1000000000)) $(cat "$tmp/lg")" |
		tee -a "$tmp/all"
	kstop
done
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { awk -v w="$1" -v m="$2" -v f="$3" '$3 == m && $4 == w { print $f }' "$tmp/all"; }
for m in off on; do
	echo "$m: rss at start VmRSS $(col rss-start $m 5 | median) RssAnon $(col rss-start $m 6 | median)" \
		"RssFile $(col rss-start $m 7 | median) RssShmem $(col rss-start $m 8 | median) KiB;" \
		"after the storm $(col rss-storm $m 5 | median) / $(col rss-storm $m 6 | median) /" \
		"$(col rss-storm $m 7 | median) / $(col rss-storm $m 8 | median) KiB, journal" \
		"$(col rss-storm $m 10 | median) bytes"
	echo "$m: burst without handlers: journal at most $(col burst-nohandler $m 6 | median) bytes," \
		"journal full $(col burst-nohandler $m 8 | median) times, queue paused $(col burst-nohandler $m 9 | median) times"
	echo "$m: handler runs/s: 10 rules 64 objects $(col runs $m 6 | median), 10 rules 1 object" \
		"$(col runs $m 8 | median), 10,000 rules 64 objects $(col runs $m 10 | median)"
done
grep -c 'cannot open the journal' "$tmp/log" | sed 's/^/journal-less starts: /'
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What the journal of accepted events costs intake (run by hand; prints
# figures, asserts nothing): loadgen storms of N events, as "post"
# requests and as "send" requests, against 10 and 10,000 filter rules
# (run-bench.sh's rule sets: nothing runs), keventd started in turn
#   off  with the journal off (KEVENTD_JOURNAL=off, keventd(8)), in a state
#        directory of its own
#   on   with the journal, in a state directory of its own on /run (tmpfs)
#   old  (only when KEVENTD_OLD names one) another keventd with its journal,
#        e.g. one built from an older commit
# for ROUNDS rounds, the modes in a different order each round.  For each
# storm: events/s accepted (loadgen) and keventd's CPU time per event
# (/proc/PID/schedstat).  Prints each round, the medians, and the median
# of each round's ratio to the same round's "off".
# Usage: [KEVENTD_OLD=/path/to/keventd] tests/bench/run-journal-bench.sh [BUILD_DIR] [N] [ROUNDS]
set -eu
build=${1:-build}
n=${2:-200000}
rounds=${3:-5}
keventd=$build/keventd/keventd
loadgen=$build/tests/bench/loadgen
[ -x "$keventd" ] && [ -x "$loadgen" ] || { echo "build first: $keventd, $loadgen" >&2; exit 1; }
modes="off on"
[ -n "${KEVENTD_OLD:-}" ] && modes="off on old"
tmp=$(mktemp -d)
run=$(mktemp -d /run/kevent-journal-bench.XXXXXX)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	rm -rf "$tmp" "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# rule k matches (power, signal s<k>, object /org/kernel/bench/*) and runs
# nothing; the events match the last one
. "$(dirname "$0")/bench-rules.sh"
for rules in 10 10000; do
	bench_rules "$tmp/r$rules" "$rules" none
done

rate() { sed -n 's/.*accepted in [^(]*(\([0-9]*\)\/s).*/\1/p'; }
cpu_ns() { cut -d' ' -f1 "/proc/$1/schedstat"; }

echo "journal cost, $(nproc) CPUs, $(date -u +%F), $n events a storm, $rounds rounds," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	# a different mode first each round
	order=$modes
	k=$r
	while [ $k -gt 1 ]; do
		order="${order#* } ${order%% *}"
		k=$((k - 1))
	done
	for rules in 10 10000; do
		for m in $order; do
			bin=$keventd state=$run/$m
			[ "$m" = old ] && bin=$KEVENTD_OLD
			rm -rf "$state"
			rm -f "$tmp/ctl"
			journal=on
			[ "$m" = off ] && journal=off
			KEVENTD_JOURNAL=$journal "$bin" --rules-dir "$tmp/r$rules" --control "$tmp/ctl" --sources socket \
				--state-dir "$state" --log-level err 2>>"$tmp/log" &
			pid=$!
			i=0
			while [ ! -S "$tmp/ctl" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
			sig=s$((rules - 1))
			c0=$(cpu_ns "$pid")
			post=$("$loadgen" --post "$tmp/ctl" "$n" 64 64 "$sig" | rate)
			c1=$(cpu_ns "$pid")
			send=$("$loadgen" "$tmp/ctl" "$n" 64 64 "$sig" | rate)
			c2=$(cpu_ns "$pid")
			kill -TERM "$pid"
			wait "$pid" || true
			pid=
			echo "round $r rules $rules $m post $post /s $(((c1 - c0) / n)) ns/ev" \
				"send $send /s $(((c2 - c1) / n)) ns/ev" | tee -a "$tmp/all"
		done
	done
done
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { # rules mode field
	awk -v r="$1" -v m="$2" -v f="$3" '$4 == r && $5 == m { print $f }' "$tmp/all"
}
ratio() { # rules mode field: each round's over the same round's "off"
	col "$1" "$2" "$3" >"$tmp/a"
	col "$1" off "$3" >"$tmp/b"
	paste "$tmp/a" "$tmp/b" | awk '{ printf "%.3f\n", $1 / $2 }'
}
for rules in 10 10000; do
	for m in $modes; do
		line="rules $rules $m: post $(col $rules $m 7 | median)/s $(col $rules $m 9 | median) ns/ev,"
		line="$line send $(col $rules $m 12 | median)/s $(col $rules $m 14 | median) ns/ev"
		if [ "$m" != off ]; then
			line="$line; share of off (median of the rounds' ratios): post $(ratio $rules $m 7 | median)"
			line="$line (cpu $(ratio $rules $m 9 | median)), send $(ratio $rules $m 12 | median)"
			line="$line (cpu $(ratio $rules $m 14 | median))"
		fi
		echo "$line"
	done
done
grep -c 'cannot open the journal' "$tmp/log" | sed 's/^/journal-less starts (expected: one per off run): /'
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What the event history costs intake (run by hand; prints figures, asserts
# nothing): a loadgen --post storm of N events against one filter rule,
# keventd started with --history 0, 1024 and 65536 in turn, ROUNDS rounds,
# each daemon taking two storms (the first fills a ring of 65,536, the
# second runs once it is full).  For each storm: loadgen's wall time, and
# keventd's own CPU time per event (from /proc/PID/schedstat, in ns), which
# the other process on the machine moves less, and its minor page faults
# (first touches of memory: the history's 65,536 entries and their buffers
# are touched for the first time during the first storm).  Prints each
# round, the medians, and the median of each round's ratio to --history 0.
# Usage: [KEVENTD=/path/to/keventd] tests/bench/run-history-bench.sh [BUILD_DIR] [N] [ROUNDS]
# (KEVENTD: another keventd, e.g. one built from an older commit, measured
# with this build's loadgen, as run-bench.sh takes it.)  Run it on an idle
# machine: the load average is printed first and last.
set -eu
build=${1:-build}
n=${2:-200000}
rounds=${3:-5}
keventd=${KEVENTD:-$build/keventd/keventd}
loadgen=$build/tests/bench/loadgen
[ -x "$keventd" ] && [ -x "$loadgen" ] || { echo "build first: $keventd, $loadgen" >&2; exit 1; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/rules"
cat >"$tmp/rules/10-match.yaml" <<'YAML'
rules:
  - name: bench-filter
    match: {type: power, signal: bench, object: /org/kernel/bench/*}
YAML
chmod 0644 "$tmp/rules/10-match.yaml"

accepted() { # the seconds of loadgen's "accepted in N.NNNs"
	sed -n 's/.*accepted in \([0-9.]*\)s.*/\1/p'
}
cpu_ns() { # the time process $1 has run on a CPU, in ns
	cut -d' ' -f1 "/proc/$1/schedstat"
}
minflt() { # the minor page faults of process $1 (proc(5): field 10 of stat)
	sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f8
}

echo "history cost, $(nproc) CPUs, $(date -u +%F), $n events a storm, $rounds rounds," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	for h in 0 1024 65536; do
		rm -f "$tmp/ctl"
		"$keventd" --rules-dir "$tmp/rules" --control "$tmp/ctl" --sources socket \
			--history "$h" --log-level warning 2>"$tmp/log" &
		pid=$!
		i=0
		while [ ! -S "$tmp/ctl" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
		c0=$(cpu_ns "$pid") f0=$(minflt "$pid")
		first=$("$loadgen" --post "$tmp/ctl" "$n" 64 | accepted)
		c1=$(cpu_ns "$pid") f1=$(minflt "$pid")
		second=$("$loadgen" --post "$tmp/ctl" "$n" 64 | accepted)
		c2=$(cpu_ns "$pid") f2=$(minflt "$pid")
		kill -TERM "$pid"
		wait "$pid" || true
		pid=
		echo "round $r history $h first $first s $(((c1 - c0) / n)) ns/ev" \
			"second $second s $(((c2 - c1) / n)) ns/ev" \
			"faults $((f1 - f0)) $((f2 - f1))" | tee -a "$tmp/all"
	done
done
median() { # of the numbers on stdin
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# col H FIELD: field FIELD of each round's line for --history H, in order
col() {
	awk -v h="$1" -v f="$2" '$4 == h { print $f }' "$tmp/all"
}
# ratio H FIELD: each round's FIELD for H over the same round's for 0
ratio() {
	col "$1" "$2" >"$tmp/a"
	col 0 "$2" >"$tmp/b"
	paste "$tmp/a" "$tmp/b" | awk '{ printf "%.3f\n", $1 / $2 }'
}
for h in 0 1024 65536; do
	line="history $h: first storm $(col "$h" 6 | median) s, $(col "$h" 8 | median) ns/ev;"
	line="$line second $(col "$h" 11 | median) s, $(col "$h" 13 | median) ns/ev;"
	line="$line page faults $(col "$h" 16 | median) / $(col "$h" 17 | median)"
	if [ "$h" != 0 ]; then
		line="$line; vs. 0, median of the rounds' ratios:"
		line="$line first $(ratio "$h" 6 | median) (cpu $(ratio "$h" 8 | median)),"
		line="$line second $(ratio "$h" 11 | median) (cpu $(ratio "$h" 13 | median))"
	fi
	echo "$line (medians of $rounds)"
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

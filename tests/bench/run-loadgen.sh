#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Load benchmark of the daemon (run by hand; prints figures, asserts nothing):
#  1. intake + matching with no handler: N events through the control socket
#  2. handler runs with a no-op handler (/bin/true)
# Usage: tests/bench/run-loadgen.sh [BUILD_DIR] [N]
set -eu
build=${1:-build}
n=${2:-20000}
keventd=$build/keventd/keventd
loadgen=$build/tests/bench/loadgen
[ -x "$keventd" ] && [ -x "$loadgen" ] || { echo "build first: $keventd, $loadgen" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/none" "$tmp/noop"
cat >"$tmp/none/10-match.yaml" <<'YAML'
rules:
  - name: bench-filter
    match: {type: power, signal: bench, object: /org/kernel/bench/*}
YAML
cat >"$tmp/noop/10-noop.yaml" <<'YAML'
rules:
  - name: bench-noop
    match: {type: power, signal: bench}
    run: [/bin/true]
YAML
chmod 0644 "$tmp"/*/*.yaml

run() { # name rules-dir events objects
	"$keventd" --rules-dir "$2" --control "$tmp/ctl" --log-level warning 2>"$tmp/log" &
	pid=$!
	i=0
	while [ ! -S "$tmp/ctl" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
	printf '%-34s ' "$1"
	"$loadgen" "$tmp/ctl" "$3" "$4"
	kill -TERM "$pid"
	wait "$pid" || true
}
echo "keventd load benchmark, $(nproc) CPUs, $(date -u +%F)"
run "intake+match, no handler:" "$tmp/none" "$n" 64
run "no-op handler (/bin/true):" "$tmp/noop" $((n / 10)) 64

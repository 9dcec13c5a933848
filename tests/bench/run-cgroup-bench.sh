#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What a cgroup per handler run costs (keventd(8), Containment): runs/s of
# a no-op handler (/bin/true) through keventd with a cgroup of its own for
# each run (keventd in a delegated subtree, here a cgroup made for it under
# the cgroup2 mount, as KEVENTD_CGROUP_ROOT says) and with the process
# group only, side by side, beside posix_spawn + waitpid of the same
# program with no keventd.  keventd logs at its default level (info: a
# record per run) to a file.  Rounds interleaved, medians.  Prints figures,
# asserts nothing.  Run by hand, as root, on a machine with a writable
# cgroup2 mount.
#
# Usage: tests/bench/run-cgroup-bench.sh [BUILD_DIR] [ROUNDS] [RUNS]
#        (default: build 5 3000)
set -eu
build=${1:-build}
rounds=${2:-5}
runs=${3:-3000}
bin=$(cd "$build/tests/bench" && pwd)
keventd=$(cd "$build/keventd" && pwd)/keventd
[ "$(id -u)" = 0 ] || { echo "run-cgroup-bench: run as root" >&2; exit 1; }
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$mnt" ] && [ -w "$mnt" ] || { echo "run-cgroup-bench: no writable cgroup2 mount" >&2; exit 1; }

tmp=$(mktemp -d /tmp/kevent-cgbench.XXXXXX)
chmod 0755 "$tmp"
cg=$mnt/kevent-cgbench-$$
kpid=
cleanup() {
	if [ -n "$kpid" ]; then kill "$kpid" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	for d in "$cg"/*/ "$cg"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null || true; done
	[ -n "${KEEP:-}" ] && cat "$tmp/keventd.log" >&2
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir "$tmp/rules"
cat >"$tmp/rules/10-true.yaml" <<YAML
rules:
  - name: noop
    match: {type: power, signal: bench}
    run: [/bin/true]
  - name: done
    match: {type: power, signal: done}
    run: [$bin/bench-stamp, $tmp/done, "0"]
YAML
chmod 0644 "$tmp/rules/10-true.yaml"
ctl=$tmp/control
handled() { sed -n 's/.*handled in [^(]*(\([0-9]*\)\/s).*/\1/p'; }
kstart() { # cgroup root, or "" for none
	rm -f "$ctl"
	if [ -n "$1" ]; then
		mkdir -p "$1"
		KEVENTD_CGROUP_ROOT=$1 "$keventd" --rules-dir "$tmp/rules" --control "$ctl" \
			--sources socket 2>>"$tmp/keventd.log" &
	else
		"$keventd" --rules-dir "$tmp/rules" --control "$ctl" --sources socket \
			2>>"$tmp/keventd.log" &
	fi
	kpid=$!
	"$bin/bench-raw" wait "$ctl" "$(date +%s%N)" >/dev/null
}
kstop() {
	kill -TERM "$kpid"
	wait "$kpid" || true
	kpid=
}

for r in $(seq "$rounds"); do
	echo "$("$bin/bench-raw" spawn "$runs" 8 /bin/true)" >>"$tmp/raw"
	kstart ""
	echo "$("$bin/loadgen" "$ctl" "$runs" 64 64 bench "$tmp/done" | handled)" >>"$tmp/pg"
	kstop
	kstart "$cg"
	echo "$("$bin/loadgen" "$ctl" "$runs" 64 64 bench "$tmp/done" | handled)" >>"$tmp/cg"
	kstop
	echo "round $r of $rounds" >&2
done
grep -q "containment: a cgroup per handler run" "$tmp/keventd.log" ||
	{ echo "run-cgroup-bench: keventd did not run handlers in cgroups" >&2; exit 1; }
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
raw=$(median "$tmp/raw")
pg=$(median "$tmp/pg")
cgm=$(median "$tmp/cg")
printf '%-52s %10s\n' "runs/s of /bin/true, 8 in flight (median of $rounds)" ""
printf '%-52s %10s\n' "  posix_spawn + waitpid, no keventd" "$raw"
printf '%-52s %10s  %s\n' "  keventd, process group" "$pg" \
	"$(awk -v a="$pg" -v b="$raw" 'BEGIN { printf "%.0f %% of raw", 100 * a / b }')"
printf '%-52s %10s  %s\n' "  keventd, a cgroup per run" "$cgm" \
	"$(awk -v a="$cgm" -v b="$pg" 'BEGIN { printf "%.0f %% of the process group'"'"'s", 100 * a / b }')"

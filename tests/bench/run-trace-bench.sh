#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The trace source measured on this machine (run by hand, as root; prints
# figures, asserts nothing), with bench-trace hitting the tracepoint
# syscalls/sys_enter_lseek on a descriptor that is never open, and the
# trace entry's kernel filter "fd == 999999" passing the hits meant to pass:
#   - keventd's CPU time per 100,000 hits (/proc/PID/task/*/schedstat and
#     /proc/PID/stat) with the filter passing 1 % and 100 % of them, beside
#     no trace entry at all, and one entry whose filter passes none; with
#     the caller's time per hit in each case (the tracepoint's cost to the
#     code that hits it);
#   - the time from a hit (CLOCK_MONOTONIC just before the system call) to
#     a handler's first instruction, p50 / p99, keventd beside bpftrace
#     --unsafe with system() on the same tracepoint and filter, and beside
#     the same handler spawned by bench-latency --raw at the same pace.
#   - in a QEMU guest (guest-trace-bench.sh; Debian's 6.1 and 6.12
#     kernels, TCG, one vCPU), the cost to the traced code: kevent.ko's
#     bench loop of send_kevent() with its tracepoint kevent/kevent_send
#     not traced, traced by keventd through a filter that passes nothing,
#     and traced with every hit taken.
# Rounds take turns (every setting once, then again, the order rotated)
# and the figures are medians of the rounds.
# Usage: tests/bench/run-trace-bench.sh [BUILD_DIR] [ROUNDS] (default build, 5);
# HITS (env) sets the hits per CPU figure, LAT_COUNT the latency samples,
# TRACE_BENCH_ONLY=host or guest one half, TRACE_BENCH_KERNELS the guest's
# kernels (default "6.1 6.12"; the guest needs the build's kernel tests to
# have run once: they install QEMU and fetch the kernels).
# Run it alone: flock -o /tmp/keventd-qemu.lock tests/bench/run-trace-bench.sh
set -eu
build=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
only=${TRACE_BENCH_ONLY:-}

if [ "$only" != host ]; then
	for k in ${TRACE_BENCH_KERNELS:-6.1 6.12}; do
		w=$build/kernel-tests/trace-bench-$k
		bash "$here/kernel/run-guest.sh" --kernel "$k" \
			--script "$here/bench/guest-trace-bench.sh" \
			--cache "$build/kernel-tests/cache" --workdir "$w" \
			--module "$here/../kernel" \
			--bin "$build/keventd/keventd" --bin "$build/keventd/keventctl" \
			--env "TRACE_ROUNDS=$rounds" --timeout 900 >/dev/null 2>&1 || true
		sed -n 's/^KBENCH //p' "$w/serial.log"
		grep -q '^KTEST-RESULT: PASS' "$w/serial.log" ||
			echo "kernel $k: the guest failed; see $w/serial.log"
	done
	[ "$only" = guest ] && exit 0
	echo
fi
hits=${HITS:-100000}
lat_n=${LAT_COUNT:-200}
bin=$build/tests/bench
keventd=$build/keventd/keventd
keventctl=$build/keventd/keventctl
tracefs=/sys/kernel/tracing
ev=syscalls/sys_enter_lseek
if [ "$(id -u)" != 0 ]; then
	echo "run-trace-bench: perf_event_open() on tracepoints needs root" >&2
	exit 77
fi
if [ ! -e "$tracefs/events/$ev/format" ]; then
	echo "run-trace-bench: this kernel has no $tracefs/events/$ev" >&2
	exit 77
fi
for p in "$keventd" "$keventctl" "$bin/bench-trace" "$bin/bench-stamp" "$bin/bench-latency"; do
	[ -x "$p" ] || {
		echo "run-trace-bench: $p is not built" >&2
		exit 1
	}
done

# a short directory: bpftrace's strings are 64 bytes at most
tmp=$(mktemp -d /tmp/kdtb.XXXX)
kpid=
bpid=
cleanup() {
	[ -n "$kpid" ] && kill -TERM "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	[ -n "$bpid" ] && kill -INT "$bpid" 2>/dev/null && wait "$bpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ln -s "$bin/bench-stamp" "$tmp/s"
mkdir "$tmp/res" "$tmp/idle" "$tmp/lat"
cat >"$tmp/filter.yaml" <<EOF
trace:
  - event: $ev
    filter: "fd == 999999"
EOF
# the rule matches every event and runs nothing: the source, the journal,
# the matcher and the history, no handler
cat >"$tmp/idle/10-bench.yaml" <<'EOF'
rules:
  - name: bench
    match: {object: /org/kernel/trace/syscalls, signal: sys_enter_lseek}
EOF
cat >"$tmp/lat/10-bench.yaml" <<EOF
rules:
  - name: stamp
    match: {object: /org/kernel/trace/syscalls, signal: sys_enter_lseek}
    run: [$tmp/s, $tmp/lat.out, "\${KEVENT_OFFSET}"]
EOF
chmod 0644 "$tmp"/*.yaml "$tmp"/idle/*.yaml "$tmp"/lat/*.yaml

put() { echo "$2" >>"$tmp/res/$1"; } # key value
# kstart RULES_DIR [trace]: keventd, with the trace entry or with none
kstart() {
	rm -rf "$tmp/ctl" "$tmp/state" "$tmp/keventd.log"
	if [ "${2:-}" = trace ]; then
		set -- --rules-dir "$1" --config "$tmp/filter.yaml" --sources socket,trace
		ready="trace: reading $ev"
	else
		set -- --rules-dir "$1" --sources socket
		ready="running:"
	fi
	"$keventd" "$@" --control "$tmp/ctl" --state-dir "$tmp/state" \
		>"$tmp/keventd.log" 2>&1 &
	kpid=$!
	i=0
	until grep -q "$ready" "$tmp/keventd.log"; do
		i=$((i + 1))
		[ $i -lt 300 ] || {
			echo "run-trace-bench: keventd did not start" >&2
			cat "$tmp/keventd.log" >&2
			exit 1
		}
		sleep 0.1
	done
}
kstop() {
	kill -TERM "$kpid"
	wait "$kpid" || true
	kpid=
}
cpu_ns() { "$bin/bench-trace" cpu "$kpid" | cut -d' ' -f1; }
# waits until keventd has used no CPU for 0.3 s: it has read what came
settle() {
	a=$(cpu_ns)
	i=0
	while [ $i -lt 100 ]; do
		sleep 0.3
		b=$(cpu_ns)
		[ "$a" = "$b" ] && return
		a=$b
		i=$((i + 1))
	done
}
trace_num() { # received | lost
	"$keventctl" --control "$tmp/ctl" status --json |
		sed -n "s/.*\"trace\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"
}

# cpu_round MODE: base (no trace entry), none (the filter passes nothing),
# p1 (1 %), p100 (all)
cpu_round() {
	case $1 in
	base) every=100 with= ;;
	none) every=0 with=trace ;;
	p1) every=100 with=trace ;;
	p100) every=1 with=trace ;;
	esac
	kstart "$tmp/idle" $with
	settle
	set -- "$1" $("$bin/bench-trace" cpu "$kpid")
	out=$("$bin/bench-trace" hits "$hits" "$every")
	settle
	set -- "$@" $("$bin/bench-trace" cpu "$kpid")
	put "$1.ns_hit" "${out% *}"
	put "$1.cpu_us" $((($5 - $2) / 1000))
	put "$1.ticks" $(($6 - $3))
	put "$1.switches" $(($7 - $4))
	if [ -n "$with" ]; then
		put "$1.received" "$(trace_num received)"
		put "$1.lost" "$(trace_num lost)"
	fi
	kstop
}

lat_keventd() {
	kstart "$tmp/lat" trace
	put k.lat "$("$bin/bench-trace" stamp "$lat_n" 50 "$tmp/lat.out")"
	kstop
}
lat_bpftrace() {
	: >"$tmp/bt.log"
	bpftrace --unsafe -e "tracepoint:$(echo $ev | tr / :) /args->fd == 999999/ {
		system(\"$tmp/s $tmp/bt.out %llu\", args->offset); }" >"$tmp/bt.log" 2>&1 &
	bpid=$!
	i=0
	until grep -q '^Attaching' "$tmp/bt.log"; do
		i=$((i + 1))
		[ $i -lt 300 ] || {
			echo "run-trace-bench: bpftrace did not start" >&2
			cat "$tmp/bt.log" >&2
			exit 1
		}
		sleep 0.1
	done
	sleep 1 # "Attaching" is printed before the probe is attached
	put b.lat "$("$bin/bench-trace" stamp "$lat_n" 50 "$tmp/bt.out")"
	kill -INT "$bpid"
	wait "$bpid" || true
	bpid=
}
lat_raw() {
	put r.lat "$("$bin/bench-latency" --raw "$tmp/s" 50 "$lat_n" "$tmp/raw.out")"
}

have_bpftrace=
command -v bpftrace >/dev/null && have_bpftrace=1
load0=$(cut -d' ' -f1 /proc/loadavg)
r=0
while [ $r -lt "$rounds" ]; do
	case $((r % 4)) in
	0) order="base none p1 p100" ;;
	1) order="p100 p1 none base" ;;
	2) order="p1 base p100 none" ;;
	3) order="none p100 base p1" ;;
	esac
	for m in $order; do cpu_round $m; done
	case $((r % 3)) in
	0) order="k b r" ;;
	1) order="b r k" ;;
	2) order="r k b" ;;
	esac
	for m in $order; do
		case $m in
		k) lat_keventd ;;
		b) [ -n "$have_bpftrace" ] && lat_bpftrace ;;
		r) lat_raw ;;
		esac
	done
	r=$((r + 1))
done
load1=$(cut -d' ' -f1 /proc/loadavg)

med() { # key [field]: the median of the rounds' values
	[ -s "$tmp/res/$1" ] || {
		echo -
		return
	}
	cut -d' ' -f"${2:-1}" "$tmp/res/$1" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
all() { tr '\n' ' ' <"$tmp/res/$1" | sed 's/ $//'; }
echo "keventd trace source benchmark: $(nproc) CPUs, kernel $(uname -r), $rounds rounds, medians;" \
	"load average $load0 at start, $load1 at end"
echo "$hits hits of $ev (lseek() on a closed descriptor), filter \"fd == 999999\""
echo
printf '%-44s %10s %10s %10s %10s\n' "" "no entry" "passes 0" "passes 1%" "passes all"
printf '%-44s %10s %10s %10s %10s\n' "keventd CPU per $hits hits (us)" \
	"$(med base.cpu_us)" "$(med none.cpu_us)" "$(med p1.cpu_us)" "$(med p100.cpu_us)"
printf '%-44s %10s %10s %10s %10s\n' "  the same from /proc/PID/stat (ticks)" \
	"$(med base.ticks)" "$(med none.ticks)" "$(med p1.ticks)" "$(med p100.ticks)"
printf '%-44s %10s %10s %10s %10s\n' "keventd context switches" \
	"$(med base.switches)" "$(med none.switches)" "$(med p1.switches)" "$(med p100.switches)"
printf '%-44s %10s %10s %10s %10s\n' "events received / lost" "" \
	"$(med none.received)/$(med none.lost)" "$(med p1.received)/$(med p1.lost)" \
	"$(med p100.received)/$(med p100.lost)"
printf '%-44s %10s %10s %10s %10s\n' "caller's time per hit (ns)" \
	"$(med base.ns_hit)" "$(med none.ns_hit)" "$(med p1.ns_hit)" "$(med p100.ns_hit)"
for m in base none p1 p100; do
	echo "  rounds $m: CPU us $(all $m.cpu_us); ns/hit $(all $m.ns_hit)"
done
echo
printf '%-44s %10s %10s\n' "hit -> handler start, $lat_n samples at 50/s" "p50 (us)" "p99 (us)"
printf '%-44s %10s %10s\n' "keventd, rule runs bench-stamp" "$(med k.lat 1)" "$(med k.lat 2)"
if [ -n "$have_bpftrace" ]; then
	printf '%-44s %10s %10s\n' "bpftrace --unsafe, system() (via /bin/sh)" \
		"$(med b.lat 1)" "$(med b.lat 2)"
else
	echo "bpftrace: not installed"
fi
printf '%-44s %10s %10s\n' "raw posix_spawn of bench-stamp, no tracing" "$(med r.lat 1)" "$(med r.lat 2)"
for m in k b r; do
	[ -s "$tmp/res/$m.lat" ] && echo "  rounds $m (p50 p99 samples): $(tr '\n' ',' <"$tmp/res/$m.lat" | sed 's/,$//; s/,/; /g')"
done
exit 0

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kevent.ko and keventd measured in a QEMU guest (run by hand; prints
# figures, asserts nothing; guest-kernel-bench.sh does the work), for
# Debian's 6.1 and 6.12 kernels:
#   - the sender's rate (a kernel loop of send_kevent()) with the ring off
#     (ring_kb=0) and on (16 KiB and the default 1 MiB), with no listener
#     (7 rounds of 1,000,000 events, medians) and with one;
#   - keventd after a burst of COUNT events: received live, recovered from
#     the ring, lost;
#   - the latency from send_kevent() to a handler's first instruction
#     (p50/p99), beside a raw posix_spawn of the same handler in the guest.
# Usage: tests/bench/run-kernel-bench.sh [BUILD_DIR] [COUNT] (default
# build, 200000).  Needs the build's kernel tests to have run once (they
# install QEMU and fetch the kernels).  Under TCG the CPU is emulated:
# compare the figures with each other, not with real hardware.
set -eu
build=$(cd "${1:-build}" && pwd)
count=${2:-200000}
here=$(cd "$(dirname "$0")/.." && pwd)
for k in 6.1 6.12; do
	bash "$here/kernel/run-guest.sh" --kernel "$k" \
		--script "$here/bench/guest-kernel-bench.sh" \
		--cache "$build/kernel-tests/cache" --workdir "$build/kernel-tests/bench-$k" \
		--module "$here/../kernel" \
		--bin "$build/keventd/keventd" --bin "$build/keventd/keventctl" \
		--bin "$build/kernel-tests/bin/kevent-listen" \
		--bin "$build/tests/bench/bench-stamp" --bin "$build/tests/bench/bench-latency" \
		--env "BENCH_COUNT=$count" --timeout 900 >/dev/null 2>&1 || true
	sed -n 's/^KBENCH //p' "$build/kernel-tests/bench-$k/serial.log"
	grep -q '^KTEST-RESULT: PASS' "$build/kernel-tests/bench-$k/serial.log" ||
		echo "kernel $k: the guest failed; see $build/kernel-tests/bench-$k/serial.log"
done

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel-to-keventd throughput, measured in a QEMU guest (run by hand;
# prints figures, asserts nothing): a kernel loop calls send_kevent() COUNT
# times; keventd, subscribed to the kevent family, matches each event
# against a rule that runs no handler.  Prints the loop's rate and how many
# events keventd received, overran (ENOBUFS) and counted as lost, for
# Debian's 6.1 and 6.12 kernels.  Usage: tests/bench/run-kernel-bench.sh
# [BUILD_DIR] [COUNT] (default build, 200000).  Needs the build's kernel
# tests to have run once (they install QEMU and fetch the kernels).
set -eu
build=$(cd "${1:-build}" && pwd)
count=${2:-200000}
here=$(cd "$(dirname "$0")/.." && pwd)
for k in 6.1 6.12; do
	bash "$here/kernel/run-guest.sh" --kernel "$k" \
		--script "$here/kernel/guest-keventd.sh" \
		--cache "$build/kernel-tests/cache" --workdir "$build/kernel-tests/bench-$k" \
		--module "$here/../kernel" \
		--bin "$build/keventd/keventd" --bin "$build/keventd/keventctl" \
		--bin "$build/kernel-tests/bin/kevent-forge" \
		--file "$here/kernel/keventd:/ktest/keventd" \
		--env "BENCH_COUNT=$count" --timeout 600 >/dev/null 2>&1 || true
	echo "kernel $k: $(sed -n 's/^KTEST-BENCH: keventd: //p' "$build/kernel-tests/bench-$k/serial.log")"
done

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds keventd twice (plain, and with ASan +
# UBSan) and runs every test under ctest; the kernel tests (QEMU) run in
# the plain build only.  Then it runs each fuzz target briefly.  Usage: scripts/test.sh [ctest arguments]
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh test
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DKEVENT_KERNEL_TESTS=ON \
	>/dev/null
cmake --build build -j"$jobs"
cmake -S . -B build-asan -DKEVENT_SANITIZE=ON -DBUILD_TESTING=ON -DKEVENT_KERNEL_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"

# The fuzz targets as libFuzzer binaries (clang), for a short bounded run
# each; the long runs are tests/fuzz/run-fuzzers.sh, by hand.
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DKEVENT_FUZZ=ON -DKEVENT_KERNEL_TESTS=OFF \
	-DKEVENT_FUZZ_SECONDS=15 >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz-rules fuzz-control fuzz-kernel-msg \
	fuzz-thermal-msg fuzz-acpi-msg fuzz-input-map fuzz-uevent fuzz-payload fuzz-record \
	fuzz-config fuzz-mqtt-msg fuzz-mqtt-spool

# The QEMU tests' kernels: headers installed and images fetched once, here,
# rather than by tests racing each other for apt.
for k in 6.1 6.12; do
	bash tests/kernel/prepare-kernel.sh --kernel "$k" --cache build/kernel-tests/cache \
		>/dev/null || echo "test.sh: kernel $k not prepared; its QEMU tests will say why"
done

# The system tests' Debian 12 root file system (mmdebstrap, about 300 MB of
# packages the first time), built once here and then kept under build/.
bash tests/system/base-image.sh --cache build/system-tests/cache >/dev/null ||
	echo "test.sh: the system tests' base image is not built; their tests will say why"

status=0
echo "== tests: sanitizer build (ASan + UBSan) =="
(cd build-asan && ctest --output-on-failure -j"$jobs" "$@") || status=1
echo "== tests: plain build, kernel tests included =="
(cd build && ctest --output-on-failure -j"$jobs" "$@") || status=1
echo "== tests: fuzz targets under libFuzzer, 15 s each =="
(cd build-fuzz && ctest --output-on-failure -j"$jobs" -L '^fuzz' "$@") || status=1
exit $status

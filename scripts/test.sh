#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds keventd twice (plain, and with ASan +
# UBSan) and runs every test under ctest.  The kernel tests (QEMU) run in
# the plain build only.  Usage: scripts/test.sh [ctest arguments]
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
cmake -S . -B build-asan -DKEVENT_SANITIZE=ON -DKEVENT_KERNEL_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"

status=0
echo "== tests: sanitizer build (ASan + UBSan) =="
(cd build-asan && ctest --output-on-failure -j"$jobs" "$@") || status=1
echo "== tests: plain build, kernel tests included =="
(cd build && ctest --output-on-failure -j"$jobs" "$@") || status=1
exit $status

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds keventd twice (plain, and with ASan +
# UBSan) and runs every test under ctest; the kernel tests (QEMU) run in
# the plain build only.  Then it runs each fuzz target briefly, and ends
# with a line per label: the tests that ran, failed and skipped.
# Usage: scripts/test.sh [ctest arguments]
#
# KEVENT_STRICT=1 (CI sets it: .ci/run) is strict mode: a test that cannot
# run here (exit 77: a package, a download, root or QEMU missing) fails
# instead of skipping, and so does a kernel or the system image that cannot
# be prepared, each with its reason.  Without it a partial run skips what it
# cannot do and says why.
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh test
jobs=$(nproc)
strict=OFF
[ "${KEVENT_STRICT:-0}" = 1 ] && strict=ON

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DKEVENT_KERNEL_TESTS=ON \
	-DKEVENT_STRICT=$strict >/dev/null
cmake --build build -j"$jobs"
cmake -S . -B build-asan -DKEVENT_SANITIZE=ON -DBUILD_TESTING=ON -DKEVENT_KERNEL_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=Debug -DKEVENT_STRICT=$strict >/dev/null
cmake --build build-asan -j"$jobs"

# The fuzz targets as libFuzzer binaries (clang), for a short bounded run
# each; the long runs are tests/fuzz/run-fuzzers.sh, by hand.
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DKEVENT_FUZZ=ON -DKEVENT_KERNEL_TESTS=OFF \
	-DKEVENT_FUZZ_SECONDS=15 -DKEVENT_STRICT=$strict >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz-rules fuzz-control fuzz-kernel-msg \
	fuzz-thermal-msg fuzz-acpi-msg fuzz-input-map fuzz-uevent fuzz-payload fuzz-record \
	fuzz-config fuzz-mqtt-msg fuzz-mqtt-spool fuzz-mqtt-dedupe fuzz-journal fuzz-fs-mounts fuzz-fs-fanotify fuzz-fs-quota fuzz-fs-state \
	fuzz-trace-msg \
	fuzz-md-stat fuzz-kmsg fuzz-kmsg-forge fuzz-cond-table fuzz-notify-rec

# The QEMU tests' kernels: headers installed and images fetched once, here,
# rather than by tests racing each other for apt.
# Their reasons (the scripts' "SKIP:" lines on stderr) are shown.
unprepared() {
	if [ $strict = ON ]; then
		echo "test.sh: $1 (strict mode: a failure)" >&2
		exit 1
	fi
	echo "test.sh: $1; its tests will skip and say why" >&2
}
for k in 6.1 6.12; do
	bash tests/kernel/prepare-kernel.sh --kernel "$k" --cache build/kernel-tests/cache \
		>/dev/null || unprepared "kernel $k not prepared"
done

# The system tests' Debian 12 root file system (mmdebstrap, about 300 MB of
# packages the first time), built once here and then kept under build/.
bash tests/system/base-image.sh --cache build/system-tests/cache >/dev/null ||
	unprepared "the system tests' base image is not built"

# run TREE TITLE [ctest arguments]: one ctest run, its JUnit report kept
# for the summary at the end
status=0
run() {
	tree=$1 title=$2
	shift 2
	echo "== tests: $title =="
	rm -f "$tree/junit.xml"
	(cd "$tree" && ctest --output-on-failure --output-junit junit.xml -j"$jobs" "$@") || status=1
}
run build-asan "sanitizer build (ASan + UBSan)" "$@"
run build "plain build, kernel tests included" "$@"
run build-fuzz "fuzz targets under libFuzzer, 15 s each" -L '^fuzz' "$@"
for t in "build-asan:sanitizer build" "build:plain build" "build-fuzz:fuzz targets"; do
	[ -f "${t%%:*}/junit.xml" ] || continue
	python3 scripts/test-summary.py "${t%%:*}" "${t%%:*}/junit.xml" "${t#*:}" || status=1
done
[ $strict = ON ] && echo "strict mode (KEVENT_STRICT=1): a test that could not run counted as failed"
exit $status

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The long fuzz run, by hand (see README.md):
#   tests/fuzz/run-fuzzers.sh SECONDS [TARGET...]
# Builds the libFuzzer targets with clang, ASan and UBSan in build-fuzz/
# (BUILD_DIR= to change; NO_BUILD=1 to use what is built there), runs each
# target for SECONDS (JOBS at a time, default 1), prints execs, execs per
# second and findings per target, and copies every crash, leak, timeout or
# out-of-memory input into tests/fuzz/regressions/TARGET/.  Exits 1 if
# anything was found.  Each target's corpus grows in
# BUILD_DIR/fuzz-work/TARGET/corpus/, kept between runs.
set -eu
cd "$(dirname "$0")/../.."
top=$(pwd)

seconds=${1:-}
case "$seconds" in
'' | *[!0-9]*)
	echo "usage: $0 SECONDS [TARGET...]" >&2
	exit 2
	;;
esac
shift
targets=${*:-rules control kernel-msg thermal-msg acpi-msg input-map uevent payload record config mqtt-msg mqtt-spool journal fs-mounts fs-fanotify fs-quota trace-msg md-stat kmsg kmsg-forge notify-rec}
build=${BUILD_DIR:-$top/build-fuzz}
jobs=${JOBS:-1}

command -v clang >/dev/null || { echo "clang is needed" >&2; exit 2; }
if [ -z "${NO_BUILD:-}" ]; then
	cmake -S "$top" -B "$build" -DCMAKE_C_COMPILER=clang -DKEVENT_FUZZ=ON \
		-DKEVENT_KERNEL_TESTS=OFF >/dev/null
	for t in $targets; do
		cmake --build "$build" --target "fuzz-$t" -- -j"$(nproc)" >/dev/null
	done
fi

run_one() {
	t=$1
	work=$build/fuzz-work/$t
	mkdir -p "$work/corpus" "$work/artifacts"
	dict=
	[ "$t" = rules ] && dict=-dict=$top/tests/fuzz/rules.dict
	# as CMakeLists.txt: room for oversize messages, past libFuzzer's 4096
	max_len=8192
	[ "$t" = control ] && max_len=8256
	# shellcheck disable=SC2086
	"$build/tests/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len="$max_len" -print_final_stats=1 -artifact_prefix="$work/artifacts/" $dict \
		"$work/corpus" "$top/tests/fuzz/corpus/$t" "$top/tests/fuzz/regressions/$t" \
		>"$work/log" 2>&1 || true
}

start=$(date +%s)
running=0
for t in $targets; do
	rm -rf "$build/fuzz-work/$t/artifacts"
	run_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

found=0
printf '%-12s %12s %10s %8s  %s\n' target execs execs/s corpus findings
for t in $targets; do
	work=$build/fuzz-work/$t
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
	units=$(find "$work/corpus" -type f | wc -l)
	findings=
	mkdir -p "$top/tests/fuzz/regressions/$t"
	for a in "$work"/artifacts/*; do
		[ -f "$a" ] || continue
		findings="$findings $(basename "$a")"
		cp -n "$a" "$top/tests/fuzz/regressions/$t/" || true
		found=1
	done
	printf '%-12s %12s %10s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$units" \
		"${findings:-none}"
	if [ -n "$findings" ]; then
		grep -m 3 -E 'ERROR: |runtime error|check failed' "$work/log" | sed 's/^/    /' || true
	fi
done
echo "ran $(($(date +%s) - start)) s; logs in $build/fuzz-work/*/log"
exit "$found"

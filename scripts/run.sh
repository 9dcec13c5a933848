#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds, and shows what the repo's rules do with
# the CPU-overheat event.  (Runs the daemon once it exists.)
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
./build/keventd/keventctl verify rules.d
exec ./build/keventd/keventctl test --rules-dir rules.d \
	power /org/kernel/devices/system/cpu/temperature high "$(printf 'Cpu: 0\nTemperature: 95000')"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, builds, and runs keventd in the foreground on the
# repo's rules.d, with its control socket in .run/control and its state (the
# journal, the positions) in .run/state: its own, not the installed
# service's /run/keventd.  Stop it with Ctrl-C.  Extra arguments go to
# keventd (e.g. --log-level debug).
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh
cmake -S . -B build -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p .run
./build/keventd/keventctl verify rules.d
echo "keventd: try, in another terminal:" >&2
echo "  ./build/keventd/keventctl --control .run/control send power /org/kernel/devices/system/cpu/temperature high 'Cpu: 0'" >&2
exec ./build/keventd/keventd --rules-dir rules.d --control .run/control \
	--state-dir "$PWD/.run/state" --lib-dir "$PWD/.run/lib" "$@"

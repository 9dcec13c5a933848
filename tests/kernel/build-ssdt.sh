#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# build-ssdt.sh ASL OUT.aml: compiles an ACPI table with iasl, installing
# Debian's acpica-tools first if needed.  Exits 77 if it cannot be had.
set -eu
asl=$1
out=$2
log() { echo "build-ssdt: $*" >&2; }
mkdir -p "$(dirname "$out")"
APT_LOG=$(cd "$(dirname "$out")" && pwd)/apt-build-ssdt.log
# shellcheck source=apt.sh
. "$(dirname "$0")/apt.sh"
if ! command -v iasl >/dev/null; then
	apt_install acpica-tools ||
		{ echo "build-ssdt: acpica-tools (iasl) cannot be installed"; exit 77; }
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$asl" "$dir/tz.asl"
(cd "$dir" && iasl tz.asl >"$dir/iasl.log" 2>&1) || { cat "$dir/iasl.log"; false; } || { echo "build-ssdt: iasl failed"; exit 1; }
cp "$dir/tz.aml" "$out"
echo "build-ssdt: $out"

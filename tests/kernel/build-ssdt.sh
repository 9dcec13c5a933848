#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# build-ssdt.sh ASL OUT.aml: compiles an ACPI table with iasl, installing
# Debian's acpica-tools first if needed.  Exits 77 if it cannot be had.
set -eu
asl=$1
out=$2
if ! command -v iasl >/dev/null; then
	if [ "$(id -u)" -ne 0 ] ||
		! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 acpica-tools >/dev/null 2>&1; then
		(apt-get update -qq >/dev/null 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 acpica-tools >/dev/null 2>&1) ||
			{ echo "build-ssdt: acpica-tools (iasl) cannot be installed"; exit 77; }
	fi
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$asl" "$dir/tz.asl"
(cd "$dir" && iasl tz.asl >"$dir/iasl.log" 2>&1) || { cat "$dir/iasl.log"; false; } || { echo "build-ssdt: iasl failed"; exit 1; }
mkdir -p "$(dirname "$out")"
cp "$dir/tz.aml" "$out"
echo "build-ssdt: $out"

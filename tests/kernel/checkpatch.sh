#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.sh [--cache DIR] SRC_DIR...
#
# Runs the kernel's checkpatch.pl --strict --no-tree -f on every .c and .h
# under each SRC_DIR.  checkpatch.pl comes from Debian's linux-source-6.1
# package (installed with apt-get if needed); only scripts/checkpatch.pl,
# scripts/spelling.txt and scripts/const_structs.checkpatch are extracted,
# once, into DIR/checkpatch/.
# Exit 0 when there is no error and no warning (CHECKs are reported),
# 1 otherwise, 77 when checkpatch.pl cannot be obtained.
set -euo pipefail

CACHE=$PWD/kernel-tests/cache
if [ "${1:-}" = --cache ]; then
	CACHE=$2
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: checkpatch.sh [--cache DIR] SRC_DIR..." >&2; exit 2; }

skip() { echo "SKIP: $*" >&2; exit 77; }

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
CP=$CACHE/checkpatch/scripts/checkpatch.pl

log() { echo "checkpatch: $*" >&2; }
APT_LOG=$CACHE/apt-checkpatch.log
# shellcheck source=apt.sh
. "$(dirname "$0")/apt.sh"

if [ ! -s "$CP" ]; then
	(
		flock -w 900 9 || exit 1
		[ -s "$CP" ] && exit 0
		apt_install linux-source-6.1 perl || skip "cannot install linux-source-6.1"
		TARBALL=$(find /usr/src -maxdepth 1 -name 'linux-source-6.1.tar.*' | head -n 1)
		[ -n "$TARBALL" ] || skip "no /usr/src/linux-source-6.1.tar.*"
		echo "checkpatch: extracting scripts/checkpatch.pl from $TARBALL" >&2
		rm -rf "$CACHE/checkpatch.tmp"
		mkdir -p "$CACHE/checkpatch.tmp"
		tar -xf "$TARBALL" -C "$CACHE/checkpatch.tmp" --strip-components=1 \
			--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch'
		rm -rf "$CACHE/checkpatch"
		mv "$CACHE/checkpatch.tmp" "$CACHE/checkpatch"
	) 9>"$CACHE/checkpatch.lock" || exit $?
fi

FILES=()
for d in "$@"; do
	[ -d "$d" ] || { echo "checkpatch: no such directory: $d" >&2; exit 1; }
	mapfile -t -O ${#FILES[@]} FILES < <(find "$d" -name '*.[ch]' -not -name '*.mod.c' |
		LC_ALL=C sort)
done
[ ${#FILES[@]} -gt 0 ] || { echo "checkpatch: no sources in $*" >&2; exit 1; }

set +e
OUT=$(perl "$CP" --strict --no-tree --no-color --show-types -f "${FILES[@]}" 2>&1)
set -e
echo "$OUT"
read -r e w c < <(echo "$OUT" | awk '/^total: / {
	e += $2; w += $4; c += $6 } END { print e + 0, w + 0, c + 0 }')
echo "checkpatch: ${#FILES[@]} files: $e errors, $w warnings, $c checks"
[ "$e" = 0 ] && [ "$w" = 0 ]

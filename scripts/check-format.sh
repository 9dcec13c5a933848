#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Fails if any user-space C file differs from what clang-format makes of it.
# kernel/ follows the kernel's style and is checked by checkpatch.pl instead,
# and so do the test modules (tests/kernel/, tests/system/guest/).
# With --fix, reformats the files in place.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed"; exit 77; }
files=$(git ls-files -co --exclude-standard -- 'src/*.[ch]' 'keventd/*.[ch]' 'tests/*.[ch]' \
	| grep -v -e '^tests/kernel/' -e '^tests/system/guest/' || true)
[ -n "$files" ] || exit 0
if [ "${1:-}" = "--fix" ]; then
	# shellcheck disable=SC2086
	clang-format -i $files
	exit 0
fi
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files

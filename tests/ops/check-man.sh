#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Renders each man page given (plain or .gz) with man-db and with groff,
# warnings on, and fails on any warning or on empty output.
# Usage: check-man.sh PAGE...
set -u
command -v man >/dev/null && command -v groff >/dev/null || {
	echo "SKIP: man-db and groff are not installed (scripts/deps.sh installs them)"
	exit 77
}
[ $# -gt 0 ] || { echo "usage: check-man.sh PAGE..." >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1
status=0
for page in "$@"; do
	before=$status
	status=0
	if ! man --warnings -E UTF-8 -l "$page" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL: man -l $page exited $?"
		status=1
	fi
	if [ -s "$tmp/err" ]; then
		echo "FAIL: man --warnings -l $page:"
		sed 's/^/  /' "$tmp/err"
		status=1
	fi
	if ! grep -q . "$tmp/out"; then
		echo "FAIL: man -l $page rendered nothing"
		status=1
	fi
	case $page in
	*.gz) gzip -dc "$page" >"$tmp/src" ;;
	*) cp "$page" "$tmp/src" ;;
	esac
	groff -man -ww -z -Tutf8 "$tmp/src" 2>"$tmp/err"
	if [ -s "$tmp/err" ]; then
		echo "FAIL: groff -man -ww $page:"
		sed 's/^/  /' "$tmp/err"
		status=1
	fi
	[ $status -eq 0 ] && echo "ok: $page"
	[ $before -eq 0 ] || status=1
done
exit $status

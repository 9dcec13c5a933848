#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden-output test of keventctl: runs one case of cases/ and compares its
# stdout, stderr and exit status with cases/NAME.expected.
#
# Usage: run-golden.sh KEVENTCTL SOURCE_DIR VERSION NAME
#
# cases/NAME.args holds keventctl's arguments as shell words (it is eval'd,
# so quotes and "$(printf ...)" work).  The case runs in a scratch directory
# holding copies of tests/golden/rules/ (as rules/) and of the repo's
# rules.d/ and user-rules.d/, so that the files belong to whoever runs the
# test and are not group-writable: as root, keventctl applies keventd's trust checks, and a
# checkout owned by another user must not change the output.  Paths of the
# scratch and source directories, and the version, are replaced by @WORK@,
# @SRC@ and @VERSION@ before comparing.  An optional cases/NAME.filter holds
# a command that stdout is piped through first (e.g. "head -n 3" for help
# texts that grow with every new command).  With GOLDEN_UPDATE=1 the
# expected file is rewritten instead.
set -eu
ctl=$1 src=$2 version=$3 name=$4
here=$src/tests/golden
args_file=$here/cases/$name.args
expected=$here/cases/$name.expected
[ -r "$args_file" ] || { echo "no such case: $args_file" >&2; exit 1; }

umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/kevent-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cp -R "$here/rules" "$work/rules"
cp -R "$src/rules.d" "$work/rules.d"
cp -R "$src/user-rules.d" "$work/user-rules.d"
mkdir "$work/bin"
ln -s "$ctl" "$work/bin/keventctl" # so that argv[0] is plain "keventctl"

cd "$work"
eval "set -- $(cat "$args_file")"
status=0
PATH="$work/bin:$PATH" keventctl "$@" >"$work/stdout" 2>"$work/stderr" </dev/null || status=$?
filter=cat
[ -r "$here/cases/$name.filter" ] && filter=$(cat "$here/cases/$name.filter")
{
	$filter <"$work/stdout"
	echo "--- stderr"
	cat "$work/stderr"
	echo "--- exit $status"
} | sed -e "s|$work|@WORK@|g" -e "s|$src|@SRC@|g" \
	-e "s|keventctl $version\$|keventctl @VERSION@|" >"$work/actual"

if [ "${GOLDEN_UPDATE:-0}" = 1 ]; then
	cp "$work/actual" "$expected"
	echo "updated $expected"
	exit 0
fi
if ! diff -u "$expected" "$work/actual"; then
	echo "golden-$name: output differs from $expected (- expected, + actual)" >&2
	exit 1
fi

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# dkms-autopkgtest.sh --src SRC --cache DIR --debs-env FILE --work DIR
#
# debian/tests' dkms-autopkgtest, as autopkgtest-pkg-dkms runs it, in a
# chroot over the base image (base-image.sh), where DKMS builds at native
# speed: kevent-dkms in an apt archive of its own (a flat file:
# repository, as autopkgtest serves the packages under test), the test's
# Depends installed from it, then its Test-Command (DKMS's
# /usr/lib/dkms/dkms-autopkgtest: reinstalls kevent-dkms, builds and
# installs the module for every kernel whose headers are installed).
# Expected: it exits 0 with "I: PASS KERNEL" for both of the image's
# kernels.  The script installs openssl from the distribution's archive
# when it is missing: exit 77 when that cannot be had (no network), 1 on
# any other failure.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=
CACHE=
DEBS_ENV=
WORK=
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || { echo "dkms-autopkgtest: $1 needs an argument" >&2; exit 2; }
	case "$1" in
	--src) SRC=$2 ;;
	--cache) CACHE=$2 ;;
	--debs-env) DEBS_ENV=$2 ;;
	--work) WORK=$2 ;;
	*) echo "dkms-autopkgtest: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift 2
done
if [ -z "$SRC" ] || [ -z "$CACHE" ] || [ -z "$WORK" ] || [ ! -f "$DEBS_ENV" ]; then
	echo "usage: dkms-autopkgtest.sh --src SRC --cache DIR --debs-env FILE --work DIR" >&2
	exit 2
fi
# shellcheck disable=SC1090
. "$DEBS_ENV"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
fail() { echo "dkms-autopkgtest: FAIL: $*"; exit 1; }
command -v dpkg-scanpackages >/dev/null ||
	{ echo "SKIP: dpkg-scanpackages is not installed (dpkg-dev; sh scripts/deps.sh test)"; exit 77; }

# The test as debian/tests/control declares it.
control=$SRC/debian/tests/control
cmd=$(sed -n 's/^Test-Command: //p' "$control")
depends=$(awk '/^Test-Command:/ { t = 1 } t && /^Depends:/ { sub(/^Depends: */, ""); print; exit }' \
	"$control" | tr -d ',')
[ -n "$cmd" ] && [ -n "$depends" ] || fail "no Test-Command with its Depends in $control"

set +e
PREP=$(bash "$HERE/base-image.sh" --cache "$CACHE")
rc=$?
set -e
[ $rc = 0 ] || exit $rc
eval "$PREP"

start=$(date +%s)
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
trap 'chroot_down; rm -rf "$WORK/chroot"' EXIT
chroot_up "$BASE" "$WORK/chroot" || fail "cannot mount an overlay chroot in $WORK/chroot"

# the archive of the packages under test
repo=/var/lib/systest-archive
mkdir -p "$CHROOT$repo"
cp "$DKMS_DEB" "$CHROOT$repo/"
(cd "$CHROOT$repo" && dpkg-scanpackages . /dev/null >Packages 2>/dev/null)
echo "deb [trusted=yes] file:$repo ./" >"$CHROOT/etc/apt/sources.list.d/systest.list"
in_chroot apt-get update -o Dir::Etc::sourcelist=sources.list.d/systest.list \
	-o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0 >"$WORK/update.log" 2>&1 ||
	{ cat "$WORK/update.log"; fail "apt-get update of the test's archive failed"; }
if ! in_chroot sh -c 'test -x /usr/bin/openssl || apt-get install -y --download-only openssl' \
	>"$WORK/openssl.log" 2>&1; then
	tail -n 5 "$WORK/openssl.log"
	echo "SKIP: dkms-autopkgtest installs openssl, which cannot be had here (no network?)"
	exit 77
fi

# as autopkgtest: the Depends, then the Test-Command, as root
# shellcheck disable=SC2086
in_chroot apt-get install -y -o Dpkg::Use-Pty=0 $depends >"$WORK/depends.log" 2>&1 ||
	{ cat "$WORK/depends.log"; fail "installing the test's Depends ($depends) failed"; }
set +e
in_chroot sh -c "$cmd" >"$WORK/test.log" 2>&1
rc=$?
set -e
cat "$WORK/test.log"
[ $rc = 0 ] || fail "$cmd exited $rc"
for k in "$KVER_6_1" "$KVER_6_12"; do
	grep -qx "I: PASS $k" "$WORK/test.log" || fail "no 'I: PASS $k' from $cmd"
done
echo "dkms-autopkgtest: PASS: $cmd built and installed kevent for $KVER_6_1 and" \
	"$KVER_6_12 ($(($(date +%s) - start)) s)"

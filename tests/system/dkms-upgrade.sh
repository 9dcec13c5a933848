#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# dkms-upgrade.sh --cache DIR --debs-env FILE --work DIR
#
# The upgrade that changes the module's version, which the booted guest
# cannot afford (under TCG, DKMS and depmod take minutes per kernel): in a
# chroot over the base image (base-image.sh), the way an image is
# upgraded, apt-get install of keventd and kevent-dkms <v>-1, then of
# <v>.1-1 (NEXT_DEB and NEXT_DKMS_DEB of build-debs.sh).  Expected: dh_dkms's
# scripts (DKMS's common.postinst) build kevent <v>.1 for the kernels they
# name ("Building for ..."), among them the newest, and forget <v>, whose
# /usr/src/kevent-<v> is gone; kevent.ko is in place for those kernels;
# the copy of Module.symvers and the source sum are the new version's; apt
# prints no error.  Then apt-get purge leaves nothing of kevent in DKMS,
# /usr/src or /lib/modules.
# Exit 0 when all hold, 1 naming the first that does not, 77 when the base
# cannot be built.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=
DEBS_ENV=
WORK=
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || { echo "dkms-upgrade: $1 needs an argument" >&2; exit 2; }
	case "$1" in
	--cache) CACHE=$2 ;;
	--debs-env) DEBS_ENV=$2 ;;
	--work) WORK=$2 ;;
	*) echo "dkms-upgrade: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift 2
done
if [ -z "$CACHE" ] || [ -z "$WORK" ] || [ ! -f "$DEBS_ENV" ]; then
	echo "usage: dkms-upgrade.sh --cache DIR --debs-env FILE --work DIR" >&2
	exit 2
fi
# shellcheck disable=SC1090
. "$DEBS_ENV"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
fail() { echo "dkms-upgrade: FAIL: $*"; exit 1; }

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
cp "$DEB" "$DKMS_DEB" "$NEXT_DEB" "$NEXT_DKMS_DEB" "$CHROOT/tmp/"

# apt_install LOG DEB...: apt-get install ./DEB... in the chroot, its output in LOG
apt_install() {
	local log=$1 debs="" d
	shift
	for d in "$@"; do debs="$debs ./$(basename "$d")"; done
	in_chroot sh -c "cd /tmp && apt-get install -y -o Dpkg::Use-Pty=0 $debs" \
		>"$log" 2>&1 || { cat "$log"; fail "apt-get install$debs failed"; }
	if grep -E 'write error|Broken pipe|Error!|failed' "$log"; then
		fail "apt-get install$debs printed the lines above"
	fi
}
apt_install "$WORK/install.log" "$DEB" "$DKMS_DEB"
apt_install "$WORK/upgrade.log" "$NEXT_DEB" "$NEXT_DKMS_DEB"
cat "$WORK/upgrade.log"

for p in keventd kevent-dkms; do
	in_chroot dpkg-query -W -f='${Version}\n' "$p" | grep -qx "$NEXT_VERSION-1" ||
		fail "$p $NEXT_VERSION-1 is not what is installed"
done
# "Building for 6.1.0-28-amd64 and 6.12.9+deb12-amd64": in a chroot, whose
# running kernel is the host's, common.postinst builds an upgrade for the
# newest kernel it finds newer than the host's, or for all of them
built_for=$(sed -n 's/^Building for //p' "$WORK/upgrade.log" | tail -n 1 | sed 's/,\| and / /g')
echo "common.postinst built for: $built_for"
case " $built_for " in
*" $KVER_6_12 "*) ;;
*) fail "the upgrade did not build kevent $NEXT_VERSION for the newest kernel, $KVER_6_12" ;;
esac
status=$(in_chroot dkms status kevent)
echo "$status"
sum=$(in_chroot sh "/usr/src/kevent-$NEXT_VERSION/dkms-post-build.sh" --source-sum \
	"/usr/src/kevent-$NEXT_VERSION")
for k in $built_for; do
	echo "$status" | grep -qx "kevent/$NEXT_VERSION, $k, x86_64: installed" ||
		fail "DKMS did not build kevent/$NEXT_VERSION for $k"
	ls "$CHROOT/lib/modules/$k/updates/dkms/"kevent.ko* >/dev/null ||
		fail "no kevent.ko for $k"
	d=$CHROOT/var/lib/dkms/kevent/kernel-$k-x86_64
	[ "$(readlink "$d")" = "$NEXT_VERSION/$k/x86_64" ] ||
		fail "$d does not lead to the new version's build"
	[ -s "$d/Module.symvers" ] || fail "no Module.symvers kept for $k"
	[ "$(cat "$d/source.sha256")" = "$sum" ] || fail "the module for $k is not built from $NEXT_VERSION's source"
done
if echo "$status" | grep -q "^kevent/$VERSION,"; then
	fail "DKMS still has kevent/$VERSION"
fi
[ ! -e "$CHROOT/usr/src/kevent-$VERSION" ] || fail "/usr/src/kevent-$VERSION is still there"

in_chroot apt-get purge -y -o Dpkg::Use-Pty=0 keventd kevent-dkms >"$WORK/purge.log" 2>&1 ||
	{ cat "$WORK/purge.log"; fail "apt-get purge keventd kevent-dkms failed"; }
left=$(cd "$CHROOT" && { ls -d var/lib/dkms/kevent usr/src/kevent-* 2>/dev/null;
	find lib/modules -name 'kevent.ko*'; } || true)
[ -z "$left" ] || fail "apt-get purge left: $left"
echo "dkms-upgrade: PASS: $VERSION-1 -> $NEXT_VERSION-1 rebuilt kevent.ko for" \
	"$built_for, purge left nothing ($(($(date +%s) - start)) s)"

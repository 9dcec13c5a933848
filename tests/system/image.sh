#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# image.sh --cache DIR --out DIR --debs-env FILE
#
# The disk image the system tests boot: the Debian 12 base of
# base-image.sh, with keventd installed from its packages the way an admin
# does it, `apt-get install ./keventd_*.deb ./kevent-dkms_*.deb
# ./keventd-dev_*.deb` (here in a chroot: DKMS builds kevent.ko for both of
# the image's kernels then), and the test's own pieces (guest/install.sh):
# the control channel's agent, a rule file of the admin's, a rule pack built
# as docs/packaging.md says (installed by a scenario), a third-party module
# built with DKMS against kevent.ko, and debian/tests, the autopkgtests.
# FILE is build-debs.sh's debs.env: DEB, DKMS_DEB and DEV_DEB are
# installed, REVISION_DEB is left in /var/lib/systest for the upgrade
# scenario.
#
# The base stays untouched (an overlay takes the changes); the result is
# an ext4 image made with mkfs.ext4 -d, plus each kernel and initrd of the
# image, in OUT:
#     root.img  vmlinuz-KVER  initrd.img-KVER  image.env  install.log
# OUT is kept while its key (the base, the .debs, the guest files, this
# script) is the same.  Prints image.env's assignments on stdout: IMAGE=,
# KVER_6_1=, KVER_6_12=, and the dir OUT=.  Exit 77 when the base cannot be
# built for want of packages, 1 on any other failure.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=
OUT=
DEBS_ENV=
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || { echo "image: $1 needs an argument" >&2; exit 2; }
	case "$1" in
	--cache) CACHE=$2 ;;
	--out) OUT=$2 ;;
	--debs-env) DEBS_ENV=$2 ;;
	*) echo "image: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift 2
done
if [ -z "$CACHE" ] || [ -z "$OUT" ] || [ ! -f "$DEBS_ENV" ]; then
	echo "usage: image.sh --cache DIR --out DIR --debs-env FILE" >&2
	exit 2
fi
# shellcheck disable=SC1090
. "$DEBS_ENV"
DEB2=$REVISION_DEB
AUTOPKGTEST=$HERE/../../debian/tests
log() { echo "image: $*" >&2; }
# shellcheck source=lib.sh
. "$HERE/lib.sh"

set +e
PREP=$(bash "$HERE/base-image.sh" --cache "$CACHE")
rc=$?
set -e
[ $rc = 0 ] || exit $rc
eval "$PREP"
command -v mkfs.ext4 >/dev/null || { log "mkfs.ext4 not found (e2fsprogs)"; exit 1; }

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
KEY=$( {
	echo "$BASE"
	deb_sum "$DEB" "$DKMS_DEB" "$DEV_DEB" "$DEB2"
	find "$HERE/guest" "$AUTOPKGTEST" -type f -print0 | LC_ALL=C sort -z |
		xargs -0 sha256sum | cut -d' ' -f1
	cat "$0"
} | sha256sum | cut -c1-16)

(
	flock -w 1200 9 || { log "timed out waiting for $OUT.lock"; exit 1; }
	if [ -e "$OUT/.done" ] && [ "$(cat "$OUT/.done")" = "$KEY" ]; then
		exit 0
	fi
	start=$(date +%s)
	rm -rf "$OUT/work" "$OUT/.done" "$OUT"/root.img "$OUT"/vmlinuz-* "$OUT"/initrd.img-*
	W=$OUT/work
	trap chroot_down EXIT
	chroot_up "$BASE" "$W" || { log "cannot mount an overlay chroot in $W"; exit 1; }
	M=$CHROOT

	S=$M/var/lib/systest
	mkdir -p "$S"
	cp "$DEB" "$DKMS_DEB" "$DEV_DEB" "$DEB2" "$S/"
	cp -r "$HERE/guest" "$S/guest"
	cp -r "$AUTOPKGTEST" "$S/autopkgtest"
	echo "KVER_6_1=$KVER_6_1 KVER_6_12=$KVER_6_12" >"$S/kernels"
	log "installing $(basename "$DEB") and the test's pieces in the image (chroot)"
	if ! in_chroot bash /var/lib/systest/guest/install.sh "$(basename "$DEB")" \
		"$(basename "$DKMS_DEB")" "$(basename "$DEV_DEB")" >"$OUT/install.log" 2>&1; then
		tail -n 40 "$OUT/install.log" >&2
		log "installing in the image failed (whole log: $OUT/install.log)"
		exit 1
	fi
	for k in "$KVER_6_1" "$KVER_6_12"; do
		cp "$M/boot/vmlinuz-$k" "$M/boot/initrd.img-$k" "$OUT/"
	done
	chroot_down 1
	# Room for the journal and what the scenarios write.
	mb=$(( $(du -sm -x "$M" | cut -f1) + 512 ))
	log "mkfs.ext4 -d: ${mb} MiB"
	rm -f "$OUT/root.img"
	mkfs.ext4 -q -F -L systest-root -d "$M" "$OUT/root.img" "${mb}M"
	chroot_down
	rm -rf "$W"
	{
		echo "IMAGE=$OUT/root.img"
		echo "KVER_6_1=$KVER_6_1"
		echo "KVER_6_12=$KVER_6_12"
		echo "OUT=$OUT"
	} >"$OUT/image.env"
	echo "$KEY" >"$OUT/.done"
	log "image built in $(($(date +%s) - start)) s"
) 9>"$OUT.lock" || exit 1

cat "$OUT/image.env"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# prepare-kernel.sh --kernel 6.1|6.12|KVER --cache DIR
#
# Makes a Debian 12 kernel usable for the QEMU tests, idempotently:
#   - installs (apt-get) qemu-system-x86, busybox-static, cpio, kmod, make
#     and the kernel's headers (linux-headers-amd64 for 6.1, the newest
#     linux-headers-6.12.*+deb12-amd64 for 6.12);
#   - downloads the kernel image package (apt-get download, not install)
#     into DIR/kernels/KVER/ and extracts its vmlinuz there.
# Prints shell assignments on stdout: KVER=, KDIR=, VMLINUZ=, IMAGE_DEB=.
# Exit 77 (with the reason on stderr) when QEMU or the kernel packages
# cannot be installed or downloaded; 1 on other errors; 2 on bad usage.
set -euo pipefail

KERNEL=
CACHE=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KERNEL=$2; shift 2 ;;
	--cache) CACHE=$2; shift 2 ;;
	*) echo "prepare-kernel: unknown argument: $1" >&2; exit 2 ;;
	esac
done
if [ -z "$KERNEL" ] || [ -z "$CACHE" ]; then
	echo "usage: prepare-kernel.sh --kernel 6.1|6.12|KVER --cache DIR" >&2
	exit 2
fi

log() { echo "prepare-kernel: $*" >&2; }
skip() { echo "SKIP: $*" >&2; exit 77; }

mkdir -p "$CACHE/kernels"
CACHE=$(cd "$CACHE" && pwd)
export DEBIAN_FRONTEND=noninteractive

APT_LOG=$CACHE/apt.log
# shellcheck source=apt.sh
. "$(dirname "$0")/apt.sh"

apt_install qemu-system-x86 busybox-static cpio kmod make ||
	skip "cannot install qemu-system-x86 busybox-static cpio kmod make"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found"

# known PKG: apt can get PKG (it has a candidate version).
known() {
	local c
	c=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	[ -n "$c" ] && [ "$c" != "(none)" ]
}

case "$KERNEL" in
6.1)
	apt_install linux-headers-amd64 || skip "cannot install linux-headers-amd64"
	KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		sed -n 's/.*linux-headers-\([^ ,]*-amd64\).*/\1/p')
	[ -n "$KVER" ] || skip "cannot tell which kernel linux-headers-amd64 is for"
	;;
6.12)
	# The newest 6.12 kernel whose headers and image are both known.
	KVER=
	for v in $(apt-cache pkgnames linux-headers-6.12. |
		   sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\)$/\1/p' |
		   sort -rV); do
		if known "linux-image-$v" || known "linux-image-$v-unsigned"; then
			KVER=$v
			break
		fi
	done
	[ -n "$KVER" ] || skip "no linux-headers-6.12.*+deb12-amd64 with an image in apt's lists"
	apt_install "linux-headers-$KVER" || skip "cannot install linux-headers-$KVER"
	;;
*)
	KVER=$KERNEL
	apt_install "linux-headers-$KVER" || skip "cannot install linux-headers-$KVER"
	;;
esac

KDIR=/usr/src/linux-headers-$KVER
[ -f "$KDIR/Makefile" ] || { log "no kernel headers in $KDIR"; exit 1; }

DIR=$CACHE/kernels/$KVER
mkdir -p "$DIR"
VMLINUZ=$DIR/vmlinuz
(
	flock -w 900 9 || { log "timed out waiting for $DIR.lock"; exit 1; }
	[ -s "$VMLINUZ" ] && exit 0
	if known "linux-image-$KVER"; then
		IMG=linux-image-$KVER
	else
		IMG=linux-image-$KVER-unsigned
	fi
	log "apt-get download $IMG"
	rm -f "$DIR"/*.deb
	# apt drops to the _apt user for downloads when it can write there.
	chmod 0777 "$DIR" 2>/dev/null || true
	(cd "$DIR" && apt-get download -q "$IMG" >"$DIR/download.log" 2>&1) ||
		(cd "$DIR" && apt-get update -q >>"$DIR/download.log" 2>&1 &&
		 apt-get download -q "$IMG" >>"$DIR/download.log" 2>&1) ||
		{ tail -n 20 "$DIR/download.log" >&2; exit 77; }
	rm -rf "$DIR/x"
	mkdir -p "$DIR/x"
	# Only the kernel itself; the .deb stays here for its modules.
	dpkg-deb --fsys-tarfile "$DIR"/"$IMG"_*.deb |
		tar -x -C "$DIR/x" --wildcards './boot/vmlinuz-*'
	mv "$DIR/x/boot/vmlinuz-$KVER" "$VMLINUZ.tmp"
	rm -rf "$DIR/x"
	mv "$VMLINUZ.tmp" "$VMLINUZ"
) 9>"$DIR.lock" || {
	rc=$?
	[ $rc = 77 ] && skip "cannot download the image package for $KVER"
	exit $rc
}

echo "KVER=$KVER"
echo "KDIR=$KDIR"
echo "VMLINUZ=$VMLINUZ"
echo "IMAGE_DEB=$(find "$DIR" -maxdepth 1 -name 'linux-image-*.deb' | head -n 1)"

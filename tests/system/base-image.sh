#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# base-image.sh --cache DIR
#
# The Debian 12 root file system the system tests boot, before keventd is
# installed: mmdebstrap --variant=apt from the machine's own Debian apt
# sources, with systemd, udevd, D-Bus, kmod, the 6.1 kernel and the newest
# 6.12 kernel Debian 12 ships (image and headers each), and DKMS.
#
# Built once and kept in DIR/base-KEY/root, KEY being a hash of the package
# list (with the 6.12 version found), the apt sources, mmdebstrap's version
# and this script; older base-* directories are removed.  The downloaded
# .debs stay in DIR/archives, so a new key downloads only what changed.
#
# Prints shell assignments on stdout: BASE= (the root directory), KVER_6_1=,
# KVER_6_12= (the two kernel releases).  Exits 77 (with the reason) when
# mmdebstrap cannot be installed or the kernels are not in apt's lists,
# 1 on other errors.
set -euo pipefail

CACHE=
while [ $# -gt 0 ]; do
	case "$1" in
	--cache) CACHE=$2; shift 2 ;;
	*) echo "base-image: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ -n "$CACHE" ] || { echo "usage: base-image.sh --cache DIR" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

log() { echo "base-image: $*" >&2; }
skip() { echo "SKIP: $*" >&2; exit 77; }

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
export DEBIAN_FRONTEND=noninteractive
APT_LOG=$CACHE/apt.log
# shellcheck source=../kernel/apt.sh
. "$HERE/../kernel/apt.sh"

[ "$(id -u)" = 0 ] || skip "the system tests build a root file system and mount it: they need root"
apt_install mmdebstrap || skip "cannot install mmdebstrap"
# what boots the image (systest.py skips, saying so, without them)
apt_install qemu-system-x86 qemu-utils || log "cannot install qemu-system-x86 qemu-utils"

# known PKG: apt can get PKG (it has a candidate version).
known() {
	local c
	c=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	[ -n "$c" ] && [ "$c" != "(none)" ]
}

# The 6.1 kernel: what linux-image-amd64 points to.
dep_of() {
	apt-cache show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Depends: .*linux-image-\([0-9][^ ,]*-amd64\).*/\1/p' | head -n 1
}
KVER_6_1=$(dep_of linux-image-amd64)
if [ -z "$KVER_6_1" ]; then
	apt-get update -q >>"$APT_LOG" 2>&1 || true
	KVER_6_1=$(dep_of linux-image-amd64)
fi
case "$KVER_6_1" in
6.1.*) ;;
*) skip "linux-image-amd64 is not a 6.1 kernel here (${KVER_6_1:-not in the apt lists})" ;;
esac
# The newest 6.12 kernel of Debian 12 with both its image and its headers
# (as tests/kernel/prepare-kernel.sh finds it).
KVER_6_12=
for v in $(apt-cache pkgnames linux-headers-6.12. |
	   sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\)$/\1/p' | sort -rV); do
	if known "linux-image-$v"; then
		KVER_6_12=$v
		break
	fi
done
[ -n "$KVER_6_12" ] || skip "no linux-image-6.12.*+deb12-amd64 with its headers in apt's lists"

# What a small Debian server with keventd has: the service manager, udevd,
# the system bus, kmod, DKMS and the two kernels with their headers (DKMS
# pulls in gcc and make).  The libraries keventd links to are here too, so
# that installing its .deb needs no network; man-db shows its man pages,
# pkg-config and dpkg-dev (DKMS's) build a rule pack; libpam-systemd
# makes a console login a logind session (the session scenario); mosquitto
# is the broker of the scenario that sends hostile text through MQTT;
# mdadm builds the software RAID the md source watches, and quota sets
# the limits whose warnings the fs source reports; prometheus-alertmanager
# and python3-aiosmtpd (an SMTP server) receive the md condition's alert
# and mail, which keventd sends through libcurl (libcurl4, recommended);
# dbus-user-session (the session bus at /run/user/UID/bus), xvfb and dunst
# are the desktop a user instance's notifications go to.
PACKAGES="systemd systemd-sysv udev dbus kmod iproute2 util-linux procps
e2fsprogs mdadm quota man-db pkg-config dkms libpam-systemd mosquitto mosquitto-clients
prometheus-alertmanager python3-aiosmtpd dbus-user-session dunst xvfb
linux-image-amd64 linux-headers-amd64 linux-image-$KVER_6_12 linux-headers-$KVER_6_12
libnl-3-200 libnl-genl-3-200 libyaml-0-2 libudev1 libsystemd0 libjson-c5 libmosquitto1 libevdev2 libcurl4"
PACKAGES=$(echo $PACKAGES | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' ')

# The machine's own Debian sources (bookworm, -updates, -security,
# -backports), one-line or deb822; anything else (third-party repositories)
# stays out of the image.
SOURCES=$CACHE/sources.list
python3 - >"$SOURCES.tmp" <<'EOF'
import glob, re
files = sorted(glob.glob("/etc/apt/sources.list") + glob.glob("/etc/apt/sources.list.d/*.list")
               + glob.glob("/etc/apt/sources.list.d/*.sources"))
ok = re.compile(r"^bookworm(-updates|-security|-backports)?$")
for f in files:
    text = open(f).read()
    if f.endswith(".sources"):
        for stanza in re.split(r"\n\s*\n", text):
            keys = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line or line[0].isspace():
                    continue
                k, v = line.split(":", 1)
                keys[k.strip().lower()] = v.strip()
            if keys.get("enabled", "yes").lower() == "no" or "deb" not in keys.get("types", "").split():
                continue
            opts = "[signed-by=%s] " % keys["signed-by"] if keys.get("signed-by", "").startswith("/") else ""
            for uri in keys.get("uris", "").split():
                for suite in keys.get("suites", "").split():
                    if ok.match(suite):
                        print("deb %s%s %s %s" % (opts, uri, suite, keys.get("components", "main")))
    else:
        for line in text.splitlines():
            m = re.match(r"^deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.+)$", line.split("#", 1)[0].strip())
            if m and ok.match(m.group(3)):
                print("deb %s%s %s %s" % (m.group(1) or "", m.group(2), m.group(3), m.group(4).strip()))
EOF
mv "$SOURCES.tmp" "$SOURCES"
[ -s "$SOURCES" ] || skip "no Debian 12 (bookworm) entry in the machine's apt sources"

KEY=$( { echo "$PACKAGES"; cat "$SOURCES"; mmdebstrap --version 2>&1; cat "$0"; } |
	sha256sum | cut -c1-16)
BASE=$CACHE/base-$KEY
(
	flock -w 1200 9 || { log "timed out waiting for $BASE.lock"; exit 1; }
	[ -e "$BASE/.done" ] && exit 0
	rm -rf "$BASE"
	mkdir -p "$BASE" "$CACHE/archives"
	log "mmdebstrap: $PACKAGES"
	start=$(date +%s)
	# The initramfs is made for a virtual machine whose root is a virtio
	# disk: MODULES=dep cannot tell which modules that is from a chroot,
	# so they are listed.  A fixed machine-id: no first-boot preset run.
	# The .debs are kept in $CACHE/archives between builds.
	# mmdebstrap hands apt a pipe as 'cat >&N', which dash parses only
	# for N < 10: descriptors inherited from the caller (ctest, flock)
	# are closed so that the pipe gets a low number.
	for fd in /proc/self/fd/*; do
		n=${fd##*/}
		[ "$n" -gt 2 ] && [ "$n" -ne 9 ] && eval "exec $n>&-"
	done 2>/dev/null || true
	if ! mmdebstrap --variant=apt --mode=root --format=directory \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$(echo "$PACKAGES" | tr ' ' ',' | sed 's/,$//')" \
		--skip=download/empty --skip=essential/unlink --skip=cleanup/apt/lists \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
		--setup-hook="sync-in $CACHE/archives /var/cache/apt/archives" \
		--essential-hook='mkdir -p "$1"/etc/initramfs-tools/conf.d' \
		--essential-hook='echo MODULES=list > "$1"/etc/initramfs-tools/conf.d/systest.conf' \
		--essential-hook='printf "%s\n" virtio_pci virtio_blk virtio_console ext4 > "$1"/etc/initramfs-tools/modules' \
		--customize-hook="sync-out /var/cache/apt/archives $CACHE/archives" \
		--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
		--customize-hook='echo systest > "$1"/etc/hostname' \
		--customize-hook='echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$1"/etc/fstab' \
		--customize-hook='echo 4b6576656e74642073797374656d0001 > "$1"/etc/machine-id' \
		bookworm "$BASE/root" "$SOURCES" >"$BASE.log" 2>&1; then
		tail -n 30 "$BASE.log" >&2
		log "mmdebstrap failed (whole log: $BASE.log)"
		exit 1
	fi
	for k in "$KVER_6_1" "$KVER_6_12"; do
		for f in "boot/vmlinuz-$k" "boot/initrd.img-$k" "usr/src/linux-headers-$k/Makefile"; do
			[ -e "$BASE/root/$f" ] || { log "not in the image: /$f"; exit 1; }
		done
	done
	log "built $BASE in $(($(date +%s) - start)) s"
	touch "$BASE/.done"
	# Only the current base is kept.
	for old in "$CACHE"/base-*; do
		[ "$old" = "$BASE" ] || [ "$old" = "$BASE.log" ] || [ "$old" = "$BASE.lock" ] ||
			rm -rf "$old"
	done
) 9>"$BASE.lock"

echo "BASE=$BASE/root"
echo "KVER_6_1=$KVER_6_1"
echo "KVER_6_12=$KVER_6_12"

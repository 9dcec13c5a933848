#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the Debian packages keventd needs, if missing.
#   deps.sh         to build and run keventd
#   deps.sh bench   also what tests/bench/run-bench.sh needs (cmocka, which
#                   a tree with the benchmark tools is configured with, and
#                   the peers it measures: acpid, busybox)
#   deps.sh test    also what the tests need (QEMU, busybox, kernel source
#                   for checkpatch, iasl, packaging tools: dpkg-dev,
#                   debhelper and dh-dkms (dpkg-buildpackage of debian/),
#                   lintian, man-db, bash-completion, systemd-analyze;
#                   for the system tests mmdebstrap, qemu-img, mkfs.ext4
#                   and debugfs; an MQTT broker and its clients, and
#                   openssl for a test CA; an SMTP server and Alertmanager;
#                   zsh and fish, whose completion is tested)
# The kernel headers and images of the QEMU tests are fetched by
# tests/kernel/prepare-kernel.sh; the system tests' Debian image is built
# by tests/system/base-image.sh.
set -eu
pkgs="build-essential cmake pkg-config libnl-3-dev libnl-genl-3-dev libyaml-dev
libudev-dev libevdev-dev libsystemd-dev libjson-c-dev libmosquitto-dev libcurl4-openssl-dev udev util-linux bsdutils"
if [ "${1:-}" = bench ]; then
	pkgs="$pkgs libcmocka-dev acpid"
	# busybox-static (the tests') serves as well, and conflicts with busybox
	command -v busybox >/dev/null || pkgs="$pkgs busybox"
fi
if [ "${1:-}" = test ]; then
	pkgs="$pkgs libcmocka-dev clang clang-format libclang-rt-14-dev valgrind python3
man-db groff-base qemu-system-x86 busybox-static cpio kmod make acpica-tools perl
linux-source-6.1 bash-completion dpkg-dev debhelper dh-dkms lintian systemd gzip dbus-daemon dbus-bin
mmdebstrap qemu-utils e2fsprogs mosquitto mosquitto-clients openssl python3-aiosmtpd
prometheus-alertmanager zsh fish dunst xvfb"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends $missing >/dev/null

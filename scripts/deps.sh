#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the Debian packages keventd needs to build and test, if missing.
set -eu
pkgs="build-essential cmake pkg-config libnl-3-dev libnl-genl-3-dev libyaml-dev
libudev-dev libcmocka-dev clang clang-format libclang-rt-14-dev valgrind udev
util-linux bsdutils python3"
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
apt-get install -y -qq --no-install-recommends $missing >/dev/null

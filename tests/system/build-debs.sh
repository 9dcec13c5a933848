#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-debs.sh --src SRC --tree DIR --out DIR
#
# The keventd .debs the system tests install, all from this source, as
# tests/ops/test_deb.py and the README build them (cpack in a tree
# configured for /usr with KEVENT_DEB=ON):
#   DEB           keventd_<version>-1: what an admin installs
#   REVISION_DEB  keventd_<version>-2: a newer build of the same version
#                 (cpack -D CPACK_DEBIAN_PACKAGE_RELEASE=2), its module the
#                 same: the upgrade over the running service
#   NEXT_DEB      keventd_<version>.1-1: a newer version, its DKMS module's
#                 too (KEVENT_PACKAGE_VERSION): the upgrade that rebuilds it
# All in one tree, so nothing is compiled twice.  Writes OUT/debs.env:
# DEB=, REVISION_DEB=, NEXT_DEB=, VERSION=, NEXT_VERSION=.
set -euo pipefail
SRC=
TREE=
OUT=
while [ $# -gt 0 ]; do
	case "$1" in
	--src) SRC=$2; shift 2 ;;
	--tree) TREE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) echo "build-debs: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ -n "$SRC" ] && [ -n "$TREE" ] && [ -n "$OUT" ] ||
	{ echo "usage: build-debs.sh --src SRC --tree DIR --out DIR" >&2; exit 2; }
for t in cmake cpack dpkg-deb dpkg-shlibdeps; do
	command -v "$t" >/dev/null ||
		{ echo "SKIP: $t is not installed (sh scripts/deps.sh test installs it)"; exit 77; }
done
# A package is built clean.
unset DESTDIR CFLAGS LDFLAGS
mkdir -p "$TREE" "$OUT"
OUT=$(cd "$OUT" && pwd)
VERSION=$(sed -n 's/^project(keventd VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ -n "$VERSION" ] || { echo "build-debs: no version in $SRC/CMakeLists.txt" >&2; exit 1; }
NEXT_VERSION=$VERSION.1

# deb VERSION DIR [CPACK ARGS]: configure for VERSION, build, cpack into DIR.
deb() {
	local v=$1 dir=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	cmake -S "$SRC" -B "$TREE" -DCMAKE_INSTALL_PREFIX=/usr -DKEVENT_DEB=ON \
		-DBUILD_TESTING=OFF -DKEVENT_SANITIZE=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DKEVENT_PACKAGE_VERSION="$v" >"$dir.log" 2>&1 &&
		cmake --build "$TREE" -j2 >>"$dir.log" 2>&1 &&
		(cd "$TREE" && cpack -G DEB -B "$dir" "$@") >>"$dir.log" 2>&1 ||
		{ tail -n 30 "$dir.log" >&2; echo "build-debs: building the $v .deb failed" >&2; exit 1; }
	ls "$dir"/keventd_"$v"-*_*.deb
}
DEB=$(deb "$VERSION" "$OUT/current")
REVISION_DEB=$(deb "$VERSION" "$OUT/revision" -D CPACK_DEBIAN_PACKAGE_RELEASE=2)
NEXT_DEB=$(deb "$NEXT_VERSION" "$OUT/next")
{
	echo "DEB=$DEB"
	echo "REVISION_DEB=$REVISION_DEB"
	echo "NEXT_DEB=$NEXT_DEB"
	echo "VERSION=$VERSION"
	echo "NEXT_VERSION=$NEXT_VERSION"
} >"$OUT/debs.env"
cat "$OUT/debs.env"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-debs.sh --src SRC --tree DIR --out DIR
#
# The Debian packages the system tests install, all from this source, as
# docs/packaging.md builds them (dpkg-buildpackage -us -uc -b of debian/,
# in a copy of the tree):
#   DEB, DKMS_DEB, DEV_DEB  keventd, kevent-dkms, keventd-dev <version>-1:
#                           what an admin installs
#   REVISION_DEB            keventd <version>-2: a newer build of the
#                           daemon alone, the upgrade over the running
#                           service (kevent-dkms stays as it is)
#   NEXT_DEB, NEXT_DKMS_DEB keventd and kevent-dkms <version>.1-1: a new
#                           version, its DKMS module's too: the upgrade
#                           that rebuilds the module
# Each newer version is a debian/changelog entry over the last, built in
# the same tree with -nc, so nothing is compiled twice.  Writes
# OUT/debs.env: those names, VERSION= and NEXT_VERSION=.
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
for t in dpkg-buildpackage dpkg-checkbuilddeps dpkg-deb dh dh_dkms tar; do
	command -v "$t" >/dev/null ||
		{ echo "SKIP: $t is not installed (sh scripts/deps.sh test installs it)"; exit 77; }
done
if ! missing=$(dpkg-checkbuilddeps "$SRC/debian/control" 2>&1); then
	echo "SKIP: build dependencies missing (sh scripts/deps.sh test installs them): $missing"
	exit 77
fi
# A package is built clean.
unset DESTDIR CFLAGS CPPFLAGS LDFLAGS MAKEFLAGS DEB_BUILD_OPTIONS
mkdir -p "$TREE" "$OUT"
TREE=$(cd "$TREE" && pwd)
OUT=$(cd "$OUT" && pwd)
FULL=$(sed -n '1s/^keventd (\([^)]*\)).*/\1/p' "$SRC/debian/changelog")
VERSION=${FULL%-*}
[ -n "$VERSION" ] || { echo "build-debs: no version in $SRC/debian/changelog" >&2; exit 1; }
NEXT_VERSION=$VERSION.1

# The files git knows, as a clean checkout has them (symlinks kept).
rm -rf "$TREE"
mkdir -p "$TREE/src"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$SRC" ls-files -z -co --exclude-standard |
		(cd "$SRC" && tar --null -T - -cf -) | tar -C "$TREE/src" -xf -
else
	tar -C "$SRC" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$TREE/src" -xf -
fi

# entry VERSION: a new first entry in debian/changelog, dated as the last
# one (the packages' contents then depend on the source alone, and the
# image that holds them is not made again for a new date)
entry() {
	local date
	date=$(dpkg-parsechangelog -l "$TREE/src/debian/changelog" -S Date)
	{
		printf 'keventd (%s) unstable; urgency=medium\n\n' "$1"
		printf '  * A newer build, for the upgrade tests.\n\n'
		printf ' -- keventd maintainers <maintainers@users.noreply.a-seed-48a12240.example>  %s\n\n' \
			"$date"
		cat "$TREE/src/debian/changelog"
	} >"$TREE/changelog" && mv "$TREE/changelog" "$TREE/src/debian/changelog"
}

# deb FULL-VERSION DIR [dpkg-buildpackage ARGS]: build, move the packages
# to DIR.  The build-time tests run in the ops tier's build; here nocheck.
deb() {
	local v=$1 dir=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	# (-nc keeps the tree, and with it the last build's list of files)
	rm -f "$TREE/src/debian/files"
	(cd "$TREE/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
		dpkg-buildpackage -us -uc -b "$@") >"$dir.log" 2>&1 ||
		{ tail -n 30 "$dir.log" >&2; echo "build-debs: building $v failed" >&2; exit 1; }
	mv "$TREE"/*_"$v"_*.deb "$dir/"
	rm -f "$TREE"/*.changes "$TREE"/*.buildinfo
}
deb "$VERSION-1" "$OUT/current"
entry "$VERSION-2"
deb "$VERSION-2" "$OUT/revision" -nc
entry "$NEXT_VERSION-1"
deb "$NEXT_VERSION-1" "$OUT/next" -nc
{
	echo "DEB=$(ls "$OUT"/current/keventd_"$VERSION"-1_*.deb)"
	echo "DKMS_DEB=$(ls "$OUT"/current/kevent-dkms_"$VERSION"-1_all.deb)"
	echo "DEV_DEB=$(ls "$OUT"/current/keventd-dev_"$VERSION"-1_all.deb)"
	echo "REVISION_DEB=$(ls "$OUT"/revision/keventd_"$VERSION"-2_*.deb)"
	echo "NEXT_DEB=$(ls "$OUT"/next/keventd_"$NEXT_VERSION"-1_*.deb)"
	echo "NEXT_DKMS_DEB=$(ls "$OUT"/next/kevent-dkms_"$NEXT_VERSION"-1_all.deb)"
	echo "VERSION=$VERSION"
	echo "NEXT_VERSION=$NEXT_VERSION"
} >"$OUT/debs.env"
cat "$OUT/debs.env"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build.sh OUTDIR: builds keventd-rules-systest_1.0_all.deb, a rule pack,
# the way docs/packaging.md ("Shipping a rule pack") says: the rule files
# go to keventd's vendor rule directory, which pkg-config names; keventctl
# verify checks them at build time; dpkg-deb builds the package.
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
rulesdir=$(pkg-config --variable=rulesdir keventd)
confdir=$(pkg-config --variable=confdir keventd)
echo "rulesdir=$rulesdir confdir=$confdir"
keventctl verify "$here"/*.yaml
root=$out/root
rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root$rulesdir"
install -m 0644 "$here"/*.yaml "$root$rulesdir/"
cat >"$root/DEBIAN/control" <<CONTROL
Package: keventd-rules-systest
Version: 1.0
Architecture: all
Maintainer: keventd maintainers <maintainers@users.noreply.a-seed-48a12240.example>
Depends: keventd
Section: admin
Priority: optional
Description: keventd rules of the system tests
 One rule in keventd's vendor rule directory, to show a rule pack at work.
CONTROL
dpkg-deb --root-owner-group --build "$root" "$out/keventd-rules-systest_1.0_all.deb"

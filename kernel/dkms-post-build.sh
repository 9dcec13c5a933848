#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# DKMS's POST_BUILD script (dkms.conf), run in the build directory after
# each build:
#   dkms-post-build.sh DEST SOURCE
# keeps, for that kernel, beside the built kevent.ko in DKMS's tree (DEST:
# /var/lib/dkms/kevent/<version>/<kernel>/<arch>, which DKMS also names
# /var/lib/dkms/kevent/kernel-<kernel>-<arch> once it is installed):
#   Module.symvers   kevent's symbols and their CRCs, for modules that call
#                    send_kevent() (KBUILD_EXTRA_SYMBOLS; see send_kevent(9))
#   include/         <linux/kevent.h> and <uapi/linux/kevent.h>, for them too
#   source.sha256    the sum of the SOURCE it was built from, so that a
#                    package upgrade rebuilds it only when that changed
# DKMS removes them with the module.
#   dkms-post-build.sh --source-sum SOURCE
# prints that sum.
set -e

# source_sum DIR: one sum of every file under DIR, names and contents.
source_sum() {
	(cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
}

if [ "$1" = --source-sum ]; then
	source_sum "$2"
	exit 0
fi
dest=$1
src=$2
if [ -z "$dest" ] || [ -z "$src" ]; then
	echo "usage: dkms-post-build.sh DEST SOURCE | --source-sum SOURCE" >&2
	exit 2
fi
mkdir -p "$dest"
cp Module.symvers "$dest/Module.symvers"
rm -rf "$dest/include"
cp -R include "$dest/include"
source_sum "$src" >"$dest/source.sha256"

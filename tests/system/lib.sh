# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by image.sh and dkms-upgrade.sh (bash): a writable chroot over
# the read-only base root file system, through an overlay.

SYSTEST_MOUNTS=()

# chroot_up BASE WORK: mounts an overlay of BASE on WORK/merged (changes go
# to WORK/upper), and proc, sys, dev, run and tmp in it; CHROOT names it.
chroot_up() {
	local base=$1 work=$2
	rm -rf "$work"
	mkdir -p "$work/upper" "$work/ovl" "$work/merged"
	CHROOT=$work/merged
	mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/ovl" \
		"$CHROOT" || return 1
	SYSTEST_MOUNTS+=("$CHROOT")
	mount -t proc proc "$CHROOT/proc" && SYSTEST_MOUNTS+=("$CHROOT/proc") &&
		mount -t sysfs sysfs "$CHROOT/sys" && SYSTEST_MOUNTS+=("$CHROOT/sys") &&
		mount --bind /dev "$CHROOT/dev" && SYSTEST_MOUNTS+=("$CHROOT/dev") &&
		mount -t tmpfs tmpfs "$CHROOT/run" && SYSTEST_MOUNTS+=("$CHROOT/run") &&
		mount -t tmpfs tmpfs "$CHROOT/tmp" && SYSTEST_MOUNTS+=("$CHROOT/tmp")
}

# chroot_down [KEEP]: unmounts what chroot_up mounted, innermost first,
# all but the first KEEP (1: the overlay stays, for mkfs.ext4 -d).
chroot_down() {
	local keep=${1:-0} i
	for ((i = ${#SYSTEST_MOUNTS[@]} - 1; i >= keep; i--)); do
		umount "${SYSTEST_MOUNTS[i]}" 2>/dev/null || umount -l "${SYSTEST_MOUNTS[i]}" ||
			true
	done
	SYSTEST_MOUNTS=("${SYSTEST_MOUNTS[@]:0:keep}")
}

# in_chroot COMMAND...: runs COMMAND in CHROOT as root, with a clean
# environment, as an admin's shell would.
in_chroot() {
	chroot "$CHROOT" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# deb_sum DEB...: a hash of what the packages hold (control files and data:
# names, modes, contents), not of their bytes: a build stamps its files with
# the time, and an image need not be made again for that.
deb_sum() {
	python3 - "$@" <<'PY'
import hashlib, io, subprocess, sys, tarfile
h = hashlib.sha256()
for deb in sys.argv[1:]:
    for part in ("--ctrl-tarfile", "--fsys-tarfile"):
        data = subprocess.run(["dpkg-deb", part, deb], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            for m in sorted(t.getmembers(), key=lambda m: m.name):
                h.update(("%s %o %s %s %s\n" % (m.name, m.mode, m.type, m.uname, m.linkname)).encode())
                if m.isfile():
                    h.update(hashlib.sha256(t.extractfile(m).read()).digest())
print(h.hexdigest()[:16])
PY
}

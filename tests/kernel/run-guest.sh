#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-guest.sh: boot a Debian 12 kernel under QEMU (TCG) with a small
# initramfs and run a guest script in it.
#
#   run-guest.sh --kernel 6.1|6.12|KVER --script GUEST_SCRIPT
#                [--module PATH]... [--kmod NAME]... [--bin FILE]...
#                [--file SRC:DEST]... [--env NAME=VALUE]...
#                [--qemu-arg ARG]... [--append ARGS]
#                [--cache DIR] [--workdir DIR] [--timeout SECONDS] [--smp N]
#
#   --kernel    6.1 (linux-headers-amd64), 6.12 (newest 6.12.*+deb12) or an
#               exact Debian kernel release; see prepare-kernel.sh
#   --module    a .ko built for that kernel, or a directory with a Kbuild
#               file: it is copied and built against the kernel's headers,
#               with KBUILD_EXTRA_SYMBOLS and KTEST_MODULE_DIRS naming the
#               modules built before it (in argument order).
#               The guest finds the modules in /ktest/modules/NAME.ko.
#   --kmod      a module of the kernel's own image package, e.g. nlmon:
#               copied (decompressed) to /ktest/modules/NAME.ko; its
#               dependencies are not
#   --bin       a program: copied to /bin/ with the shared libraries and
#               the dynamic loader that ldd lists for it
#   --file      a file or directory copied to DEST in the guest
#   --env       exported to the guest script
#   --qemu-arg  an extra QEMU argument (repeat it, one word each)
#   --append    extra kernel command line
#   --smp       number of virtual CPUs (default 1)
#   --cache     cache of kernels and module builds (default
#               ./kernel-tests/cache); shared by all tests, so each kernel
#               is downloaded, and each module built, once
#   --workdir   where the initramfs and the serial log go (default: a
#               directory under the cache's parent named after the script)
#   --timeout   seconds for the whole boot (default 240); the guest script
#               gets 30 s less
#
# A guest script asks the host for what only the machine can do (press the
# ACPI power button) with a console line "KTEST-HOST: COMMAND": the
# COMMAND goes to QEMU's human monitor (system_powerdown, ...), and the
# guest reads nothing back.
#
# The guest's /init mounts devtmpfs, proc, sysfs, debugfs and tmpfs on /tmp,
# sources /ktest/lib.sh helpers, runs the script with cwd /ktest, prints
# "KTEST-RESULT: PASS" when it exits 0 (else "KTEST-RESULT: FAIL ...")
# and powers off.  This script exits 0 if the serial log has the PASS
# marker, 1 otherwise, 77 if QEMU or the kernel cannot be installed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KERNEL=
SCRIPT=
CACHE=$PWD/kernel-tests/cache
WORKDIR=
TIMEOUT=240
SMP=1
APPEND=
MODULES=()
KMODS=()
BINS=()
FILES=()
ENVS=()
QEMU_ARGS=()

die() { echo "run-guest: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs an argument"
	case "$1" in
	--kernel) KERNEL=$2 ;;
	--script) SCRIPT=$2 ;;
	--module) MODULES+=("$2") ;;
	--kmod) KMODS+=("$2") ;;
	--bin) BINS+=("$2") ;;
	--file) FILES+=("$2") ;;
	--env) ENVS+=("$2") ;;
	--qemu-arg) QEMU_ARGS+=("$2") ;;
	--append) APPEND=$2 ;;
	--cache) CACHE=$2 ;;
	--workdir) WORKDIR=$2 ;;
	--timeout) TIMEOUT=$2 ;;
	--smp) SMP=$2 ;;
	*) echo "run-guest: unknown argument $1" >&2; exit 2 ;;
	esac
	shift 2
done
if [ -z "$KERNEL" ] || [ -z "$SCRIPT" ]; then
	echo "usage: run-guest.sh --kernel VER --script FILE [options]" >&2
	exit 2
fi
[ -f "$SCRIPT" ] || die "no such script: $SCRIPT"

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
if [ -z "$WORKDIR" ]; then
	WORKDIR=$(dirname "$CACHE")/run-$(basename "$SCRIPT" .sh)-$KERNEL
fi

# Kernel, headers, QEMU: may exit 77.
set +e
PREP=$(bash "$HERE/prepare-kernel.sh" --kernel "$KERNEL" --cache "$CACHE")
rc=$?
set -e
[ $rc = 0 ] || exit $rc
eval "$PREP"
echo "run-guest: kernel $KVER, headers $KDIR"

rm -rf "$WORKDIR"
mkdir -p "$WORKDIR"
WORKDIR=$(cd "$WORKDIR" && pwd)
ROOT=$WORKDIR/root
mkdir -p "$ROOT"/{bin,sbin,dev,proc,sys,tmp,run,etc,ktest/modules}

# Modules.  A module built from source sees the symbols (Module.symvers)
# and, through KTEST_MODULE_DIRS, the source directories of those built
# before it, so a caller of kevent.ko can be built after it.  Builds are
# cached per kernel, keyed by the sources, so tests share them.

# source_hash DIR: hash of the sources in DIR, build products left out.
source_hash() {
	(cd "$1" && find . -type f ! -name '*.o' ! -name '*.ko' ! -name '*.mod' \
		! -name '*.mod.c' ! -name '.*.cmd' ! -name '*.d' \
		! -name Module.symvers ! -name modules.order -print0 |
		LC_ALL=C sort -z | xargs -0 -r sha256sum) |
		sha256sum | cut -c1-16
}

SYMVERS=
SRCDIRS=
for m in "${MODULES[@]}"; do
	if [ -d "$m" ]; then
		m=$(cd "$m" && pwd)
		key=$(printf '%s\n' "$(source_hash "$m")" "$KVER" "$SYMVERS" "$SRCDIRS" |
			sha256sum | cut -c1-16)
		B=$CACHE/kernels/$KVER/modules/$(basename "$m")-$key
		mkdir -p "$(dirname "$B")"
		(
			flock -w 600 9 || die "timed out waiting for $B.lock"
			[ -e "$B/.built" ] && exit 0
			echo "run-guest: building $m against $KVER"
			rm -rf "$B"
			cp -r "$m" "$B"
			make -s -C "$KDIR" M="$B" clean >/dev/null 2>&1 || true
			make -C "$KDIR" M="$B" KBUILD_EXTRA_SYMBOLS="$SYMVERS" \
				KTEST_MODULE_DIRS="$SRCDIRS" modules >"$B.log" 2>&1 ||
				{ cat "$B.log" >&2; rm -rf "$B"; die "module build failed: $m"; }
			grep -iE 'warning|error' "$B.log" >&2 || true
			touch "$B/.built"
		) 9>"$B.lock" || exit 1
		echo "run-guest: module $(basename "$m") for $KVER: $B"
		SYMVERS="${SYMVERS:+$SYMVERS }$B/Module.symvers"
		SRCDIRS="${SRCDIRS:+$SRCDIRS }$m"
		cp "$B"/*.ko "$ROOT/ktest/modules/"
	elif [ -f "$m" ]; then
		cp "$m" "$ROOT/ktest/modules/"
	else
		die "no such module: $m"
	fi
done

# The kernel's own modules, from its image package; cached per kernel.
for k in "${KMODS[@]}"; do
	[ -n "${IMAGE_DEB:-}" ] || die "no image package for $KVER: cannot take --kmod $k"
	K=$CACHE/kernels/$KVER/kmod/$k.ko
	if [ ! -s "$K" ]; then
		mkdir -p "$(dirname "$K")"
		f=$(dpkg-deb -c "$IMAGE_DEB" | grep -o "\./lib/modules/.*/$k\.ko\(\.xz\)\?$" |
			head -n 1)
		[ -n "$f" ] || die "no module $k in $IMAGE_DEB"
		dpkg-deb --fsys-tarfile "$IMAGE_DEB" | tar -x -O "$f" >"$K.tmp"
		case $f in
		*.xz) xz -d <"$K.tmp" >"$K.tmp2" && mv "$K.tmp2" "$K.tmp" ;;
		esac
		mv "$K.tmp" "$K"
	fi
	cp "$K" "$ROOT/ktest/modules/$k.ko"
done

# copy_libs FILE: the shared libraries and the loader FILE needs.
copy_libs() {
	local lib
	for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' || true); do
		[ -e "$ROOT$lib" ] && continue
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -L "$lib" "$ROOT$lib"
	done
}

BUSYBOX=$(command -v busybox || echo /bin/busybox)
ldd "$BUSYBOX" 2>&1 | grep -q '=>' &&
	die "$BUSYBOX is not static (install busybox-static)"
cp "$BUSYBOX" "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
for b in "${BINS[@]}"; do
	[ -f "$b" ] || die "no such program: $b"
	cp -L "$b" "$ROOT/bin/"
	copy_libs "$b"
done
for f in "${FILES[@]}"; do
	src=${f%%:*}
	dst=${f#*:}
	if [ ! -e "$src" ] || [ "$dst" = "$f" ]; then
		die "bad --file $f (SRC:DEST)"
	fi
	mkdir -p "$ROOT$(dirname "$dst")"
	cp -rL "$src" "$ROOT$dst"
	# Programs among the files get their libraries too.
	find "$ROOT$dst" -type f -perm -u+x | while read -r x; do
		if [ "$(head -c 4 "$x" | tail -c 3)" = ELF ]; then
			copy_libs "$x"
		fi
	done
done

cp "$HERE/guest-init.sh" "$ROOT/init"
cp "$HERE/guest-lib.sh" "$ROOT/ktest/lib.sh"
cp "$SCRIPT" "$ROOT/ktest/script.sh"
chmod 0755 "$ROOT/init" "$ROOT/ktest/script.sh"
{
	echo "export KTEST_KERNEL='$KERNEL' KTEST_KVER='$KVER'"
	echo "export KTEST_GUEST_TIMEOUT=$((TIMEOUT > 60 ? TIMEOUT - 30 : TIMEOUT / 2))"
	for e in "${ENVS[@]}"; do
		printf 'export %q\n' "$e"
	done
} >"$ROOT/ktest/env"

(cd "$ROOT" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
	>"$WORKDIR/initramfs.cpio"
echo "run-guest: initramfs $(du -h "$WORKDIR/initramfs.cpio" | cut -f1)," \
	"serial log in $WORKDIR/serial.log"

LOG=$WORKDIR/serial.log
# the monitor's socket: a short path (sun_path holds 108 bytes)
MONITOR=$(mktemp -u /tmp/ktest-monitor.XXXXXX)
trap 'rm -f "$MONITOR"' EXIT

# host_requests: copies the console through, without its carriage returns
# and a line at a time (as the guest writes it: a request must reach the
# monitor while the guest runs), and sends each KTEST-HOST command to the
# monitor.
host_requests() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line//$'\r'/}
		printf '%s\n' "$line"
		case "$line" in
		KTEST-HOST:\ *)
			python3 - "$MONITOR" "${line#KTEST-HOST: }" <<-'PY' >&2 ||
				import socket, sys
				# the banner and its prompt, the command, and the prompt
				# after it: the command has been run (<<- takes the tabs
				# off; what is left of the indentation is spaces)
				s = socket.socket(socket.AF_UNIX)
				s.settimeout(10)
				s.connect(sys.argv[1])
				def prompt():
				    buf = b""
				    while b"(qemu)" not in buf:
				        chunk = s.recv(4096)
				        if not chunk:
				            raise SystemExit("monitor closed")
				        buf += chunk
				prompt()
				s.sendall(sys.argv[2].encode() + b"\n")
				prompt()
				s.close()
			PY
				echo "run-guest: cannot send '${line#KTEST-HOST: }' to the monitor" >&2
			;;
		esac
	done
}

start=$(date +%s.%N)
set +e
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 512 -smp "$SMP" \
	-nographic -no-reboot -nodefaults -serial stdio \
	-monitor "unix:$MONITOR,server=on,wait=off" \
	-kernel "$VMLINUZ" -initrd "$WORKDIR/initramfs.cpio" \
	-append "console=ttyS0 quiet panic=-1 $APPEND" \
	"${QEMU_ARGS[@]}" </dev/null 2>&1 | host_requests | tee "$LOG"
qrc=${PIPESTATUS[0]}
set -e
end=$(date +%s.%N)
wall=$(echo "$start $end" | awk '{ printf "%.1f", $2 - $1 }')
echo "KTEST-TIME kernel=$KVER wall=${wall}s qemu_exit=$qrc"

if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "run-guest: FAIL: QEMU did not finish within ${TIMEOUT}s" >&2
	exit 1
fi
if grep -q '^KTEST-RESULT: PASS' "$LOG" && ! grep -q '^KTEST-FAIL' "$LOG"; then
	echo "run-guest: PASS ($KVER)"
	exit 0
fi
grep -E '^KTEST-(FAIL|RESULT)|Kernel panic|BUG:|WARNING:' "$LOG" >&2 || true
echo "run-guest: FAIL ($KVER)" >&2
exit 1

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The md source's figures, by hand, beside mdadm's own monitor, in one
guest of the system tier (Debian 12 under QEMU/TCG, the image that
tests/system/image.sh built, a RAID1 array on two hot-plugged disks):
  - mdadm --fail -> handler start, for keventd's rule (failed-device) and
    for `mdadm --monitor --program` (its Fail event), p50/p99 over
    FAILURES failures, each followed by a fast rebuild;
  - progress events seen of the 9 a rebuild has (10 % ... 90 %), keventd's
    progress and mdadm's Rebuild10 ... Rebuild90 (--increment 10, its
    default --delay of 60 s), over REBUILDS rebuilds held at 2 MB/s.
Both handlers write the guest's clock; mdadm's monitor runs as a packaged
system runs it (its own mdmonitor.service stopped: one monitor only).
Each failure comes once keventd's queue is empty: the rebuild before it
makes a dozen events of the same object, whose handlers (under TCG, a
few hundred ms each) would otherwise run first.
Usage (as root, under the qemu lock, from the tree):
  flock /tmp/keventd-qemu.lock tests/bench/md-bench.py --kernel 6.1 \\
      --image-env build/system-tests/image/image.env \\
      --debs-env build/system-tests/debs/debs.env \\
      --ssdt build/system-tests/tz.aml --workdir build/system-tests/md-bench
MD_BENCH_FAILURES (default 20) and MD_BENCH_REBUILDS (default 10)."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "system"))
import systest  # noqa: E402
from systest import Fail  # noqa: E402

KERNELS = ("6.1", "6.12")
FAILURES = int(os.environ.get("MD_BENCH_FAILURES", "20"))
REBUILDS = int(os.environ.get("MD_BENCH_REBUILDS", "10"))
DISK_MB = 32
SLOW = 2000  # KiB/s: a rebuild of some 16 s, each step 1.6 s apart

SETUP = r"""
set -e
systemctl mask --now mdmonitor.service mdmonitor-oneshot.timer >/dev/null 2>&1 || true
mkdir -p /run/mdbench
cat > /usr/local/bin/md-bench-k <<'EOF'
#!/bin/sh
echo "$(date +%s.%N) $KEVENT_SIGNAL $KEVENT_PERCENT" >> /run/mdbench/keventd
EOF
cat > /usr/local/bin/md-bench-m <<'EOF'
#!/bin/sh
echo "$(date +%s.%N) $1 $3" >> /run/mdbench/mdadm
EOF
chmod 755 /usr/local/bin/md-bench-k /usr/local/bin/md-bench-m
cat > /etc/keventd/rules.d/99-md-bench.yaml <<'EOF'
rules:
  - name: md-bench
    match: {source: md, signal: [failed-device, progress]}
    run: [/usr/local/bin/md-bench-k]
EOF
systemctl reload keventd
modprobe raid1
mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --bitmap=none --assume-clean \
    /dev/{B} /dev/{C} </dev/null
mdadm --monitor --daemonise --pid-file /run/mdbench/mdadm.pid --increment 10 \
    --program /usr/local/bin/md-bench-m /dev/md0 >/dev/null
"""


def percentile(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def lines(vm, who):
    out = vm.sh("cat /run/mdbench/%s 2>/dev/null || true" % who)
    return [ln.split() for ln in out.splitlines() if ln.strip()]


def drained(vm):
    """Waits until keventd runs and queues nothing: a rebuild's events (its
    steps, their handlers) are handled before the next failure, whose
    event would otherwise wait behind them (one object, one at a time)."""
    deadline = time.monotonic() + 120
    while True:
        q = vm.keventctl_status().get("queue", {})
        if q.get("pending") == 0 and q.get("running") == 0:
            return
        if time.monotonic() > deadline:
            raise Fail("expected keventd's queue to drain within 120 s: %r" % q)
        time.sleep(0.2)


def rebuild(vm, c, speed):
    vm.sh("echo %d > /proc/sys/dev/raid/speed_limit_max && "
          "echo %d > /proc/sys/dev/raid/speed_limit_min" % (speed, min(speed // 2, 1000)))
    vm.sh("mdadm /dev/md0 --remove /dev/%s && mdadm --zero-superblock /dev/%s && "
          "mdadm /dev/md0 --add /dev/%s" % (c, c, c))
    vm.sh("mdadm --wait /dev/md0 || true", timeout=600)
    vm.wait("grep -q '\\[UU\\]' /proc/mdstat", 60, "md0 whole again")
    drained(vm)


def run(vm):
    disks = []
    for i in range(2):
        img = os.path.join(vm.workdir, "bench-md%d.img" % i)
        subprocess.run(["truncate", "-s", "0", img], check=True)
        subprocess.run(["truncate", "-s", "%dM" % DISK_MB, img], check=True)
        vm.qmp.cmd("blockdev-add", driver="raw", **{"node-name": "bmd%d" % i},
                   file={"driver": "file", "filename": img})
        vm.qmp.cmd("device_add", driver="virtio-blk-pci", id="bmddisk%d" % i,
                   drive="bmd%d" % i, serial="KEVENT-MDB-%d" % i)
        vm.wait("test -b /dev/disk/by-id/virtio-KEVENT-MDB-%d" % i, 60, "bench disk %d" % i)
        disks.append(vm.sh("basename $(readlink -f /dev/disk/by-id/virtio-KEVENT-MDB-%d)"
                           % i).strip())
    b, c = disks
    vm.sh(SETUP.replace("{B}", b).replace("{C}", c), timeout=120)
    time.sleep(2)  # a benchmark: the reload and the monitor settle, not a synchronisation
    drained(vm)

    lat = {"keventd": [], "mdadm": []}
    for i in range(FAILURES):
        vm.sh(": > /run/mdbench/keventd; : > /run/mdbench/mdadm")
        t0 = float(vm.sh("t=$(date +%%s.%%N); mdadm /dev/md0 --fail /dev/%s >/dev/null 2>&1; "
                         "echo $t" % c).strip())
        vm.wait("grep -q failed-device /run/mdbench/keventd && "
                "grep -q '^[0-9.]* Fail ' /run/mdbench/mdadm", 120, "both monitors' Fail")
        for who, word in (("keventd", "failed-device"), ("mdadm", "Fail")):
            t = min(float(f[0]) for f in lines(vm, who) if f[1] == word)
            lat[who].append((t - t0) * 1000)
        rebuild(vm, c, 200000)
    for who in ("keventd", "mdadm"):
        v = lat[who]
        vm.figure("md fail -> handler start, %s, ms (%d failures, %s)" % (who, len(v), vm.kver),
                  "p50 %.1f p99 %.1f max %.1f" % (percentile(v, 50), percentile(v, 99), max(v)))

    seen = {"keventd": [], "mdadm": []}
    for i in range(REBUILDS):
        vm.sh("mdadm /dev/md0 --fail /dev/%s >/dev/null 2>&1" % c)
        vm.wait("grep -q failed-device /run/mdbench/keventd", 60, "keventd's failed-device")
        vm.sh(": > /run/mdbench/keventd; : > /run/mdbench/mdadm")
        rebuild(vm, c, SLOW)
        time.sleep(2)  # a benchmark: mdadm's monitor sees the end too
        seen["keventd"].append(len({f[2] for f in lines(vm, "keventd")
                                    if f[1] == "progress" and len(f) > 2}))
        seen["mdadm"].append(len({f[1] for f in lines(vm, "mdadm")
                                  if f[1] in ["Rebuild%d" % p for p in range(10, 100, 10)]}))
    for who in ("keventd", "mdadm"):
        vm.figure("md progress events seen, %s (%d rebuilds of %d MB at %d KiB/s, %s)"
                  % (who, REBUILDS, DISK_MB, SLOW, vm.kver),
                  "%d of %d (per rebuild %s)" % (sum(seen[who]), 9 * REBUILDS,
                                                 " ".join(map(str, seen[who]))))
    vm.sh("kill $(cat /run/mdbench/mdadm.pid) || true; mdadm --stop /dev/md0; "
          "rm -f /etc/keventd/rules.d/99-md-bench.yaml; systemctl reload keventd")


if __name__ == "__main__":
    mod = sys.modules[__name__]
    mod.__doc__ = "md-bench: keventd's md source beside mdadm --monitor\n" + (__doc__ or "")
    systest.load_scenarios = lambda: [("md_bench", mod)]
    sys.argv.append("md_bench")
    sys.exit(systest.main())

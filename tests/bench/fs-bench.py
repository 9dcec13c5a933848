#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The fs source's figures, by hand, as root (loop mounts):
  - space-low crossing -> handler start, p50/p99, under a writer at full
    speed (a loop-mounted ext4, 1 MiB writes, no fsync: the space goes at
    write() time);
  - a writer's throughput with keventd's fs source on and off (dd to a
    loop-mounted ext4, conv=fdatasync), their ratio;
  - keventd's wake-ups per minute with N idle watched file systems
    (voluntary + involuntary context switches of /proc/PID/status).
Usage: tests/bench/fs-bench.py BUILD_DIR [ROUNDS] [IDLE_SECONDS] [N_FS]
FS_BENCH_ONLY=latency|throughput|idle runs one of them; FS_BENCH_SOURCES=socket
measures the idle baseline without the fs source."""
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
IDLE = int(sys.argv[3]) if len(sys.argv) > 3 else 120
NFS = int(sys.argv[4]) if len(sys.argv) > 4 else 10
KEVENTD = os.path.join(BUILD, "keventd", "keventd")
MB = 1 << 20


def sh(*a):
    subprocess.run(a, check=True, capture_output=True)


class Bench:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kevent-fsbench-")
        self.mounts = []
        self.d = None

    def image(self, name, mb):
        img = os.path.join(self.dir, name + ".img")
        with open(img, "wb") as f:
            f.truncate(mb * MB)
        sh("mkfs.ext4", "-q", "-F", "-m", "0", img)
        mnt = os.path.join(self.dir, name)
        os.mkdir(mnt)
        sh("mount", "-o", "loop", img, mnt)
        self.mounts.append(mnt)
        return mnt

    def start(self, sources="fs,socket", conf="fs: {space_low: 50%, space_critical: 1%}\n"):
        rules = os.path.join(self.dir, "rules")
        os.makedirs(rules, exist_ok=True)
        self.fifo = os.path.join(self.dir, "fifo")
        if not os.path.exists(self.fifo):
            os.mkfifo(self.fifo)
        self.fr = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.fw = os.open(self.fifo, os.O_WRONLY)
        h = os.path.join(self.dir, "h.sh")
        with open(h, "w") as f:
            f.write("#!/bin/sh\necho \"$(date +%%s.%%N) $KEVENT_SIGNAL $KEVENT_OBJECT\" > %s\n"
                    % self.fifo)
        os.chmod(h, 0o755)
        with open(os.path.join(rules, "fs.yaml"), "w") as f:
            f.write("rules:\n  - name: fs\n    match: {source: fs, type: fs}\n"
                    "    run: [%s]\n" % h)
        c = os.path.join(self.dir, "keventd.yaml")
        with open(c, "w") as f:
            f.write(conf)
        self.d = subprocess.Popen([KEVENTD, "--sources", sources, "--config", c,
                                   "--rules-dir", rules, "--control",
                                   os.path.join(self.dir, "ctl")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1)  # a benchmark: settle, not a synchronisation

    def stop(self):
        if self.d:
            self.d.terminate()
            self.d.wait()
            self.d = None
            os.close(self.fr)
            os.close(self.fw)

    def line(self, timeout=10):
        buf = b""
        end = time.monotonic() + timeout
        while not buf.endswith(b"\n"):
            r, _, _ = select.select([self.fr], [], [], max(0, end - time.monotonic()))
            if not r:
                return None
            buf += os.read(self.fr, 4096)
        return buf.decode()

    def cleanup(self):
        self.stop()
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def latency(b):
    mnt = b.image("lat", 256)
    b.start()
    out = []
    for _ in range(ROUNDS):
        st = os.statvfs(mnt)
        line_bytes = st.f_blocks * st.f_frsize // 2
        crossed = None
        with open(os.path.join(mnt, "fill"), "wb", buffering=0) as f:
            chunk = b"\0" * MB
            while True:
                f.write(chunk)
                s = os.statvfs(mnt)
                if crossed is None and s.f_bavail * s.f_frsize < line_bytes:
                    crossed = time.time()
                    break
        l = b.line()
        while l and "space-low" not in l:
            l = b.line()
        if l and crossed:
            out.append(float(l.split()[0]) - crossed)
        os.unlink(os.path.join(mnt, "fill"))
        os.sync()
        l = b.line(70)  # space-ok
        while l and "space-ok" not in l:
            l = b.line(70)
    b.stop()
    print("crossing -> handler start: n=%d p50=%.0f ms p99=%.0f ms max=%.0f ms"
          % (len(out), pct(out, 50) * 1e3, pct(out, 99) * 1e3, max(out) * 1e3))


def throughput(b):
    mnt = b.image("tp", 1200)

    def dd():
        t = time.monotonic()
        sh("dd", "if=/dev/zero", "of=" + os.path.join(mnt, "x"), "bs=1M", "count=1024",
           "conv=fdatasync")
        r = 1024 / (time.monotonic() - t)
        os.unlink(os.path.join(mnt, "x"))
        os.sync()
        return r
    on, off = [], []
    for _ in range(5):
        off.append(dd())
        b.start()
        on.append(dd())
        b.stop()
    print("dd MiB/s off: %s; on: %s; ratio of medians %.3f"
          % (["%.0f" % x for x in off], ["%.0f" % x for x in on],
             sorted(on)[2] / sorted(off)[2]))


def idle(b):
    for i in range(NFS):
        b.image("idle%d" % i, 32)
    # the machine's root file system is left out: other work writes to it
    src = os.environ.get("FS_BENCH_SOURCES", "fs,socket")  # socket: the baseline
    b.start(sources=src,
            conf="fs: {/: {space_low: off, space_critical: off, inodes_low: off}}\n")

    def switches():
        n = 0
        with open("/proc/%d/status" % b.d.pid) as f:
            for l in f:
                if l.endswith("ctxt_switches:\t" + l.split("\t")[-1]) and "ctxt" in l:
                    n += int(l.split()[1])
        return n
    a = switches()
    time.sleep(IDLE)
    z = switches()
    b.stop()
    print("idle, --sources %s, %d loop-mounted file systems: %d context switches in %d s = "
          "%.1f a minute" % (src, NFS, z - a, IDLE, (z - a) * 60 / IDLE))


if __name__ == "__main__":
    b = Bench()
    only = os.environ.get("FS_BENCH_ONLY")
    try:
        for f in (latency, throughput, idle):
            if not only or only == f.__name__:
                f(b)
    finally:
        b.cleanup()

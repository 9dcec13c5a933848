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
import resource
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
    """dd to a watched ext4 with keventd's fs source on and with no keventd,
    alternating (off then on, then on then off).  The image is twice the
    write, so each write crosses space_low (60%) near its end, where keventd
    looks at its closest (every 50 ms).  The image is
    on tmpfs (FS_BENCH_TP_DIR, default /dev/shm), so that a disk shared
    with other work does not set the pace: the writer is bound by the CPU
    and memory, where keventd's own cost would show."""
    rounds = int(os.environ.get("FS_BENCH_TP_ROUNDS", "21"))
    mb = int(os.environ.get("FS_BENCH_TP_MB", "1024"))
    back = tempfile.mkdtemp(prefix="kevent-fsbench-tp-",
                            dir=os.environ.get("FS_BENCH_TP_DIR", "/dev/shm"))
    try:
        img = os.path.join(back, "tp.img")
        with open(img, "wb") as f:
            f.truncate(2 * mb * MB)
        sh("mkfs.ext4", "-q", "-F", "-m", "0", img)
        mnt = os.path.join(b.dir, "tp")
        os.mkdir(mnt)
        sh("mount", "-o", "loop", img, mnt)
        b.mounts.append(mnt)
        tp_rounds(b, mnt, mb, rounds)
    finally:
        b.stop()
        for m in [m for m in b.mounts if m.endswith("/tp")]:
            subprocess.run(["umount", m], capture_output=True)
            b.mounts.remove(m)
        shutil.rmtree(back, ignore_errors=True)


def cpu_of(pid):
    """utime + stime of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def tp_rounds(b, mnt, mb, rounds):
    """Each write's wall-clock rate, and the writer's own CPU time (user +
    system, from getrusage of the finished dd): the wall clock follows
    whatever else the machine runs, the CPU time is what the write path
    cost dd, keventd's fanotify marks included.  keventd's own CPU time
    during the write is measured too."""
    def dd():
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        sh("dd", "if=/dev/zero", "of=" + os.path.join(mnt, "x"), "bs=1M", "count=%d" % mb,
           "conv=fdatasync")
        wall = time.monotonic() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        os.unlink(os.path.join(mnt, "x"))
        os.sync()
        return mb / wall, cpu

    def with_keventd():
        b.start(conf="fs: {space_low: 60%, space_critical: 1%}\n")
        k0 = cpu_of(b.d.pid)
        r = dd()
        crossed = b.line(5)
        k1 = cpu_of(b.d.pid)
        b.stop()
        if not crossed or "space-low" not in crossed:
            raise SystemExit("keventd did not report the crossing: %r" % crossed)
        return r, k1 - k0
    on, off, kcpu = [], [], []
    for i in range(rounds):
        if i % 2 == 0:
            x = dd()
            y, k = with_keventd()
        else:
            y, k = with_keventd()
            x = dd()
        off.append(x)
        on.append(y)
        kcpu.append(k)
    med = lambda v: pct(v, 50)
    print("dd %d MiB to a watched ext4 on tmpfs, %d rounds alternating" % (mb, rounds))
    for name, i in (("MiB/s (wall clock)", 0), ("dd CPU s (user+sys)", 1)):
        print("  %s off: %s" % (name, " ".join("%.2f" % r[i] if i else "%.0f" % r[i]
                                              for r in off)))
        print("  %s on:  %s" % (name, " ".join("%.2f" % r[i] if i else "%.0f" % r[i]
                                              for r in on)))
    wall_off, wall_on = med([r[0] for r in off]), med([r[0] for r in on])
    cpu_off, cpu_on = med([r[1] for r in off]), med([r[1] for r in on])
    print("wall clock: median off %.0f, on %.0f MiB/s: ratio %.3f; rounds' ratios p25/50/75 "
          "%.3f %.3f %.3f" % (wall_off, wall_on, wall_on / wall_off,
                              *(pct([y[0] / x[0] for x, y in zip(off, on)], p)
                                for p in (25, 50, 75))))
    print("writer's CPU: median off %.3f s, on %.3f s: throughput per CPU second on/off %.3f"
          % (cpu_off, cpu_on, cpu_off / cpu_on))
    print("keventd's CPU during a write: median %.3f s, max %.3f s"
          % (med(kcpu), max(kcpu)))


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

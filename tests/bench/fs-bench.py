#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The fs source's figures, by hand, as root (loop mounts):
  - space-low crossing -> handler start, p50/p99, under a writer at full
    speed (a loop-mounted ext4, 1 MiB writes, no fsync: the space goes at
    write() time);
  - a file-system error (ext4's trigger_fs_error) -> handler start,
    p50/p99;
  - a writer's throughput with keventd's fs source on and off (dd to a
    loop-mounted ext4, conv=fdatasync), their ratio, beside keventd
    without the fs source and the fs source without its fanotify marks;
  - keventd's wake-ups per minute with N idle watched file systems
    (voluntary + involuntary context switches of /proc/PID/status).
Usage: tests/bench/fs-bench.py BUILD_DIR [ROUNDS] [IDLE_SECONDS] [N_FS]
FS_BENCH_ONLY=latency|error|throughput|idle runs one of them; FS_BENCH_SOURCES=socket
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

    def image(self, name, mb, opts="loop"):
        img = os.path.join(self.dir, name + ".img")
        with open(img, "wb") as f:
            f.truncate(mb * MB)
        sh("mkfs.ext4", "-q", "-F", "-m", "0", img)
        mnt = os.path.join(self.dir, name)
        os.mkdir(mnt)
        sh("mount", "-o", opts, img, mnt)
        self.mounts.append(mnt)
        return mnt

    def start(self, sources="fs,socket", conf="fs: {space_low: 50%, space_critical: 1%}\n",
              wrap=()):
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
        self.d = subprocess.Popen([*wrap, KEVENTD, "--sources", sources, "--config", c,
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


def error(b):
    """A file-system error -> handler start, p50/p99: ext4's
    trigger_fs_error (errors=continue, so the file system stays as it is)
    written ROUNDS times, 1.5 s apart (after an error keventd reads the
    mount table again over the next second); the clock is taken just
    before the write, the handler's date at its start."""
    mnt = b.image("err", 32, "loop,errors=continue")
    with open("/proc/self/mountinfo") as f:
        dev = [l.split()[2] for l in f if l.split()[4] == mnt][-1]
    name = os.path.basename(os.path.realpath("/sys/dev/block/" + dev))
    trig = "/sys/fs/ext4/%s/trigger_fs_error" % name
    if not os.path.exists(trig):
        print("error: no %s, not measured" % trig)
        return
    b.start(conf="fs: {space_low: off, space_critical: off, inodes_low: off}\n")
    out = []
    for _ in range(ROUNDS):
        time.sleep(1.5)  # a benchmark's pace, not a synchronisation
        while b.line(0):
            pass
        t = time.time()
        with open(trig, "w") as f:
            f.write("bench")
        hit = None
        while not hit:
            l = b.line()
            if not l:
                break
            hit = [e for e in l.splitlines() if e.split()[1:] == ["error", "/org/kernel/fs" + mnt]]
        if hit:
            out.append(float(hit[0].split()[0]) - t)
    b.stop()
    print("error -> handler start: n=%d p50=%.0f ms p99=%.0f ms max=%.0f ms"
          % (len(out), pct(out, 50) * 1e3, pct(out, 99) * 1e3, max(out) * 1e3))


def throughput(b):
    """dd to a watched ext4 under four settings, their rounds in a random
    order: no keventd ("off"), keventd without the fs source ("socket"),
    keventd's fs source without its fanotify marks ("nomark": keventd run
    without CAP_SYS_ADMIN, so that fanotify_mark(FAN_MARK_FILESYSTEM)
    fails and the space is looked at by time alone) and the fs source as
    shipped ("fs").  The image is twice the write, so each write crosses
    space_low (60%) near its end, where keventd looks at its closest
    (every 50 ms).  The image is on tmpfs (FS_BENCH_TP_DIR, default
    /dev/shm), so that a disk shared with other work does not set the
    pace: the writer is bound by the CPU and memory, where keventd's own
    cost would show.  FS_BENCH_TP_SETTINGS picks some of the four
    (comma-separated, the first is the base of the ratios)."""
    rounds = int(os.environ.get("FS_BENCH_TP_ROUNDS", "21"))
    mb = int(os.environ.get("FS_BENCH_TP_MB", "1024"))
    settings = os.environ.get("FS_BENCH_TP_SETTINGS", "off,socket,nomark,fs").split(",")
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
        tp_rounds(b, mnt, mb, rounds, settings)
    finally:
        b.stop()
        for m in [m for m in b.mounts if m.endswith("/tp")]:
            subprocess.run(["umount", m], capture_output=True)
            b.mounts.remove(m)
        shutil.rmtree(back, ignore_errors=True)


def cpu_of(pid):
    """A process's time on a CPU, in seconds, to the nanosecond (the sum of
    its threads' /proc/PID/task/TID/schedstat)."""
    ns = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
            ns += int(f.read().split()[0])
    return ns / 1e9


REPORTED = "/sys/module/page_reporting/parameters/reported_kib"


def reported_mib():
    """What the guest kernel has handed back to the hypervisor so far
    (free page reporting), where the kernel says: None elsewhere."""
    try:
        with open(REPORTED) as f:
            return int(f.read()) / 1024
    except OSError:
        return None


def tp_rounds(b, mnt, mb, rounds, settings):
    """Each write's wall-clock rate, and the writer's own CPU time (user +
    system, from getrusage of the finished dd): the wall clock follows
    whatever else the machine runs, the CPU time is what the write path
    cost dd, keventd's fanotify marks included.  keventd's own CPU time
    during the write is measured too.

    Every round starts keventd (or not) and waits as long in every
    setting (1 s, the start's settle, and FS_BENCH_TP_SETTLE more, default
    3 s), frees the previous round's file (unlink, sync) and writes
    FS_BENCH_TP_GAP seconds after (default 0).  In a virtual machine with
    free page reporting (virtio-balloon) the guest hands memory that is
    free back to the hypervisor, about 2 s after a free wakes the
    reporting, and the next write to touch it pays to have it faulted in
    again: several times the writer's CPU.  The wait lets the reporting
    that a process's start and exit woke run before the write, the free
    just before the write gives the write memory it can reuse, and the
    MiB handed back during each write (the kernel's reported_kib, where
    it has one) are printed beside it, so that a round where the
    reporting still ran is seen.
    """
    import random
    gap = float(os.environ.get("FS_BENCH_TP_GAP", "0"))
    settle = float(os.environ.get("FS_BENCH_TP_SETTLE", "3"))
    x = os.path.join(mnt, "x")

    def dd():
        if os.path.exists(x):
            os.unlink(x)
        os.sync()
        m0 = reported_mib()
        if gap:
            time.sleep(gap)  # a benchmark's condition, not a synchronisation
        m1 = reported_mib()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        sh("dd", "if=/dev/zero", "of=" + x, "bs=1M", "count=%d" % mb, "conv=fdatasync")
        wall = time.monotonic() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        m2 = reported_mib()
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return mb / wall, cpu, (m2 - m1) if m0 is not None else -1

    conf = "fs: {space_low: 60%, space_critical: 1%}\n"

    def one(setting):
        if setting == "off":
            time.sleep(1 + settle)  # as long as keventd's start, below
            return dd(), 0.0
        if setting == "socket":
            b.start(sources="socket", conf=conf)
        elif setting == "nomark":
            b.start(conf=conf, wrap=["setpriv", "--inh-caps=-sys_admin",
                                     "--bounding-set=-sys_admin"])
        else:
            b.start(conf=conf)
        time.sleep(settle)  # a benchmark's condition, not a synchronisation
        k0 = cpu_of(b.d.pid)
        r = dd()
        k1 = cpu_of(b.d.pid)
        # keventd started on the previous write's file: space-low (Initial),
        # then space-ok once it is freed, then this write's space-low
        ok, seen = False, []
        while setting == "fs" and not (ok and seen and "space-low" in seen[-1]):
            l = b.line(5)
            if not l:
                raise SystemExit("keventd did not report the crossing: %r" % seen)
            for e in l.splitlines():
                if e.endswith(mnt):
                    seen.append(e)
                    ok = ok or "space-ok" in e
        b.stop()
        return r, k1 - k0
    seed = int(os.environ.get("FS_BENCH_TP_SEED", str(int(time.time()))))
    order = [s for s in settings for _ in range(rounds)]
    random.Random(seed).shuffle(order)
    res = {s: [] for s in settings}
    seq = []
    dd()  # the first round's previous file
    for s in order:
        r, k = one(s)
        res[s].append((r[0], r[1], k, r[2]))
        seq.append((s, r[1], r[2]))
    med = lambda v: pct(v, 50)
    print("dd %d MiB to a watched ext4 on tmpfs, %d rounds of each setting in a random "
          "order (seed %d), %.1f s settle, %.1f s from freeing the previous write to writing; "
          "load average after: %s" % (mb, rounds, seed, 1 + settle, gap,
                                      open("/proc/loadavg").read().split()[0]))
    print("  the order, dd's CPU s and the MiB handed back to the hypervisor during the write: "
          + " ".join("%s:%.2f:%.0f" % x for x in seq))
    base = res[settings[0]]
    for s in settings:
        v = res[s]
        print("  %-6s MiB/s: %s" % (s, " ".join("%.0f" % x[0] for x in v)))
        print("  %-6s CPU s: %s" % (s, " ".join("%.2f" % x[1] for x in v)))
    for s in settings:
        v = res[s]
        wall, cpu = med([x[0] for x in v]), med([x[1] for x in v])
        print("%-6s wall median %5.0f MiB/s (p25 %.0f, p75 %.0f), ratio to %s %.3f; dd CPU "
              "median %.3f s (p25 %.3f, p75 %.3f), throughput per CPU s ratio %.3f; keventd "
              "CPU median %.4f max %.4f s"
              % (s, wall, pct([x[0] for x in v], 25), pct([x[0] for x in v], 75),
                 settings[0], wall / med([x[0] for x in base]), cpu,
                 pct([x[1] for x in v], 25), pct([x[1] for x in v], 75),
                 med([x[1] for x in base]) / cpu, med([x[2] for x in v]),
                 max(x[2] for x in v)))
    clean = {s: [x for x in res[s] if x[3] == 0] for s in settings}
    if all(clean.values()):
        cb = clean[settings[0]]
        for s in settings:
            v = clean[s]
            print("%-6s the %d rounds where no memory was handed back during the write: wall "
                  "median %5.0f MiB/s, ratio %.3f; dd CPU median %.3f s, ratio %.3f"
                  % (s, len(v), med([x[0] for x in v]),
                     med([x[0] for x in v]) / med([x[0] for x in cb]), med([x[1] for x in v]),
                     med([x[1] for x in cb]) / med([x[1] for x in v])))


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
        for f in (latency, error, throughput, idle):
            if not only or only == f.__name__:
                f(b)
    finally:
        b.cleanup()

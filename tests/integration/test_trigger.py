#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl trigger on this machine: keventd reports the devices present,
from libudev's enumeration of sysfs, as udev events for its own rules; every
handler gets KEVENT_SYNTHETIC=1, and there is one event per device of the
subsystems asked for, no more and no fewer."""
import fcntl
import grp
import os
import pwd
import shutil
import subprocess

import kdtest
from kdtest import DaemonTest, Raw, TIMEOUT

SUBSYSTEMS = ("mem", "net")


def devices(subsystem):
    """DEVPATHs of the subsystem's devices, as sysfs lists them."""
    d = "/sys/class/" + subsystem
    return {os.path.realpath(os.path.join(d, n))[len("/sys"):] for n in os.listdir(d)}


def wait_triggered(d, n):
    """Waits until the udev source made N synthetic events and every event
    is finished.  The kernel's own uevents (a loop device another test
    attaches) may come in beside them: they are counted apart."""
    return d.wait_status(
        lambda st: st["sources"]["udev"]["resynced"] == n and st["events"]["pending"] == 0
        and st["events"]["handled"] + st["events"]["ratelimited"] == st["events"]["received"],
        "%d synthetic events made and every event finished" % n)


def env_of(path):
    with open(path) as f:
        return dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)


class Trigger(DaemonTest):
    def setUp(self):
        for s in SUBSYSTEMS:
            if not os.path.isdir("/sys/class/" + s) or not os.listdir("/sys/class/" + s):
                self.skipTest("no %s devices in /sys/class/%s" % (s, s))
        super().setUp()
        # one file of the environment per run, then a line on the FIFO
        self.s.write_rule("10-all.yaml", (
            "rules:\n"
            "  - name: every-udev-event\n"
            "    match:\n"
            "      source: udev\n"
            "    shell: '[ \"$KEVENT_SYNTHETIC\" = 1 ] || exit 0; env > %s/$$.env; echo done >%s'\n")
            % (self.s.out, self.s.fifo.path))

    def runs(self, n):
        self.s.fifo.lines(n)
        return [env_of(os.path.join(self.s.out, f)) for f in sorted(os.listdir(self.s.out))]

    def test_devices_present_as_synthetic_add_events(self):
        d = self.start("--sources", "udev,socket", "--udev-monitor", "kernel")
        want = set().union(*(devices(s) for s in SUBSYSTEMS))
        r = d.ctl("trigger", "--subsystem", "mem", "--subsystem", "net", check=0)
        self.assertEqual(r.stdout, "%d devices reported as add events\n" % len(want))
        envs = self.runs(len(want))
        self.assertEqual(len(envs), len(want))
        self.assertEqual({e["DEVPATH"] for e in envs}, want)
        for e in envs:
            self.assertEqual(e["KEVENT_SYNTHETIC"], "1")
            self.assertEqual(e["ACTION"], "add")
            self.assertEqual(e["KEVENT_SIGNAL"], "add")
            self.assertEqual(e["KEVENT_SOURCE"], "udev")
            self.assertEqual(e["KEVENT_OBJECT"], "/org/kernel" + e["DEVPATH"])
            self.assertIn(e["SUBSYSTEM"], SUBSYSTEMS)
            self.assertNotIn("SEQNUM", e)  # not one of the kernel's uevents
        mem = [e for e in envs if e["SUBSYSTEM"] == "mem"]
        for e in mem:  # the kernel's DEVNAME, as for a real uevent
            self.assertEqual(e["KEVENT_DEVNAME"], "/dev/" + e["DEVNAME"])
        st = wait_triggered(d, len(want))
        self.assertEqual(st["sources"]["udev"]["rejected"], 0)
        self.assertIn("trigger (pid ", d.logtext())
        d.stop_ok(self)

    def test_change_of_one_subsystem(self):
        d = self.start("--sources", "udev,socket", "--udev-monitor", "kernel")
        want = devices("mem")
        r = d.ctl("trigger", "--subsystem", "mem", "--action", "change", check=0)
        self.assertEqual(r.stdout, "%d devices reported as change events\n" % len(want))
        envs = self.runs(len(want))
        self.assertEqual({e["DEVPATH"] for e in envs}, want)
        self.assertTrue(all(e["ACTION"] == "change" and e["KEVENT_SYNTHETIC"] == "1"
                            for e in envs))
        wait_triggered(d, len(want))
        d.stop_ok(self)

    def test_without_the_udev_source(self):
        d = self.start("--sources", "socket")
        r = d.ctl("trigger", "--subsystem", "mem", check=1)
        self.assertIn("the udev source is not running", r.stderr)
        self.assertEqual(d.status()["events"]["received"], 0)
        d.stop_ok(self)

    def test_bad_requests_refused(self):
        d = self.start("--sources", "udev,socket", "--udev-monitor", "kernel")
        raw = self.raw()
        for fields, why in ((("trigger", "remove"), "add or change"),
                            (("trigger", "add", "mem,,net"), "1-63 characters"),
                            (("trigger", "add", "mem net"), "[A-Za-z0-9_.:-]"),
                            (("trigger",), "trigger takes")):
            kind, text, _ = raw.request(*fields)
            self.assertEqual(kind, "err")
            self.assertIn(why, text)
        st = d.status()
        self.assertEqual(st["control"]["bad_requests"], 4)
        self.assertEqual(st["sources"]["udev"]["resynced"], 0)
        d.stop_ok(self)


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    raise AssertionError("no VmRSS for pid %d" % pid)


# How far keventd may grow while a member of the control group repeats
# triggers: the udev source's share of the queue and one enumeration of the
# devices, with room for the allocator.  Before the share held triggers,
# 400 of them grew it by 124 MiB.
RSS_GROWTH_KIB = 8 * 1024
SHARE = 32  # --queue-size 64 over the sources udev and socket
JOURNAL = 64 * 1024  # --journal-size 64K: four segments of 16 KiB


class TriggerFlood(DaemonTest):
    """keventctl trigger is held to the udev source's share of the queue:
    its devices go in as the share drains, a second trigger of the same
    connection waits for none, and a trigger while the share is full is
    refused; so a member of --control-group repeating triggers grows
    neither keventd's memory nor its journal."""

    def setUp(self):
        if not kdtest.IS_ROOT:
            self.skipTest("needs root")
        super().setUp()
        # the handlers wait while the test holds the lock: the queue fills
        self.lock = self.s.path("lock")
        self.lockfd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.lockfd, fcntl.LOCK_EX)
        self.s.write_rule("10-udev.yaml", (
            "rules:\n"
            "  - name: held\n"
            "    match: {source: udev}\n"
            "    run: [flock, -s, %s, 'true']\n"
            # held by the test as long as it takes, on a loaded machine too
            "    timeout: 1h\n") % kdtest.yq(self.lock))

    def tearDown(self):
        os.close(self.lockfd)
        super().tearDown()

    def start_held(self):
        return self.start("--sources", "udev,socket", "--udev-monitor", "kernel",
                          "--queue-size", "64", "--max-children", "1",
                          "--journal-size", "64K", "--control-group", "nogroup")

    def test_one_trigger_at_a_time_per_connection(self):
        d = self.start_held()
        raw = self.raw()
        # two at once: the first fills the share and waits, the second is refused
        raw.send_raw(Raw.encode("trigger", "add"))
        raw.send_raw(Raw.encode("trigger", "add"))
        kind, text, _ = raw.reply()
        self.assertEqual(kind, "err")
        self.assertIn("still waiting for room in the queue: one at a time", text)
        st = d.status()
        self.assertEqual(st["sources"]["udev"]["pending"], SHARE)
        self.assertTrue(st["sources"]["udev"]["paused"])
        self.assertEqual(st["control"]["triggers_refused"], 1)
        fcntl.flock(self.lockfd, fcntl.LOCK_UN)
        kind, text, _ = raw.reply()
        self.assertEqual(kind, "ok")
        n = int(text)
        self.assertGreater(n, SHARE)
        wait_triggered(d, n)
        d.stop_ok(self)

    def test_a_member_repeating_triggers(self):
        if not shutil.which("setpriv") or not ids("nobody", "nogroup"):
            self.skipTest("needs setpriv, the user nobody and the group nogroup")
        member = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        d = self.start_held()
        pid = d.proc.pid
        idle = vm_rss_kib(pid)
        first = subprocess.Popen(member + [kdtest.KEVENTCTL, "--control", self.s.ctl,
                                           "trigger"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(first)
        d.wait_status(lambda st: st["sources"]["udev"]["paused"], "the udev share full")
        for i in range(399):
            r = d.ctl("trigger", prefix=member)
            self.assertEqual(r.returncode, 1, "trigger %d: %s" % (i + 2, r.stdout))
            self.assertIn("the udev source's share of the queue is full", r.stderr)
        st = d.status()
        self.assertLessEqual(st["queue"]["pending"], SHARE)
        self.assertEqual(st["sources"]["udev"]["pending"], SHARE)
        self.assertEqual(st["control"]["triggers_refused"], 399)
        self.assertLessEqual(st["journal"]["bytes"], JOURNAL + JOURNAL // 4)
        on_disk = sum(os.path.getsize(os.path.join(d.state_dir, f))
                      for f in os.listdir(d.state_dir) if f.startswith("journal-"))
        self.assertLessEqual(on_disk, JOURNAL + JOURNAL // 4)
        grown = vm_rss_kib(pid) - idle
        print("VmRSS idle %d KiB, +%d KiB after 400 triggers; journal %d bytes"
              % (idle, grown, on_disk))
        if asan_build():
            print("ASan build: memory size not checked (its quarantine keeps freed memory)")
        else:
            self.assertLess(grown, RSS_GROWTH_KIB, "VmRSS grew by %d KiB" % grown)
        self.assertIsNone(first.poll())  # its devices wait for room
        fcntl.flock(self.lockfd, fcntl.LOCK_UN)
        out, err = first.communicate(timeout=TIMEOUT)
        self.assertEqual(first.returncode, 0, err)
        n = int(out.split()[0])
        self.assertGreater(n, SHARE)
        wait_triggered(d, n)
        d.stop_ok(self)


def asan_build():
    out = subprocess.run(["ldd", kdtest.KEVENTD], capture_output=True).stdout
    return b"libasan" in out


def ids(user, group):
    try:
        return pwd.getpwnam(user).pw_uid, grp.getgrnam(group).gr_gid
    except KeyError:
        return None


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl trigger on this machine: keventd reports the devices present,
from libudev's enumeration of sysfs, as udev events for its own rules; every
handler gets KEVENT_SYNTHETIC=1, and there is one event per device of the
subsystems asked for, no more and no fewer."""
import os

import kdtest
from kdtest import DaemonTest

SUBSYSTEMS = ("mem", "net")


def devices(subsystem):
    """DEVPATHs of the subsystem's devices, as sysfs lists them."""
    d = "/sys/class/" + subsystem
    return {os.path.realpath(os.path.join(d, n))[len("/sys"):] for n in os.listdir(d)}


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
            "    shell: 'env > %s/$$.env; echo done >%s'\n") % (self.s.out, self.s.fifo.path))

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
        st = d.wait_idle(len(want))
        self.assertEqual(st["sources"]["udev"]["received"], len(want))
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
        d.wait_idle(len(want))
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
        self.assertEqual(st["events"]["received"], 0)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The udev source on this machine: a real kernel uevent (root writes
"change" to a device's uevent file in /sys) fires a rule whose handler sees
the hotplug environment; a uevent forged from user space is rejected."""
import json
import os
import socket
import sys

import kdtest
from kdtest import DaemonTest

UEVENT = "/sys/class/net/lo/uevent"
DEVPATH = "/devices/virtual/net/lo"
NETLINK_KOBJECT_UEVENT = 15


def env_dict(lst):
    return dict(e.split("=", 1) for e in lst)


class UdevSource(DaemonTest):
    def setUp(self):
        if not kdtest.IS_ROOT or not os.access(UEVENT, os.W_OK):
            self.skipTest("needs root and a writable " + UEVENT)
        super().setUp()

    def start_udev(self):
        out = self.s.path("out", "lo.json")
        self.s.write_rule("10-lo.yaml", (
            "rules:\n"
            "  - name: lo-change\n"
            "    match:\n"
            "      source: udev\n"
            "      type: hotplug\n"
            "      object: /org/kernel%s\n"
            "      signal: change\n"
            "    run: %s\n") % (DEVPATH, self.h("report", out, self.s.fifo.path, "lo", "${DEVPATH}")))
        return self.start("--sources", "udev,socket", "--udev-monitor", "kernel"), out

    def real_uevent(self):
        with open(UEVENT, "w") as f:
            f.write("change")

    def test_real_uevent_runs_a_hotplug_handler(self):
        d, out = self.start_udev()
        self.real_uevent()
        self.assertEqual(self.s.fifo.line(), "done lo")
        with open(out) as f:
            info = json.load(f)
        env = env_dict(info["env"])
        # the /sbin/hotplug environment
        self.assertEqual(env["ACTION"], "change")
        self.assertEqual(env["DEVPATH"], DEVPATH)
        self.assertEqual(env["SUBSYSTEM"], "net")
        self.assertEqual(env["INTERFACE"], "lo")
        self.assertTrue(env["SEQNUM"].isdigit())
        # the event
        self.assertEqual(env["KEVENT_SOURCE"], "udev")
        self.assertEqual(env["KEVENT_TYPE"], "hotplug")
        self.assertEqual(env["KEVENT_OBJECT"], "/org/kernel" + DEVPATH)
        self.assertEqual(env["KEVENT_SIGNAL"], "change")
        self.assertEqual(env["KEVENT_SEQNUM"], env["SEQNUM"])
        self.assertEqual(env["KEVENT_SUBSYSTEM"], "net")
        self.assertEqual(env["PATH"], kdtest.HANDLER_PATH)
        self.assertNotIn(kdtest.CANARY, env)
        self.assertEqual(info["argv"], [DEVPATH])
        st = d.status()
        self.assertGreaterEqual(st["sources"]["udev"]["received"], 1)
        self.assertEqual(st["sources"]["udev"]["rejected"], 0)
        d.stop_ok(self)

    def test_forged_uevent_is_rejected_and_counted(self):
        d, out = self.start_udev()
        forged = (b"change@" + DEVPATH.encode() + b"\0ACTION=change\0DEVPATH=" + DEVPATH.encode()
                  + b"\0SUBSYSTEM=net\0SEQNUM=4000000000\0FORGED=1\0")
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
        try:
            s.bind((0, 0))
            s.sendto(forged, (0, 1))  # to the kernel's uevent group, as CVE-2009-1185 did
        finally:
            s.close()
        # a real uevent after it: once its handler ran, the forgery was read too
        self.real_uevent()
        self.assertEqual(self.s.fifo.line(), "done lo")
        with open(out) as f:
            env = env_dict(json.load(f)["env"])
        self.assertNotIn("FORGED", env)
        st = d.wait_status(lambda st: st["sources"]["udev"]["rejected"] >= 1,
                           "the forged uevent counted as rejected")
        self.assertEqual(st["rules"][0]["runs"], 1, "the forgery must not run the rule")
        self.assertIn("uevent not from the kernel", d.logtext())
        d.stop_ok(self)

    def test_devices_that_came_and_went_meanwhile_are_reported(self):
        """The first start writes the devices present to udev.devices in
        the state directory, and reports none.  A device missing from the
        table at the next start is reported added, one in the table and not
        present removed, both flagged KEVENT_SYNTHETIC=1; a third start
        reports nothing."""
        out = self.s.path("out", "resync")
        rec = self.s.script("rec.sh", "#!/bin/sh\nprintf '%s %s %s\\n' \"$ACTION\" "
                            "\"$DEVPATH\" \"${KEVENT_SYNTHETIC:-0}\" >>\"$1\"\n")
        self.s.write_rule("10-all.yaml", "rules:\n  - name: all\n    match: {source: udev}\n"
                          "    run: [%s, %s]\n" % (kdtest.yq(rec), kdtest.yq(out)))
        state = self.s.path("state")
        args = ("--sources", "udev,socket", "--udev-monitor", "kernel", "--state-dir", state)
        d = self.start(*args)
        d.stop_ok(self)
        table = os.path.join(state, "udev.devices")
        with open(table) as f:
            lines = f.read().splitlines()
        self.assertIn("%s net" % DEVPATH, lines)
        if os.path.exists(out):  # the first start reports nothing
            with open(out) as f:
                self.assertEqual([l for l in f.read().splitlines() if l.endswith(" 1")], [])
        lines.remove("%s net" % DEVPATH)
        lines.append("/devices/virtual/kevent-test/gone kevent-test")
        with open(table, "w") as f:
            f.write("\n".join(sorted(lines)) + "\n")
        d = self.start(*args)
        st = d.wait_status(lambda st: st["sources"]["udev"]["received"] >= 2
                           and st["events"]["pending"] == 0, "the two reported")
        self.assertEqual(st["sources"]["udev"]["resynced"], 2)
        d.stop_ok(self)
        # (the machine's own uevents, of other tests, may come too: unflagged)
        with open(out) as f:
            got = sorted(l for l in f.read().splitlines() if l.endswith(" 1"))
        self.assertEqual(got, ["add %s 1" % DEVPATH,
                               "remove /devices/virtual/kevent-test/gone 1"])
        self.assertIn("devices changed while not watched: 1 added, 1 removed", d.logtext())
        d = self.start(*args)
        d.stop_ok(self)
        with open(out) as f:
            self.assertEqual(len([l for l in f.read().splitlines() if l.endswith(" 1")]), 2)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The desktop (keventd.rules(5), "notify: desktop"; keventd(8), USER
INSTANCE): keventd --user as nobody on a session of nobody's own, a real
one: a session bus (dbus-daemon --session), a virtual display (Xvfb) and
a real notification server (dunst) on them; the bus's messages read with
busctl monitor.  A rule's notifications of one object replace each other
(replaces_id: one on the screen, never a stack), another object's are
their own, a condition's clear closes what its set showed, and a handler
runs with the session's variables; a bus that goes away is counted, and
reached again once it is back."""
import json
import os
import select
import subprocess
import time

import kdtest
import test_user
from kdtest import TIMEOUT

DUNSTRC = """[global]
    font = Monospace 8
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
"""

ENV_HANDLER = """#!/bin/sh
{ echo "DISPLAY=$DISPLAY"; echo "WAYLAND_DISPLAY=$WAYLAND_DISPLAY"
  echo "DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS"; echo "HOME=$HOME"
  echo "NOTIFY_SOCKET=${NOTIFY_SOCKET-unset}"; echo "PATH=$PATH"; } >"$1.tmp"
mv "$1.tmp" "$1"
"""

RULES = """rules:
  - name: plugged
    match: {signal: add}
    notify: desktop
    title: "Disk ${KEVENT_OBJECT}"
    message: "Size: ${KEVENT_SIZE} <b>&</b>"
  - name: env
    match: {signal: env}
    run: [%s, %s]
conditions:
  - name: full
    set: {signal: full}
    clear: {signal: space}
    severity: critical
"""

# a session bus that starts nothing by itself (no service directories): the
# notification server is the one the test runs, or none
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

COND_RULE = """rules:
  - name: full-told
    match: {source: condition, signal: set}
    notify: desktop
"""


class Monitor:
    """busctl monitor --json=short on a bus: its messages, read as they come."""

    def __init__(self, address, preexec_fn, env):
        self.p = subprocess.Popen(["busctl", "--address=" + address, "monitor", "--json=short"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, preexec_fn=preexec_fn, env=env)
        self.buf = b""
        self.seen = []

    def wait(self, pred, what):
        """The first message not yet taken for which pred holds."""
        deadline = time.monotonic() + TIMEOUT
        i = 0
        while True:
            while i < len(self.seen):
                m = self.seen[i]
                i += 1
                if not m.get("taken") and pred(m):
                    m["taken"] = True
                    return m
            left = kdtest.deadline_left(deadline)
            if not left:
                raise AssertionError("busctl monitor: no %s in %d s; seen:\n%s" % (
                    what, TIMEOUT, "\n".join(json.dumps(m) for m in self.seen[-20:])))
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                continue
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError("busctl monitor ended")
            self.buf += chunk
            *lines, self.buf = self.buf.split(b"\n")
            self.seen += [json.loads(l) for l in lines if l.strip()]

    def call(self, member, sender=None):
        def pred(m):
            return (m["type"] == "method_call" and m.get("member") == member
                    and m.get("interface") == "org.freedesktop.Notifications"
                    and (sender is None or m.get("sender") == sender))
        return self.wait(pred, "call of " + member)

    def reply(self, call):
        def pred(m):
            return (m["type"] in ("method_return", "error")
                    and m.get("reply_cookie") == call["cookie"]
                    and m.get("destination") == call["sender"])
        return self.wait(pred, "reply to %s" % call["member"])

    def close(self):
        self.p.kill()
        self.p.wait()
        self.p.stdout.close()


class DesktopTest(test_user.UserBase):
    def setUp(self):
        super().setUp()
        s = self.s
        self.procs_session = []
        # the display: Xvfb says its number on a pipe once it takes clients
        r, w = os.pipe()
        x = self.session_proc(["Xvfb", "-displayfd", str(w), "-nolisten", "tcp", "-screen", "0",
                               "640x480x24"], pass_fds=(w,))
        os.close(w)
        with os.fdopen(r) as f:
            self.display = ":" + f.readline().strip()
        self.assertNotEqual(self.display, ":", "Xvfb said no display; exit %s" % x.poll())
        # the session bus, nobody's: it says its address once it listens
        self.bus = os.path.join(self.run_dir, "bus")
        conf = self.own(self.s.script("home/bus.conf", BUS_CONFIG % self.bus))
        b = self.session_proc(["dbus-daemon", "--config-file=" + conf, "--nofork", "--nopidfile",
                               "--print-address=1"],
                              stdout=subprocess.PIPE)
        self.address = b.stdout.readline().decode().strip()
        self.assertTrue(self.address.startswith("unix:"), "dbus-daemon: no address")
        self.monitor = Monitor(self.address, self.as_user(), self.session_env())
        self.addCleanup(self.monitor.close)
        self.start_server()

    def session_env(self, **extra):
        return self.env(DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=self.address, **extra)

    def session_proc(self, argv, **kw):
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stderr=kw.pop("stderr", subprocess.DEVNULL),
                             preexec_fn=self.as_user(), env=kw.pop("env", self.env()), **kw)
        self.procs_session.append(p)
        self.addCleanup(self.end, p)
        return p

    @staticmethod
    def end(p):
        if p.poll() is None:
            p.kill()
            p.wait()
        if p.stdout:
            p.stdout.close()

    def start_server(self):
        """dunst, its notifications never expiring; back once it owns the name."""
        rc = self.own(self.s.script("home/dunstrc", DUNSTRC))
        self.dunst = self.session_proc(["dunst", "-config", rc], env=self.session_env())
        self.monitor.wait(lambda m: m.get("member") == "NameOwnerChanged"
                          and m["payload"]["data"][0] == "org.freedesktop.Notifications"
                          and m["payload"]["data"][2], "dunst on the bus")

    def displayed(self):
        """The notifications dunst holds: on the screen, or about to be."""
        n = 0
        for what in ("displayed", "waiting"):
            r = subprocess.run(["dunstctl", "count", what], capture_output=True, text=True,
                               timeout=TIMEOUT, env=self.session_env(),
                               preexec_fn=self.as_user())
            n += int(r.stdout)
        return n

    def notify(self, sender=None):
        """The next Notify keventd made: (its arguments, the id dunst gave)."""
        c = self.monitor.call("Notify", sender)
        rep = self.monitor.reply(c)
        self.assertEqual(rep["type"], "method_return", rep)
        return c, c["payload"]["data"], rep["payload"]["data"][0]

    def start(self):
        env_out = os.path.join(self.home, "env.out")
        self.user_rule("50-desk.yaml", RULES % (kdtest.yq(self.own(self.s.script(
            "home/env.sh", ENV_HANDLER))), kdtest.yq(env_out)))
        self.user_rule("60-cond.yaml", COND_RULE)
        p = self.start_user("--users-socket", "none", **dict(
            DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=self.address,
            WAYLAND_DISPLAY="wayland-test"))
        return p, env_out

    def test_replaced_not_stacked_and_closed_on_clear(self):
        p, _ = self.start()
        send = ["send", "--wait", "storage"]
        self.ctl(*send, "/disk/a", "add", "Size: 1G")
        c1, args, id1 = self.notify()
        app, replaces, icon, title, body, actions, hints, expire = args
        self.assertEqual((app, replaces, title, body, actions, expire),
                         ("keventd", 0, "Disk /disk/a", "Size: 1G &lt;b&gt;&amp;&lt;/b&gt;", [],
                          -1))
        self.assertEqual(hints, {"urgency": {"type": "y", "data": 1}})
        keventd = c1["sender"]
        # the same rule and object: over the first, on the screen once
        for size in ("2G", "3G"):
            self.ctl(*send, "/disk/a", "add", "Size: " + size)
            _, args, id_ = self.notify(keventd)
            self.assertEqual((args[1], args[4], id_), (id1, "Size: %s &lt;b&gt;&amp;&lt;/b&gt;"
                                                       % size, id1))
        self.assertEqual(self.displayed(), 1)
        # another object: its own
        self.ctl(*send, "/disk/b", "add", "Size: 4G")
        _, args, id2 = self.notify(keventd)
        self.assertEqual(args[1], 0)
        self.assertNotEqual(id2, id1)
        self.assertEqual(self.displayed(), 2)

        # a condition set: critical, shown; cleared: closed
        self.ctl(*send, "/mnt/x", "full")
        _, args, idc = self.notify(keventd)
        self.assertEqual((args[1], args[3], args[6]["urgency"]["data"], args[2]),
                         (0, "%s: full set on /mnt/x" % os.uname().nodename, 2, "dialog-error"))
        self.assertEqual(self.displayed(), 3)
        self.ctl(*send, "/mnt/x", "space")
        c = self.monitor.call("CloseNotification", keventd)
        self.assertEqual(c["payload"]["data"], [idc])
        self.monitor.wait(lambda m: m.get("member") == "NotificationClosed"
                          and m["payload"]["data"][0] == idc, "NotificationClosed")
        self.assertEqual(self.displayed(), 2)

        st = json.loads(self.ctl("status", "--json").stdout)
        desk = st["notify_targets"]["desktop"]
        self.assertEqual((desk["sent"], desk["failed"]), (5, 0))
        self.assertIn("notify desktop: sent 5", self.ctl("status").stdout)
        self.stop_user(p)

    def test_handler_gets_the_session(self):
        p, env_out = self.start()
        self.ctl("send", "--wait", "general", "/u", "env")
        with open(env_out) as f:
            got = dict(l.split("=", 1) for l in f.read().splitlines())
        self.assertEqual(got["DISPLAY"], self.display)
        self.assertEqual(got["WAYLAND_DISPLAY"], "wayland-test")
        self.assertEqual(got["DBUS_SESSION_BUS_ADDRESS"], self.address)
        self.assertEqual(got["HOME"], self.home)
        # what systemd gives keventd's service alone, and keventd's PATH
        self.assertEqual(got["NOTIFY_SOCKET"], "unset")
        self.assertEqual(got["PATH"], kdtest.HANDLER_PATH)
        self.stop_user(p)

    def test_server_gone_counted_and_back(self):
        p, _ = self.start()
        self.ctl("send", "--wait", "storage", "/disk/a", "add", "Size: 1G")
        c1, _, id1 = self.notify()
        # the server goes: the call fails, counted, keventd runs on
        self.dunst.kill()
        self.dunst.wait()
        self.monitor.wait(lambda m: m.get("member") == "NameOwnerChanged"
                          and m["payload"]["data"][0] == "org.freedesktop.Notifications"
                          and not m["payload"]["data"][2], "dunst gone")
        self.ctl("send", "--wait", "storage", "/disk/a", "add", "Size: 2G")
        c = self.monitor.call("Notify", c1["sender"])
        self.assertEqual(self.monitor.reply(c)["type"], "error")
        st = json.loads(self.ctl("status", "--json").stdout)
        desk = st["notify_targets"]["desktop"]
        self.assertEqual((desk["sent"], desk["failed"]), (1, 1))
        # a new server: a new notification, not over a stale id
        self.start_server()
        self.ctl("send", "--wait", "storage", "/disk/a", "add", "Size: 3G")
        _, args, _ = self.notify(c1["sender"])
        self.assertEqual(args[1], 0)
        self.assertEqual(self.displayed(), 1)
        self.stop_user(p)

    def test_shipped_user_rules_match(self):
        """The package's user rules (user-rules.d/) match the events they
        are for, as a user instance reads them, and nothing else."""
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                           "user-rules.d")
        for name in os.listdir(src):
            with open(os.path.join(src, name)) as f:
                self.s.write_rule(name, f.read(), dir=self.lib)
        self.assertEqual(self.ctl("verify").returncode, 0)
        cases = [
            (["--source", "udev", "storage", "/org/kernel/devices/pci0000:00/usb1/1-1/block/sdb",
              "add", "DEVTYPE: disk\nID_BUS: usb\nDEVNAME: /dev/sdb\n"],
             "desktop-disk-plugged"),
            (["--source", "udev", "storage", "/org/kernel/devices/pci0000:00/block/sda", "add",
              "DEVTYPE: disk\nID_BUS: ata\n"], None),
            (["--source", "udev", "power", "/org/kernel/devices/LNXSYSTM:00/power_supply/BAT0",
              "change", "POWER_SUPPLY_TYPE: Battery\nPOWER_SUPPLY_STATUS: Discharging\n"
              "POWER_SUPPLY_CAPACITY: 9\n"], "desktop-battery-low"),
            (["--source", "udev", "power", "/org/kernel/devices/LNXSYSTM:00/power_supply/BAT0",
              "change", "POWER_SUPPLY_TYPE: Battery\nPOWER_SUPPLY_STATUS: Charging\n"
              "POWER_SUPPLY_CAPACITY: 9\n"], None),
            (["--source", "condition", "general", "/org/kernel/fs/home", "set",
              "Condition: fs-space-low\nSeverity: warning\n"], "desktop-space-low"),
            (["--source", "condition", "general", "/org/kernel/fs/home", "clear",
              "Condition: fs-space-low\nSeverity: warning\n"], None),
        ]
        for args, want in cases:
            out = self.ctl("test", *args, check=None).stdout
            matched = [l.split()[1] for l in out.splitlines()
                       if l.startswith("rule ") and ": matched" in l]
            self.assertEqual(matched, [want] if want else [], "%s\n%s" % (args, out))


if __name__ == "__main__":
    kdtest.main()

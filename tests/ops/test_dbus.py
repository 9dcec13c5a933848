# SPDX-License-Identifier: GPL-2.0-or-later
"""keventd --dbus: each event arrives as the org.kernel.Event.Event signal,
sent by the owner of the name org.kernel.Event1.

A private dbus-daemon stands in for the system bus ($DBUS_SYSTEM_BUS_ADDRESS),
with the system bus's default policy (no one owns a name unless a policy
file lets them) and keventd's own policy file, keventd/org.kernel.Event1.conf;
dbus-monitor watches it.  Also checks that the signal matches
docs/org.kernel.Event.xml."""
import os
import pwd
import re
import select
import shutil
import subprocess
import sys
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
import kdtest  # noqa: E402

SRC = os.environ.get("KEVENT_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))


def dbus_path(obj):
    """The escaping docs/org.kernel.Event.xml describes."""
    if obj == "/":
        return "/"
    out = []
    for el in obj[1:].split("/"):
        b = el.encode()
        out.append("".join(chr(c) if chr(c).isascii() and chr(c).isalnum() else "_%02x" % c
                           for c in b) or "_")
    return "/" + "/".join(out)


NAME = "org.kernel.Event1"
POLICY = os.path.join(SRC, "keventd", NAME + ".conf")

# The system bus's defaults (/usr/share/dbus-1/system.conf): owning a name and
# calling methods are denied unless a policy file allows them; signals go.
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%(socket)s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  %(extra)s
  <include>%(policy)s</include>
</busconfig>
"""


def bus_call(address, method, *args, user=None):
    """dbus-send to the bus itself; (exit status, output)."""
    r = subprocess.run(["dbus-send", "--bus=" + address, "--print-reply",
                        "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                        "org.freedesktop.DBus." + method] + list(args),
                       capture_output=True, text=True, timeout=kdtest.TIMEOUT,
                       stdin=subprocess.DEVNULL, user=user)
    return r.returncode, r.stdout + r.stderr


def name_owner(address):
    rc, out = bus_call(address, "GetNameOwner", "string:" + NAME)
    m = re.search(r'string "(:[0-9.]+)"', out)
    return m.group(1) if rc == 0 and m else None


class Monitor:
    """dbus-monitor's output, read with bounded waits, parsed into signals."""

    def __init__(self, address, match="type='signal',interface='org.kernel.Event'"):
        self.proc = subprocess.Popen(
            ["dbus-monitor", "--address", address, match],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.buf = b""
        # it says NameLost once it is a monitor: from then on it sees everything
        try:
            self.read_until(lambda: b"member=NameLost" in self.buf, "dbus-monitor to start")
        except BaseException:
            self.close()
            raise

    def read_until(self, done, what):
        deadline = time.monotonic() + kdtest.TIMEOUT
        while not done():
            left = deadline - time.monotonic()
            r, _, _ = select.select([self.proc.stdout], [], [], max(0, left))
            if not r:
                raise AssertionError("timed out waiting for %s; dbus-monitor said:\n%s"
                                     % (what, self.buf.decode(errors="replace")))
            data = os.read(self.proc.stdout.fileno(), 65536)
            if not data:
                raise AssertionError("dbus-monitor exited; it said:\n" + self.buf.decode())
            self.buf += data

    def signals(self, senders=None):
        """[(path, member, [args])] of the org.kernel.Event signals so far;
        with a list senders, each signal's sender is appended to it."""
        out = []
        text = self.buf.decode(errors="replace")
        for block in re.split(r"\n(?=signal )", text):
            m = re.match(r"signal .* sender=(\S+) .* path=([^;]*); interface=org\.kernel\.Event; "
                         r"member=(\w+)", block)
            if not m:
                continue
            if senders is not None:
                senders.append(m.group(1))
            args = []
            for kind, val in re.findall(r'^\s+(string|uint64) (.*)$', block, re.M):
                args.append(int(val) if kind == "uint64" else val[1:-1])
            out.append((m.group(2), m.group(3), args))
        return out

    def wait_signals(self, n):
        """The signals so far, once n have come whole: dbus-monitor writes
        a signal's header line and each of its 5 arguments separately."""
        def whole():
            sigs = self.signals()
            return len(sigs) >= n and all(len(a) == 5 for _, _, a in sigs[:n]) \
                and self.buf.endswith(b"\n")
        self.read_until(whole, "%d org.kernel.Event signal(s)" % n)
        return self.signals()

    def close(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


class DBus(kdtest.DaemonTest):
    def setUp(self):
        super().setUp()
        for tool in ("dbus-daemon", "dbus-monitor"):
            if not shutil.which(tool):
                raise unittest.SkipTest(tool + " is not installed")
        # keventd runs as whoever runs the tests: a user other than root needs
        # the name allowed for them too (the policy file allows root only)
        me = pwd.getpwuid(os.geteuid()).pw_name
        extra = "" if kdtest.IS_ROOT else (
            '<policy user="%s"><allow own="%s"/></policy>' % (me, NAME))
        self.extra = extra
        self.bus, self.address = self.start_bus("bus")
        self.mon = Monitor(self.address)
        self.addCleanup(self.mon.close)

    def start_bus(self, name):
        """A dbus-daemon listening on the socket NAME of the scratch
        directory: (its process, its address)."""
        config = self.s.path(name + ".conf")
        with open(config, "w") as f:
            f.write(BUS_CONFIG % {"socket": self.s.path(name), "extra": self.extra,
                                  "policy": POLICY})
        log = open(self.s.path(name + ".log"), "w")  # a system bus logs as it goes
        self.addCleanup(log.close)
        bus = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork",
                                "--print-address=1"],
                               stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
        self.addCleanup(self.stop_bus, bus)
        r, _, _ = select.select([bus.stdout], [], [], kdtest.TIMEOUT)
        self.assertTrue(r, "dbus-daemon printed no address")
        address = bus.stdout.readline().decode().strip()
        self.assertTrue(address.startswith("unix:"), address)
        return bus, address

    @staticmethod
    def stop_bus(bus):
        if bus.poll() is None:
            bus.kill()
        bus.wait()
        bus.stdout.close()

    def test_events_become_signals(self):
        d = self.start("--dbus", env={"DBUS_SYSTEM_BUS_ADDRESS": self.address})
        events = [
            ("power", "/org/kernel/devices/system/cpu/temperature", "high", "Cpu: 0\nZone: 1\n"),
            ("storage", "/org/kernel/block/sda-1_x//y/", "add", ""),
            ("general", "/org/kernel/t~st/\"q\" 'x'", "a.b:c-d", "multi\nline \\ \" payload"),
        ]
        for e in events:
            d.send(*e)
        sigs = self.mon.wait_signals(len(events))
        self.assertEqual(len(sigs), len(events), sigs)
        for n, ((typ, obj, sig, payload), (path, member, args)) in enumerate(zip(events, sigs), 1):
            self.assertEqual(member, "Event")
            self.assertEqual(path, dbus_path(obj))
            self.assertRegex(path, r"^(/[A-Za-z0-9_]+)+$")
            self.assertEqual(args[0], typ)
            self.assertEqual(args[2], sig)
            self.assertEqual(args[4], n)  # seqnum
            if "\n" not in payload and '"' not in obj:  # dbus-monitor prints them raw
                self.assertEqual(args[1], obj)
                self.assertEqual(args[3], payload)
        self.assertEqual(sigs[0][0], "/org/kernel/devices/system/cpu/temperature")
        self.assertEqual(sigs[1][0], "/org/kernel/block/sda_2d1_5fx/_/y/_")
        d.stop_ok(self)

    def test_signals_come_from_the_name(self):
        """keventd owns org.kernel.Event1, so a listener can match on it."""
        named = Monitor(self.address, "type='signal',sender='%s',interface='org.kernel.Event'"
                        % NAME)
        self.addCleanup(named.close)
        d = self.start("--dbus", env={"DBUS_SYSTEM_BUS_ADDRESS": self.address})
        d.send("general", "/org/kernel/test", "one")
        d.send("general", "/org/kernel/test", "two")
        senders = []
        self.assertEqual([a[2] for _, _, a in named.wait_signals(2)], ["one", "two"])
        self.mon.wait_signals(2)
        self.mon.signals(senders)
        owner = name_owner(self.address)
        self.assertIsNotNone(owner, "no one owns " + NAME)
        self.assertEqual(senders, [owner, owner])
        d.wait_log("D-Bus: owns the name " + NAME)
        d.stop_ok(self)

    def test_only_root_may_own_the_name(self):
        if not kdtest.IS_ROOT:
            self.skipTest("needs root, to try as another user")
        rc, out = bus_call(self.address, "RequestName", "string:" + NAME, "uint32:4",
                           user="nobody")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("AccessDenied", out)
        rc, out = bus_call(self.address, "RequestName", "string:" + NAME, "uint32:4")
        self.assertEqual(rc, 0, out)
        self.assertIn("uint32 1", out)  # DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER

    def test_name_taken_is_not_fatal(self):
        """A second keventd logs that the name is taken, forwards all the
        same, and takes the name once the first lets it go."""
        env = {"DBUS_SYSTEM_BUS_ADDRESS": self.address}
        first = self.start("--dbus", env=env)
        first.wait_log("D-Bus: owns the name " + NAME)
        s2 = kdtest.Scratch()
        self.addCleanup(s2.cleanup)
        second = kdtest.Daemon(s2, args=["--dbus"], env=env)
        self.daemons.append(second)
        second.start()
        second.wait_log("D-Bus: the name %s is owned by another connection" % NAME)
        second.send("general", "/org/kernel/test", "second")
        senders = []
        self.assertEqual(self.mon.wait_signals(1)[0][2][2], "second")
        self.mon.signals(senders)
        self.assertNotEqual(senders[0], name_owner(self.address))
        first.stop_ok(self)
        second.wait_log("D-Bus: owns the name " + NAME)
        second.send("general", "/org/kernel/test", "now-named")
        self.mon.wait_signals(2)
        senders = []
        self.mon.signals(senders)
        self.assertEqual(senders[1], name_owner(self.address))
        second.stop_ok(self)

    def test_no_bus_is_not_fatal(self):
        d = self.start("--dbus", env={"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + self.s.path("nobus")})
        d.send("general", "/org/kernel/test", "still-works")
        d.wait_idle(1)
        self.assertIn("D-Bus: cannot connect to the system bus", d.logtext())
        d.stop_ok(self)

    def test_bus_that_comes_later_is_connected(self):
        # at boot keventd starts before the system bus (keventd(8), Boot):
        # it connects once the bus is there, and says what it dropped
        d = self.start("--dbus", env={"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + self.s.path("later")})
        d.wait_log("D-Bus: cannot connect to the system bus")
        d.send("general", "/org/kernel/test", "before")
        d.wait_idle(1)
        _, address = self.start_bus("later")
        mon = Monitor(address)
        self.addCleanup(mon.close)
        d.wait_log("D-Bus: connected to the system bus: sending event signals (1 dropped")
        d.send("general", "/org/kernel/test", "after")
        sigs = mon.wait_signals(1)
        self.assertEqual([s[2][2] for s in sigs], ["after"])
        senders = []
        mon.signals(senders)  # from the connection that asked for the name again
        self.assertEqual(senders[0], name_owner(address))
        d.stop_ok(self)

    def test_bus_goes_away(self):
        d = self.start("--dbus", env={"DBUS_SYSTEM_BUS_ADDRESS": self.address})
        d.send("general", "/org/kernel/test", "one")
        self.mon.wait_signals(1)
        self.bus.kill()
        d.wait_log("D-Bus: connection lost")
        d.send("general", "/org/kernel/test", "two")
        d.wait_idle(2)
        d.stop_ok(self)

    def test_introspection_xml(self):
        root = ET.parse(os.path.join(SRC, "docs", "org.kernel.Event.xml")).getroot()
        iface = root.find("interface[@name='org.kernel.Event']")
        sig = iface.find("signal[@name='Event']")
        self.assertEqual([(a.get("name"), a.get("type")) for a in sig.findall("arg")],
                         [("type", "s"), ("object", "s"), ("signal", "s"), ("payload", "s"),
                          ("seqnum", "t")])


if __name__ == "__main__":
    if not kdtest.have_binaries():
        print("SKIP: keventd/keventctl not built")
        sys.exit(77)
    r = subprocess.run([kdtest.KEVENTD, "--help"], capture_output=True, text=True)
    if "not in this build" in r.stdout or "--dbus" not in r.stdout:
        print("SKIP: keventd was built without D-Bus (KEVENT_DBUS=OFF: no libsystemd-dev)")
        sys.exit(77)
    kdtest.main()

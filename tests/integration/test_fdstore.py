#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The event sockets across a restart, through the service manager's
file-descriptor store.  The test is the service manager: it reads the
FDSTORE=1 messages (SCM_RIGHTS) that keventd sends to $NOTIFY_SOCKET at a
clean stop, and starts the next keventd with those descriptors as systemd
does (LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID = keventd's pid, descriptors
from 3 up).  Real kernel uevents sent while no keventd runs wait in the
stored socket and run at the next start; a descriptor that does not fit
its name is refused, logged and closed."""
import array
import os
import select
import socket
import sys

import kdtest
from kdtest import DaemonTest

UEVENT = "/sys/class/net/lo/uevent"
DEVPATH = "/devices/virtual/net/lo"
NETLINK_KOBJECT_UEVENT = 15
N = 50

# Puts the descriptors named on its command line at 3, 4, ... and execs
# keventd with LISTEN_* set for its own pid, which keventd keeps.
WRAPPER = r"""
import fcntl, os, sys
n = int(sys.argv[1])
names, fds, argv = sys.argv[2:2 + n], [int(x) for x in sys.argv[2 + n:2 + 2 * n]], sys.argv[2 + 2 * n:]
high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]
for fd in fds:
    os.close(fd)
for i, fd in enumerate(high):
    os.dup2(fd, 3 + i)
    os.close(fd)
os.environ.update(LISTEN_FDS=str(n), LISTEN_FDNAMES=":".join(names), LISTEN_PID=str(os.getpid()))
os.execv(argv[0], argv)
"""


def stored_fds(d):
    """Every FDSTORE=1 message keventd sent before it exited: [(name, fd)],
    and the text of each message."""
    out, texts = [], []
    d.nsock.setblocking(False)
    fdsize = array.array("i").itemsize
    while True:
        try:
            msg, anc, _, _ = d.nsock.recvmsg(4096, socket.CMSG_SPACE(16 * fdsize))
        except BlockingIOError:
            break
        fds = array.array("i")
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fdsize])
        text = msg.decode()
        texts.append(text)
        fields = dict(l.split("=", 1) for l in text.split("\n") if "=" in l)
        name = fields.get("FDNAME", "stored")
        if ":" in name or not name.isprintable():
            name = "stored"  # as systemd does with a name LISTEN_FDNAMES cannot carry
        if fields.get("FDSTORE") == "1":
            out += [(name, fd) for fd in fds]
        else:
            for fd in fds:
                os.close(fd)
    return out, texts



def done(st):
    """Nothing queued or running: every run counted has ended."""
    return st["queue"]["pending"] == 0 and st["queue"]["running"] == 0

class FdStore(DaemonTest):
    def setUp(self):
        if not kdtest.IS_ROOT or not os.access(UEVENT, os.W_OK):
            self.skipTest("needs root and a writable " + UEVENT)
        super().setUp()
        self.fds = []

    def tearDown(self):
        for fd in self.fds:
            os.close(fd)
        super().tearDown()

    def start_with(self, named, *args):
        """keventd with the descriptors [(name, fd)] passed as systemd does."""
        wrap = [kdtest.PYTHON, "-c", WRAPPER, str(len(named))]
        wrap += [n for n, _ in named] + [str(fd) for _, fd in named]
        d = kdtest.Daemon(self.s, args=args, wrap=wrap, pass_fds=[fd for _, fd in named])
        self.daemons.append(d)
        d.start()
        for _, fd in named:  # keventd has them now
            os.close(fd)
            self.fds.remove(fd)
        return d

    def record_rule(self):
        out = self.s.path("seqnums")
        rec = self.s.script("rec.sh", "#!/bin/sh\necho \"$SEQNUM\" >>\"$1\"\n")
        self.s.write_rule("10-lo.yaml", (
            "rules:\n"
            "  - name: lo-change\n"
            "    match: {source: udev, type: hotplug, object: /org/kernel%s, signal: change}\n"
            "    run: [%s, %s]\n") % (DEVPATH, kdtest.yq(rec), kdtest.yq(out)))
        return out

    def change_lo(self, n):
        """n real uevents of lo; their SEQNUMs, as a monitor of our own saw them."""
        mon = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
        mon.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        mon.bind((0, 1))
        seqs = set()
        try:
            for _ in range(n):
                with open(UEVENT, "w") as f:
                    f.write("change")
            # every uevent of lo is in the monitor's buffer once the writes returned
            while True:
                r, _, _ = select.select([mon], [], [], 0)
                if not r:
                    break
                fields = mon.recv(65536).split(b"\0")
                props = dict(f.decode().split("=", 1) for f in fields[1:] if b"=" in f)
                if props.get("DEVPATH") == DEVPATH and props.get("ACTION") == "change":
                    seqs.add(int(props["SEQNUM"]))
        finally:
            mon.close()
        self.assertEqual(len(seqs), n, "our own monitor saw every uevent of lo")
        return seqs

    def runs(self, path):
        """The SEQNUMs the handler wrote: read once its runs are over (a
        run is counted when it starts, before it writes)."""
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [int(l) for l in f.read().split()]

    def test_uevents_sent_while_stopped_run_at_the_next_start(self):
        out = self.record_rule()
        args = ("--sources", "udev,socket", "--udev-monitor", "kernel")
        d1 = self.start(*args)
        first = self.change_lo(1)
        d1.wait_status(lambda st: st["rules"][0]["runs"] == 1, "the first uevent run")
        d1.stop_ok(self)
        named, texts = stored_fds(d1)
        self.fds += [fd for _, fd in named]
        self.assertEqual([n for n, _ in named], ["udev"], "messages: %r" % texts)
        self.assertIn("FDSTORE=1\nFDNAME=udev\nFDPOLL=0", texts)
        self.assertIn("fd store: 1 descriptors handed to the service manager", d1.logtext())

        meanwhile = self.change_lo(N)  # no keventd reads
        d2 = self.start_with(named, *args)
        d2.wait_status(lambda st: st["rules"][0]["runs"] == N and done(st),
                       "the %d uevents sent while stopped run" % N)
        self.assertEqual(sorted(self.runs(out)), sorted(first | meanwhile))
        log = d2.logtext()
        self.assertIn("udev: the monitor's socket of the last run taken back", log)
        self.assertIn("fd store: 1 of 1 descriptors taken back", log)
        # the store is emptied of what was taken: the next stop hands it over again
        self.assertTrue(any("FDSTOREREMOVE=1\nFDNAME=udev" == n for n in d2.notes), d2.notes)
        # and it still reads what comes now
        now = self.change_lo(1)
        d2.wait_status(lambda st: st["rules"][0]["runs"] == N + 1 and done(st),
                       "a uevent after the start")
        self.assertEqual(set(self.runs(out)), first | meanwhile | now)
        st = d2.status()
        self.assertEqual(st["sources"]["udev"]["rejected"], 0)
        d2.stop_ok(self)
        again, _ = stored_fds(d2)
        self.fds += [fd for _, fd in again]
        self.assertEqual([n for n, _ in again], ["udev"])

    def test_descriptors_that_do_not_fit_are_refused_and_closed(self):
        out = self.record_rule()
        # a socket pair end under a known name, a name nothing takes, and
        # a source that is not enabled
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        odd_mine, odd = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        off_mine, off = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        named = [("udev", os.dup(theirs.fileno())), ("bogus", os.dup(odd.fileno())),
                 ("genl-acpi", os.dup(off.fileno()))]
        self.fds += [fd for _, fd in named]
        for s in (theirs, odd, off):
            s.close()
        d = self.start_with(named, "--sources", "udev,socket", "--udev-monitor", "kernel")
        log = d.logtext()
        self.assertIn("fd store: udev: not taken back (not a netlink socket): closed", log)
        self.assertIn("fd store: bogus: not taken back", log)
        self.assertIn("fd store: genl-acpi: not taken back", log)
        self.assertIn("fd store: 0 of 3 descriptors taken back", log)
        # closed: keventd holds no copy, so the other ends have no peer
        for s in (mine, odd_mine, off_mine):
            with self.assertRaises(ConnectionRefusedError):
                s.send(b"x")
            s.close()
        # keventd reads uevents on a socket of its own
        self.change_lo(1)
        d.wait_status(lambda st: st["rules"][0]["runs"] == 1, "a uevent on a fresh socket")
        d.stop_ok(self)

    def test_a_uevent_socket_of_another_group_is_refused(self):
        """udevd's group while keventd reads the kernel's: --udev-monitor
        changed across the restart."""
        self.record_rule()
        wrong = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
        wrong.bind((0, 2))
        ino = os.fstat(wrong.fileno()).st_ino
        named = [("udev", os.dup(wrong.fileno()))]
        self.fds += [fd for _, fd in named]
        wrong.close()
        d = self.start_with(named, "--sources", "udev,socket", "--udev-monitor", "kernel")
        self.assertIn("fd store: udev: not taken back (a netlink socket bound to other "
                      "groups): closed", d.logtext())
        fd_dir = "/proc/%d/fd" % d.proc.pid
        held = []
        for f in os.listdir(fd_dir):
            try:
                held.append(os.stat(os.path.join(fd_dir, f)).st_ino)
            except FileNotFoundError:
                pass  # closed since the listing (a handler's pipe): not the socket
        self.assertNotIn(ino, held, "the refused socket is closed")
        self.change_lo(1)
        d.wait_status(lambda st: st["rules"][0]["runs"] == 1, "a uevent on a fresh socket")
        d.stop_ok(self)

    def test_generic_netlink_sockets_are_handed_over_and_taken_back(self):
        """The thermal and acpi families' sockets (this machine's kernel
        may send nothing on them: that they are the same sockets is what
        counts); one of another protocol under a family's name is refused."""
        args = ("--sources", "thermal,acpi,socket")
        d1 = self.start(*args)
        log = d1.logtext()
        if "thermal: subscribed" not in log or "acpi: subscribed" not in log:
            self.skipTest("the kernel has no thermal or acpi_event family")
        d1.stop_ok(self)
        named, texts = stored_fds(d1)
        self.fds += [fd for _, fd in named]
        self.assertEqual(sorted(n for n, _ in named), ["genl-acpi", "genl-thermal"], texts)
        inodes = {n: os.fstat(fd).st_ino for n, fd in named}
        wrong = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
        wrong.bind((0, 0))
        acpi = [(n, fd) for n, fd in named if n == "genl-acpi"]
        named = [(n, fd) for n, fd in named if n != "genl-acpi"]
        named.append(("genl-acpi", os.dup(wrong.fileno())))
        self.fds.append(named[-1][1])
        wrong.close()
        d2 = self.start_with(named, *args)
        log = d2.logtext()
        self.assertIn("thermal: the family's socket of the last run taken back", log)
        self.assertIn("fd store: genl-acpi: not taken back (a netlink socket of another "
                      "protocol): closed", log)
        self.assertIn("acpi: subscribed", log)
        self.assertIn("fd store: 1 of 2 descriptors taken back", log)
        d2.stop_ok(self)
        again, _ = stored_fds(d2)
        self.fds += [fd for _, fd in again]
        got = {n: os.fstat(fd).st_ino for n, fd in again}
        self.assertEqual(got["genl-thermal"], inodes["genl-thermal"], "the same socket again")
        self.assertNotEqual(got["genl-acpi"], inodes["genl-acpi"], "a fresh one for acpi")
        for _, fd in acpi:
            os.close(fd)
            self.fds.remove(fd)


if __name__ == "__main__":
    kdtest.main()

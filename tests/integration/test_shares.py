#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One source cannot starve another (keventd(8), --queue-size and SIGNALS):
4,200 posts to a rule whose handler blocks fill the socket source's share
of the queue and pause it, while a real kernel uevent (root writes "change"
to /dev/null's uevent file) is still read and its rule fires, the socket's
share still full and paused when it has; a flood of socket jobs for many
objects delays it by one handler slot, not by the queue (they are still
queued when it has run); how long it took is printed, not judged (speed is
the benchmarks'); and SIGTERM with the share full exits within the running
handler's timeout, dropping and logging what had not started."""
import os
import signal
import subprocess
import time

import kdtest
from kdtest import DaemonTest, TIMEOUT

UEVENT = "/sys/devices/virtual/mem/null/uevent"
NULL = "/org/kernel/devices/virtual/mem/null"
POSTS = 4200
# --queue-size 4096 (the default) between the two sources that are on
SHARE = 2048
# events named one by one in the log at a stop (KDAEMON_STOP_LOG_NAMED)
NAMED = 10


class Shares(DaemonTest):
    def setUp(self):
        if not kdtest.IS_ROOT or not os.access(UEVENT, os.W_OK):
            self.skipTest("needs root and a writable " + UEVENT)
        super().setUp()

    def rules(self, flood):
        """The uevent's rule (it tells the FIFO "done null") and FLOOD, the
        YAML of the socket's rule."""
        self.s.write_rule("10-shares.yaml", (
            "rules:\n"
            "  - name: null-change\n"
            "    match: {source: udev, object: %s, signal: change}\n"
            "    run: %s\n"
            "%s") % (NULL, self.h("append", self.s.path("out", "null"), "null",
                                  self.s.fifo.path), flood))

    def start_both(self, *args):
        return self.start("--sources", "socket,udev", "--udev-monitor", "kernel", *args)

    def post(self, d, lines):
        """keventctl send --batch of LINES in the background: it waits once
        the socket's share is full."""
        path = self.s.path("out", "batch")
        with open(path, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        p = subprocess.Popen([kdtest.KEVENTCTL, "--control", self.s.ctl, "send", "--batch", path],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.procs.append(p)
        return p

    def uevent_fires(self, d):
        """Writes the uevent; returns the seconds until its handler ran.
        What proves it was not held behind the socket's jobs is the state
        the callers find after it, not the time."""
        t0 = time.monotonic()
        with open(UEVENT, "w") as f:
            f.write("change")
        self.assertEqual(self.s.fifo.line(), "done null", "the uevent's rule did not fire")
        return time.monotonic() - t0

    def flood_one_object(self, timeout):
        """POSTS posts for one object whose handler blocks on the gate
        "flood": the first runs, the socket's share fills, the rest wait."""
        s = self.s
        self.rules("  - name: flood\n"
                   "    match: {source: socket, object: /flood, signal: w}\n"
                   "    timeout: %s\n"
                   "    run: %s\n" % (timeout, self.h("wait", s.fifo.path, s.gates.path("flood"),
                                                      "flood")))
        d = self.start_both()
        self.post(d, ["general\t/flood\tw"] * POSTS)
        self.assertEqual(s.fifo.line().split()[:2], ["start", "flood"])
        st = d.wait_status(lambda st: st["sources"]["socket"]["paused"], "the socket paused")
        sock, udev = st["sources"]["socket"], st["sources"]["udev"]
        self.assertEqual((sock["pending"], sock["share"], sock["paused_times"]),
                         (SHARE, SHARE, 1))
        self.assertEqual((udev["pending"], udev["share"], udev["paused"]), (0, SHARE, False))
        self.assertTrue(st["queue"]["paused"])
        self.assertEqual(st["queue"]["size"], 4096)
        return d, st

    def test_uevent_fires_while_posts_fill_the_socket_share(self):
        d, _ = self.flood_one_object("60s")
        took = self.uevent_fires(d)
        # the posts still wait: the socket is paused with its share full
        st = d.status()
        self.assertEqual(st["sources"]["socket"]["pending"], SHARE)
        self.assertTrue(st["sources"]["socket"]["paused"])
        self.assertGreaterEqual(st["sources"]["udev"]["received"], 1)
        self.assertFalse(st["sources"]["udev"]["paused"])
        self.assertIn("socket: its share of the queue is full (%d events): pausing it" % SHARE,
                      d.logtext())
        self.assertNotIn("udev: its share", d.logtext())
        print("\nuevent handled %.0f ms after it was sent, %d socket events queued"
              % (took * 1000, SHARE))
        d.proc.send_signal(signal.SIGTERM)
        d.wait_notify("STOPPING=1")
        self.s.gates.release("flood")
        self.assertEqual(self.s.fifo.line(), "end flood")
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())

    def test_flood_of_many_objects_delays_a_uevent_by_one_slot(self):
        """Socket jobs for 2,000 objects, two at a time, 200 ms each: the
        queue holds minutes of work, and the uevent waits for one slot."""
        self.rules("  - name: busy\n"
                   "    match: {source: socket, signal: b}\n"
                   "    run: [/bin/sleep, \"0.2\"]\n")
        d = self.start_both("--max-children", "2")
        n = 2000
        p = self.post(d, ["general\t/busy/%d\tb" % i for i in range(n)])
        self.assertEqual(p.wait(TIMEOUT), 0, p.stderr.read().decode())
        st = d.status()
        self.assertGreater(st["sources"]["socket"]["pending"], n - 100)
        took = self.uevent_fires(d)
        st = d.status()
        self.assertGreater(st["sources"]["socket"]["pending"], n - 100,
                           "the socket's jobs ran before the uevent's")
        print("\nuevent handled %.0f ms after it was sent, behind %d queued socket jobs"
              % (took * 1000, st["sources"]["socket"]["pending"]))
        d.stop_ok(self)

    def test_sigterm_with_a_full_share_exits_within_the_running_timeout(self):
        d, st = self.flood_one_object("4s")
        queued = st["sources"]["socket"]["pending"] - 1  # one runs
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        # the running handler blocks until its timeout kills it; nothing else starts
        self.assertEqual(d.proc.wait(4 + 5), 0, d.logtext())
        took = time.monotonic() - t0
        log = d.logtext()
        self.assertIn("Terminated: stopping; handlers running: 1; queued events not started, "
                      "kept in the journal for the next start: %d (socket %d)"
                      % (queued, queued), log)
        named = [l for l in log.splitlines() if "not run: socket seq " in l]
        self.assertEqual(len(named), NAMED)
        self.assertIn("not run: socket seq 2: general /flood w (rule flood); kept in the "
                      "journal for the next start", named[0])
        self.assertIn("not run: %d more, not named; the next start handles %d of them again"
                      % (queued - len(named), queued - len(named)), log)
        self.assertRegex(log, r"rule flood\[\d+\]: timed out after 4s, sending SIGTERM")
        self.assertIn("stopped; events kept in the journal for the next start: %d (socket %d)"
                      % (queued, queued), log)
        self.assertNotIn("dropped", log)
        # and no other handler started: everything they told the FIFO is in by now
        try:
            rest = self.s.fifo.buf + os.read(self.s.fifo.r, 65536)
        except BlockingIOError:
            rest = self.s.fifo.buf
        told = self.s.fifo.seen + rest.decode().splitlines()
        self.assertEqual([l.split()[:2] for l in told], [["start", "flood"]])
        print("\nkeventd exited %.1f s after SIGTERM, %d queued events kept" % (took, queued))


if __name__ == "__main__":
    kdtest.main()

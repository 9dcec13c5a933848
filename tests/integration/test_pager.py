#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The reading commands' pager (keventctl(8), ENVIRONMENT): on a terminal
(a pseudo-terminal here) `events`, `status`, `explain`, `conditions` and
`cat` write through $KEVENTCTL_PAGER, else $PAGER; not with --no-pager
(before or after the command), not when stdout is a pipe, not when the
pager is "cat", and never for --json or conditions --check."""
import os
import pty
import subprocess

import kdtest
from kdtest import KEVENTCTL, TIMEOUT

# the pager: what it was given, in a file, and a mark on the terminal
PAGER = """#!/bin/sh
cat >"$1"
echo paged
"""


class PagerTest(kdtest.DaemonTest):
    def setUp(self):
        super().setUp()
        self.pager = self.s.script("pager.sh", PAGER)
        self.paged = self.s.path("paged")
        self.d = self.start("--sources", "socket,condition")
        self.d.send("general", "/org/kernel/pager", "hello")
        self.d.wait_idle(1)

    def on_tty(self, *args, env=None):
        """keventctl ARGS with stdout and stderr a pseudo-terminal: (exit
        status, what the terminal showed)."""
        if os.path.exists(self.paged):
            os.unlink(self.paged)
        master, slave = pty.openpty()
        e = dict(os.environ)
        e.pop("PAGER", None)
        e["TERM"] = "xterm"
        e["KEVENTCTL_PAGER"] = "%s %s" % (self.pager, self.paged)
        e.update(env or {})
        p = subprocess.Popen([KEVENTCTL, "--control", self.s.ctl] + list(args),
                             stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=e)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal is gone
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        return p.wait(TIMEOUT), out.decode(errors="replace").replace("\r\n", "\n")

    def paged_text(self):
        with open(self.paged) as f:
            return f.read()

    def test_events_through_the_pager(self):
        rc, tty = self.on_tty("events")
        self.assertEqual(rc, 0, tty)
        self.assertIn("/org/kernel/pager hello", self.paged_text())
        self.assertEqual(tty, "paged\n")

    def test_each_reading_command(self):
        for args, want in ((("status",), "running"),
                           (("explain", "last"), "/org/kernel/pager"),
                           (("conditions",), "no condition holds"),
                           (("--no-pager", "events"), None),
                           (("events", "--no-pager"), None),
                           (("events", "--json"), None),
                           (("conditions", "--check"), None)):
            rc, tty = self.on_tty(*args)
            if want:
                self.assertIn(want, self.paged_text(), args)
                self.assertEqual(tty, "paged\n", args)
            else:
                self.assertFalse(os.path.exists(self.paged), args)
                self.assertNotIn("paged", tty, args)

    def test_cat_through_the_pager(self):
        self.s.write_rule("10-r.yaml", "rules:\n  - name: r\n    match: {signal: x}\n")
        rc, tty = self.on_tty("cat", "10-r.yaml", "--rules-dir", self.s.rules)
        self.assertEqual(rc, 0, tty)
        self.assertIn("name: r", self.paged_text())

    def test_cat_means_none(self):
        rc, tty = self.on_tty("events", env={"KEVENTCTL_PAGER": "cat"})
        self.assertEqual(rc, 0, tty)
        self.assertIn("/org/kernel/pager hello", tty)
        rc, tty = self.on_tty("events", env={"KEVENTCTL_PAGER": ""})
        self.assertIn("/org/kernel/pager hello", tty)

    def test_not_on_a_dumb_terminal(self):
        for term in ("dumb", ""):
            rc, tty = self.on_tty("events", env={"TERM": term})
            self.assertEqual(rc, 0, tty)
            self.assertIn("/org/kernel/pager hello", tty)
            self.assertFalse(os.path.exists(self.paged), term)

    def test_pager_from_PAGER(self):
        if os.path.exists(self.paged):
            os.unlink(self.paged)
        e = {"PAGER": "%s %s" % (self.pager, self.paged)}
        master, slave = pty.openpty()
        env = dict(os.environ)
        env.pop("KEVENTCTL_PAGER", None)
        env["TERM"] = "xterm"
        env.update(e)
        p = subprocess.Popen([KEVENTCTL, "--control", self.s.ctl, "events"],
                             stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        try:
            while os.read(master, 65536):
                pass
        except OSError:
            pass
        os.close(master)
        self.assertEqual(p.wait(TIMEOUT), 0)
        self.assertIn("/org/kernel/pager hello", self.paged_text())

    def test_not_on_a_pipe(self):
        e = dict(os.environ)
        e["KEVENTCTL_PAGER"] = "%s %s" % (self.pager, self.paged)
        r = subprocess.run([KEVENTCTL, "--control", self.s.ctl, "events"], env=e,
                           capture_output=True, text=True, timeout=TIMEOUT,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("/org/kernel/pager hello", r.stdout)
        self.assertFalse(os.path.exists(self.paged))


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The state directory is keventd's alone (keventd(8), --state-dir;
docs/SECURITY.md): one that group or others may write, or that is not
keventd's user's, stops keventd at start with the reason; a journal segment
that is not keventd's user's is never replayed; a symlink named like the
next segment is never written through; a second keventd on one state
directory refuses to start, naming state.lock."""
import os
import shutil
import stat
import subprocess

import kdtest
from kdtest import KEVENTD, TIMEOUT

NOBODY = 65534
SEGMENT = "journal-%020d"

# a handler that writes down which event it ran for, in one write
RECORD = """#!/bin/sh
printf '%s\\n' "$KEVENT_PAYLOAD" >>"$1"
"""


class StateDir(kdtest.DaemonTest):
    def refused(self, state, *args):
        """keventd on state: it must exit 1 before it listens; its log."""
        argv = [KEVENTD, "--rules-dir", self.s.rules, "--control", self.s.ctl,
                "--sources", "socket", "--state-dir", state] + list(args)
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=TIMEOUT, env=env)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertFalse(os.path.exists(self.s.ctl), "it listened:\n" + r.stderr)
        return r.stderr

    def rules(self):
        s = self.s
        self.out = s.path("out", "runs")
        rec = s.script("record.sh", RECORD)
        s.write_rule("10-s.yaml",
                     "rules:\n"
                     "  - name: gate\n"
                     "    match: {signal: gate}\n"
                     "    run: %s\n"
                     "  - name: rec\n"
                     "    match: {signal: x}\n"
                     "    run: %s\n"
                     % (self.h("wait", s.fifo.path, s.gates.path("g"), "g"),
                        "[%s, %s]" % (kdtest.yq(rec), kdtest.yq(self.out))))

    def runs(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out) as f:
            return f.read().split()

    def test_writable_directory_refused(self):
        """A state directory that group or others may write, or a symlink
        to a good one, stops keventd at start, saying why; nothing is made
        in it."""
        for mode in (0o777, 0o770, 0o702, 0o1777):
            state = self.s.path("state-%o" % mode)
            os.mkdir(state)
            os.chmod(state, mode)
            log = self.refused(state)
            self.assertIn("state directory %s: writable by group or others (chmod go-w it); "
                          "refusing to start\n" % state, log)
            self.assertEqual(os.listdir(state), [])
        real = self.s.path("real")
        os.mkdir(real, 0o700)
        link = self.s.path("link")
        os.symlink(real, link)
        log = self.refused(link)
        self.assertIn("state directory %s: a symbolic link, not followed; refusing to start\n"
                      % link, log)
        self.assertEqual(os.listdir(real), [])

    def test_foreign_directory_refused(self):
        """A state directory of another user stops keventd at start."""
        if not kdtest.IS_ROOT:
            self.skipTest("needs root to give a directory away")
        state = self.s.path("state-nobody")
        os.mkdir(state, 0o700)
        os.chown(state, NOBODY, NOBODY)
        log = self.refused(state)
        self.assertIn("state directory %s: not owned by keventd's user; refusing to start\n"
                      % state, log)

    def test_made_once_mode_0700(self):
        """A missing state directory is made, mode 0700, with state.lock."""
        d = self.start()
        st = os.stat(d.state_dir)
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o700)
        self.assertTrue(os.path.exists(os.path.join(d.state_dir, "state.lock")))
        self.assertFalse(os.path.exists(os.path.join(d.state_dir, "journal.lock")))
        d.stop_ok(self)

    def test_foreign_segment_not_replayed(self):
        """Events acknowledged before a kill are in the journal; once the
        segment is another user's, the next keventd refuses it, names it,
        runs none of its events and leaves it as found."""
        if not kdtest.IS_ROOT:
            self.skipTest("needs root to give a file away")
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        lines = "".join("general\t/one\tx\t%d\n" % i for i in range(5))
        r = d.ctl("send", "--batch", "-", input=lines)
        self.assertEqual(r.returncode, 0, r.stderr)
        d.kill()
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        seg = os.path.join(state, SEGMENT % 1)
        size = os.path.getsize(seg)
        self.assertGreater(size, 0)
        os.chown(seg, NOBODY, NOBODY)

        d2 = self.start("--state-dir", state)
        st = d2.status()  # the journal is replayed before keventd is ready
        self.assertEqual(st["events"]["received"], 0, d2.logtext())
        self.assertEqual(st["journal"]["unfinished"], 0)
        d2.wait_log("journal: %s: not owned by keventd's user: refused; not replayed\n"
                    % (SEGMENT % 1))
        # a new event gets a segment of its own, past the refused one
        d2.send("general", "/two", "x", "new")
        d2.wait_idle(1)
        d2.stop_ok(self)
        self.assertEqual(self.runs(), ["new"])
        self.assertEqual(os.stat(seg).st_uid, NOBODY)
        self.assertEqual(os.path.getsize(seg), size)

    def test_symlink_at_next_segment_not_followed(self):
        """A symlink named like the next journal segment, put there while
        keventd runs, is not written through when the segment fills: the
        file it points at is untouched."""
        self.rules()
        state = self.s.path("state")
        victim = self.s.path("victim")
        with open(victim, "wb") as f:
            f.write(b"keep\n")
        d = self.start("--state-dir", state, "--journal-size", "64K")
        os.symlink(victim, os.path.join(state, SEGMENT % 2))
        # held behind the gate: live records, past a segment's 16 KiB
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        lines = "".join("general\t/one\tx\t%d%s\n" % (i, "p" * 100) for i in range(200))
        r = d.ctl("send", "--batch", "-", input=lines)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(os.path.getsize(os.path.join(state, SEGMENT % 1)), 16 << 10)
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), b"keep\n")
        self.assertTrue(os.path.islink(os.path.join(state, SEGMENT % 2)))
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        d.wait_idle(201)
        d.stop_ok(self)
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), b"keep\n")
        self.assertEqual(len(self.runs()), 200)

    def test_second_keventd_refused(self):
        """A second keventd on a state directory in use refuses to start,
        naming state.lock; the first runs on."""
        d = self.start()
        ctl = self.s.ctl
        self.s.ctl = self.s.path("ctl-2")
        try:
            log = self.refused(d.state_dir)
        finally:
            self.s.ctl = ctl
        self.assertIn("state directory %s: another keventd holds its state.lock; "
                      "refusing to start\n" % d.state_dir, log)
        d.send("general", "/still", "x")
        d.stop_ok(self)

    def test_shared_with_the_control_socket_mode_0755(self):
        """The control socket's directory is made first, mode 0755 whatever
        the umask, also when it is the state directory (/run/keventd by
        default): the socket in it is 0600 (0660 with --control-group),
        and a member of that group reaches it."""
        run = self.s.path("run")
        self.s.ctl = os.path.join(run, "control")
        args = ["--state-dir", run]
        member = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        grouped = kdtest.IS_ROOT and shutil.which("setpriv") and self.has_group("nogroup")
        if grouped:
            args += ["--control-group", "nogroup"]
        d = self.start(*args, preexec=lambda: os.umask(0o077))
        self.assertEqual(stat.S_IMODE(os.stat(run).st_mode), 0o755)
        self.assertTrue(os.path.exists(os.path.join(run, "state.lock")))
        self.assertEqual(stat.S_IMODE(os.lstat(self.s.ctl).st_mode), 0o660 if grouped else 0o600)
        if grouped:
            r = d.ctl("status", prefix=member)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("keeps the members of --control-group out", d.logtext())
        d.stop_ok(self)

    @staticmethod
    def has_group(name):
        import grp
        try:
            grp.getgrnam(name)
            return True
        except KeyError:
            return False


if __name__ == "__main__":
    kdtest.main()

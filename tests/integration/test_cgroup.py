#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Containment (keventd(8), CONTAINMENT): without a delegated cgroup
keventd says so and keeps to the process group; with one (here a cgroup
the test makes and names with KEVENTD_CGROUP_ROOT, which needs root and a
writable cgroup2 mount) every run gets a cgroup of its own, and what a
handler leaves behind, even after setsid(), is killed when it exits or
times out, and the cgroup removed."""
import os
import select
import signal

import kdtest
from kdtest import DaemonTest, yq


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.startswith("cgroup2 "):
                return pre.split()[4]
    return None


def wait_gone(pid, timeout=kdtest.TIMEOUT):
    """Waits, on its pidfd, for a process that is not our child to end."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        r, _, _ = select.select([fd], [], [], timeout)
        return bool(r)
    finally:
        os.close(fd)


ESCAPE = ("setsid sh -c 'sleep 1000 & echo $! > %s; wait' </dev/null >/dev/null 2>&1 & "
          "while [ ! -s %s ]; do :; done; echo \"esc $(cat %s) $(cat /proc/self/cgroup | grep ^0::)\" > %s")


class Fallback(DaemonTest):
    def test_no_delegation_process_group(self):
        self.s.write_rule("10-x.yaml", "rules:\n  - name: lim\n    run: /bin/true\n"
                          "    memory_max: 20M\n    tasks_max: 8\n")
        d = self.start(env={"KEVENTD_CGROUP_ROOT": "/nonexistent/keventd-test"})
        d.wait_log("containment: process group (no cgroup per handler run: cannot open the cgroup")
        st = d.status()
        self.assertFalse(st["runs"]["containment_cgroup"])
        self.assertTrue(st["runs"]["containment_process_group"])
        self.assertIn("(containment: process-group)", d.ctl("status").stdout)
        d.send("general", "/x", "go")
        d.wait_log("rule lim: memory_max not enforced: keventd has no cgroup to run handlers in")
        d.wait_status(lambda s: s["events"]["handled"] == 1, "the run done")
        d.stop_ok(self)

    def test_root_cgroup_is_not_delegated(self):
        preexec = None
        with open("/proc/self/cgroup") as f:
            in_root = "0::/\n" in f.read().splitlines(True)
        if not in_root:  # as under systemd: root moves keventd there
            mnt = cgroup2_mount()
            if not kdtest.IS_ROOT or not mnt:
                self.skipTest("not in the root cgroup here, and only root can move keventd there")
            procs = os.path.join(mnt, "cgroup.procs")

            def preexec():
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))
        d = self.start(preexec=preexec)
        d.wait_log("containment: process group (no cgroup per handler run: keventd is in the root cgroup")
        d.stop_ok(self)


class PerRun(DaemonTest):
    def setUp(self):
        super().setUp()
        mnt = cgroup2_mount()
        if not kdtest.IS_ROOT or not mnt or not os.access(mnt, os.W_OK) \
                or not os.path.exists(os.path.join(mnt, "cgroup.procs")):
            self.skipTest("needs root and a writable cgroup2 mount")
        self.cg = os.path.join(mnt, "kdtest-%d-%s" % (os.getpid(), self.id().rsplit(".", 1)[1][:20]))
        os.mkdir(self.cg)

    def tearDown(self):
        super().tearDown()  # keventd killed: its leaf is empty
        leaf = os.path.join(self.cg, "keventd")
        for d in (leaf, self.cg):
            if os.path.isdir(d):
                os.rmdir(d)

    def runs_left(self):
        return sorted(e for e in os.listdir(self.cg)
                      if os.path.isdir(os.path.join(self.cg, e)) and e != "keventd")

    def escape_rule(self, name, tag, extra=""):
        # one file per run: two runs of a rule at once must not share it
        pidfile = self.s.path("esc-%s-$KEVENT_SEQNUM.pid" % tag)
        return ("  - name: %s\n    match: {signal: %s}\n    shell: %s\n%s"
                % (name, tag, yq(ESCAPE % (pidfile, pidfile, pidfile, self.s.fifo.path)), extra))

    def start_in(self):
        d = self.start(env={"KEVENTD_CGROUP_ROOT": self.cg})
        d.wait_log("containment: a cgroup per handler run, under %s" % self.cg)
        with open(os.path.join(self.cg, "keventd", "cgroup.procs")) as f:
            self.assertIn(str(d.proc.pid), f.read().split())
        return d

    def escapee(self, tag):
        line = self.s.fifo.line().split()
        self.assertEqual(line[0], "esc")
        return int(line[1]), line[2]

    def test_setsid_escapee_killed_on_exit(self):
        self.s.write_rule("10-esc.yaml", "rules:\n" + self.escape_rule("esc", "exit"))
        d = self.start_in()
        st = d.status()
        self.assertTrue(st["runs"]["containment_cgroup"])
        self.assertIn("(containment: cgroup)", d.ctl("status").stdout)
        d.send("general", "/x", "exit")
        pid, cg = self.escapee("exit")
        # the handler ran in a cgroup of its own, named after the rule and event
        self.assertEqual(cg, "0::/%s/esc-1-1" % os.path.basename(self.cg))
        self.assertTrue(wait_gone(pid), "the setsid() sleep outlived its handler")
        d.wait_log("rule esc[")
        d.stop_ok(self)
        self.assertEqual(self.runs_left(), [])

    def test_setsid_escapee_killed_on_timeout(self):
        self.s.write_rule("10-esc.yaml", "rules:\n" + self.escape_rule(
            "slow", "slow", "    timeout: 1s\n").replace(
                "> %s" % self.s.fifo.path, "> %s; exec sleep 1000" % self.s.fifo.path))
        d = self.start_in()
        d.send("general", "/x", "slow")
        pid, _ = self.escapee("slow")
        d.wait_log("rule slow[")
        d.wait_status(lambda s: s["runs"]["timeouts"] == 1, "the timeout")
        self.assertTrue(wait_gone(pid), "the setsid() sleep outlived its handler's timeout")
        d.stop_ok(self)
        self.assertEqual(self.runs_left(), [])

    def test_runs_get_their_own_cgroups_in_parallel(self):
        self.s.write_rule("10-esc.yaml", "rules:\n" + self.escape_rule("par", "par"))
        d = self.start_in()
        d.send("general", "/a", "par")
        d.send("general", "/b", "par")
        got = sorted(self.escapee("par")[1] for _ in range(2))
        base = os.path.basename(self.cg)
        self.assertEqual(got, ["0::/%s/par-1-1" % base, "0::/%s/par-2-2" % base])
        d.wait_status(lambda s: s["events"]["handled"] == 2, "both runs done")
        d.stop_ok(self)
        self.assertEqual(self.runs_left(), [])


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""transient: true (keventd.rules(5), Transient units) where systemd is not
the service manager, as on this machine: the rule is an error when keventd
loads its rules, with its place, and never runs; the other rules of its
file load and run; keventctl verify warns and succeeds; keventctl test
shows the unit the rule would get.  The runs themselves, through systemd,
are the system tier's (tests/system/scenarios/85_transient.py).

Where systemd is the service manager, keventd and keventctl run in a mount
namespace of their own with an empty /run/systemd (root only), so that
they see a machine without it."""
import ctypes
import os
import subprocess
import unittest

import kdtest
from kdtest import DaemonTest

RULES = """rules:
  - name: normal
    match: {object: /x}
    run: [/bin/sh, -c, "echo ran > %s"]
  - name: long job
    match: {object: /x}
    run: [/bin/sleep, "30"]
    transient: true
    unit_properties:
      MemoryMax: 20M
      CPUQuota: 50%%
"""


SYSTEMD = os.path.isdir("/run/systemd/system")


def hide_systemd():
    """In a child before it runs keventd or keventctl: a mount namespace of
    its own, private, with a tmpfs over /run/systemd."""
    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWNS, MS_REC, MS_PRIVATE = 0x20000, 0x4000, 0x40000
    if (libc.unshare(CLONE_NEWNS) != 0
            or libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0
            or libc.mount(b"tmpfs", b"/run/systemd", b"tmpfs", 0, None) != 0):
        e = ctypes.get_errno()
        raise OSError(e, "hiding /run/systemd: " + os.strerror(e))


PREEXEC = hide_systemd if SYSTEMD else None


def run_ctl(*args):
    return subprocess.run([kdtest.KEVENTCTL] + list(args), capture_output=True, text=True,
                          timeout=kdtest.TIMEOUT, stdin=subprocess.DEVNULL, preexec_fn=PREEXEC)


@unittest.skipIf(SYSTEMD and not kdtest.IS_ROOT,
                 "systemd is the service manager here, and only root can hide it")
class WithoutSystemd(DaemonTest):
    def start(self, *args, **kw):
        return super().start(*args, preexec=PREEXEC, **kw)

    def test_refused_at_load_rest_runs(self):
        out = os.path.join(self.s.dir, "normal.out")
        path = self.s.write_rule("50-t.yaml", RULES % out)
        d = self.start()
        d.wait_log("%s:5:5: error: rule long job: 'transient: true' needs systemd, which is "
                   "not the service manager here (no /run/systemd/system): the rule is not "
                   "loaded" % path)
        d.send("general", "/x", "go")
        st = d.wait_idle(1)
        with open(out) as f:
            self.assertEqual(f.read(), "ran\n")
        self.assertEqual(st["runs"]["started"], 1)
        self.assertEqual(st["runs"]["transient"], 0)
        r = d.ctl("explain", "last", check=0)
        self.assertIn("the rule was not loaded: 'transient: true' needs systemd", r.stdout)
        d.stop_ok(self)

    def test_verify_warns_test_shows_the_unit(self):
        path = self.s.write_rule("50-t.yaml", RULES % "/dev/null")
        r = run_ctl("verify", path)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout,
                         "%s:5:5: warning: rule long job: 'transient: true' needs systemd, "
                         "which is not the service manager here: keventd would not load the "
                         "rule on this machine\n" % path)
        self.assertIn("0 errors, 1 warning\n", r.stderr)
        r = run_ctl("test", "--rules-dir", self.s.rules, "--seqnum", "7",
                           "general", "/x", "go")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("  session:", r.stdout)
        self.assertIn("  transient: keventd-long\\x20job-INSTANCE-RUN.service\n"
                      "  unit property: MemoryMax=20971520\n"
                      "  unit property: CPUQuotaPerSecUSec=500000\n", r.stdout)

    def test_session_rule_is_transient(self):
        path = self.s.write_rule("50-s.yaml", "rules:\n  - name: notify\n"
                                 "    run: [notify-send, hot]\n    session: active\n")
        r = run_ctl("test", "--rules-dir", self.s.rules, "--seqnum", "3", "general", "/x", "go")
        self.assertIn("  transient: keventd-notify-INSTANCE-RUN.service\n  session: active (the unit runs "
                      "as the user of seat0's active session, with its variables)\n", r.stdout)
        d = self.start()
        d.wait_log("%s:2:5: error: rule notify: 'session: active' needs systemd" % path)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

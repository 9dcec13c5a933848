#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The user instance (keventd(8), USER INSTANCE): keventd --user run as
nobody with a scratch HOME and XDG_RUNTIME_DIR, and keventctl --user
beside it, with nothing but the environment to find each other.  The
user's rules in ~/.config/keventd/rules.d hide and mask those of the
system-wide user directories (KEVENTD_USER_SYSTEM_RULES points them at
scratch directories); a handler runs as the user; status works; the
control socket's directory is 0700 and the socket 0600, both the user's;
a user rule's condition is kept in ~/.local/state/keventd across a
restart; another's writable rule file is refused; no XDG_RUNTIME_DIR is
a clear error with a nonzero exit status."""
import grp
import json
import os
import pwd
import signal
import stat
import subprocess
import sys
import time

import kdtest
from kdtest import KEVENTCTL, KEVENTD, TIMEOUT

# the handler: "UID TAG" appended to OUT, in one write
HANDLER = """#!/bin/sh
printf '%s %s\\n' "$(id -u)" "$2" >>"$1"
"""


def rule(name, signal_, tag, handler):
    out = os.path.join(os.path.dirname(handler), "out")
    return ("rules:\n  - name: %s\n    match: {signal: %s}\n    run: [%s, %s, %s]\n"
            % (name, signal_, kdtest.yq(handler), kdtest.yq(out), kdtest.yq(tag)))


def netlink_sockets(pid):
    """The netlink sockets among pid's descriptors (their inodes)."""
    with open("/proc/net/netlink") as f:
        netlink = {l.split()[-1] for l in f.read().splitlines()[1:]}
    fds = os.listdir("/proc/%d/fd" % pid)
    links = [os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in fds]
    return [l for l in links if l.startswith("socket:[") and l[8:-1] in netlink]


class UserBase(kdtest.DaemonTest):
    """keventd --user as nobody in a scratch home, and keventctl --user."""

    def setUp(self):
        super().setUp()
        if not kdtest.IS_ROOT:
            self.skipTest("needs root to become nobody")
        try:
            self.uid = pwd.getpwnam("nobody").pw_uid
            self.gid = grp.getgrnam("nogroup").gr_gid
        except KeyError:
            self.skipTest("needs the user nobody and the group nogroup")
        s = self.s
        self.home = self.own(s.mkdir("home", 0o700))
        self.run_dir = self.own(s.mkdir("xdg-run", 0o700))
        self.user_rules = os.path.join(self.home, ".config", "keventd", "rules.d")
        os.makedirs(self.user_rules)
        for d in (os.path.join(self.home, ".config"), os.path.dirname(self.user_rules),
                  self.user_rules):
            self.own(d)
        # the system-wide user directories, root's
        self.etc = s.mkdir("etc-user-rules")
        self.lib = s.mkdir("lib-user-rules")
        self.handler = self.own(s.script("home/h.sh", HANDLER))
        self.procs_user = []

    def tearDown(self):
        for p in self.procs_user:
            if p.poll() is None:
                p.kill()
                p.wait()
        super().tearDown()

    def own(self, path):
        os.chown(path, self.uid, self.gid)
        return path

    def env(self, **extra):
        e = {"PATH": kdtest.HANDLER_PATH, "HOME": self.home, "XDG_RUNTIME_DIR": self.run_dir,
             "KEVENTD_USER_SYSTEM_RULES": self.etc + ":" + self.lib, "LC_ALL": "C"}
        e.update(extra)
        return {k: v for k, v in e.items() if v is not None}

    def as_user(self):
        uid, gid = self.uid, self.gid

        def drop():
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        return drop

    def user_rule(self, name, text):
        p = self.s.write_rule(name, text, dir=self.user_rules)
        return self.own(p)

    def start_user(self, *args, **env):
        """keventd --user as nobody; waits for READY=1 on a socket of its own."""
        n = len(self.procs_user)
        log = open(self.s.path("keventd-%d.log" % n), "w+")
        self.addCleanup(log.close)
        p = kdtest.start_ready([KEVENTD, "--user"] + list(args), self.s.path("notify-%d" % n),
                               log, self.env(**env), self.as_user(), "keventd --user")
        p.log = log
        self.procs_user.append(p)
        return p

    def stop_user(self, p):
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(TIMEOUT), 0, self.logof(p))

    def logof(self, p):
        # a description of its own (see test_users.User.logtext)
        with open(p.log.name, errors="replace") as f:
            return f.read()

    def ctl(self, *args, check=0, **env):
        r = subprocess.run([KEVENTCTL, "--user"] + list(args), capture_output=True, text=True,
                           timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=self.env(**env),
                           preexec_fn=self.as_user())
        if check is not None and r.returncode != check:
            raise AssertionError("keventctl --user %s: exit %d, wanted %d\n%s%s"
                                 % (" ".join(args), r.returncode, check, r.stdout, r.stderr))
        return r

    def out(self):
        p = os.path.join(self.home, "out")
        if not os.path.exists(p):
            return []
        with open(p) as f:
            return f.read().splitlines()

class UserTest(UserBase):
    def test_rules_handler_status_modes(self):
        s = self.s
        # the packages' rule, hidden by the user's file of the same name
        s.write_rule("50-a.yaml", rule("vendor-a", "a", "vendor-a", self.handler), dir=self.lib)
        self.user_rule("50-a.yaml", rule("user-a", "a", "user-a", self.handler))
        # the admin's, masked by the user
        s.write_rule("60-b.yaml", rule("admin-b", "b", "admin-b", self.handler), dir=self.etc)
        os.symlink("/dev/null", os.path.join(self.user_rules, "60-b.yaml"))
        os.lchown(os.path.join(self.user_rules, "60-b.yaml"), self.uid, self.gid)
        # the admin's, in force
        s.write_rule("70-c.yaml", rule("admin-c", "c", "admin-c", self.handler), dir=self.etc)
        p = self.start_user()

        for sig in ("a", "b", "c"):
            self.ctl("send", "--wait", "general", "/u", sig)
        self.assertEqual(self.out(), ["%d user-a" % self.uid, "%d admin-c" % self.uid],
                         self.logof(p))

        st = json.loads(self.ctl("status", "--json").stdout)
        self.assertEqual(st["events"]["received"], 3)
        self.assertEqual(st["sources"]["socket"]["handled"], 3)
        self.assertEqual(self.ctl("status").returncode, 0)
        # the kernel's sources are the system instance's: no netlink socket
        self.assertEqual(netlink_sockets(p.pid), [])

        # the control socket and its directory, the user's alone
        d = os.stat(os.path.join(self.run_dir, "keventd"))
        self.assertEqual((stat.S_IMODE(d.st_mode), d.st_uid), (0o700, self.uid))
        c = os.lstat(os.path.join(self.run_dir, "keventd", "control"))
        self.assertTrue(stat.S_ISSOCK(c.st_mode))
        self.assertEqual((stat.S_IMODE(c.st_mode), c.st_uid), (0o600, self.uid))

        # the offline commands read the same directories
        r = self.ctl("cat", "50-a.yaml")
        self.assertIn(os.path.join(self.user_rules, "50-a.yaml"), r.stdout)
        self.assertIn("user-a", r.stdout)
        r = self.ctl("test", "general", "/u", "c")
        self.assertIn("admin-c", r.stdout)
        self.assertNotIn("admin-b", self.ctl("test", "general", "/u", "b", check=None).stdout)
        self.assertEqual(self.ctl("verify").returncode, 0)
        self.stop_user(p)

    def test_condition_kept_across_restart(self):
        self.user_rule("50-cond.yaml", """conditions:
  - name: mine
    set: {source: socket, signal: bad}
    clear: {source: socket, signal: good}
""")
        p = self.start_user()
        self.ctl("send", "--wait", "general", "/disk", "bad")
        rows = [json.loads(l) for l in self.ctl("conditions", "--json").stdout.splitlines()]
        self.assertEqual([(r["condition"], r["key"]) for r in rows], [("mine", "/disk")])
        self.stop_user(p)
        # in $XDG_STATE_HOME's stand-in, the user's
        lib = os.path.join(self.home, ".local", "state", "keventd")
        st = os.stat(lib)
        self.assertEqual((stat.S_IMODE(st.st_mode), st.st_uid), (0o700, self.uid))
        self.assertTrue(os.listdir(lib), "nothing kept in %s" % lib)

        p = self.start_user()
        rows = [json.loads(l) for l in self.ctl("conditions", "--json").stdout.splitlines()]
        self.assertEqual([(r["condition"], r["key"]) for r in rows], [("mine", "/disk")],
                         self.logof(p))
        self.stop_user(p)

    def test_runtime_dir_appears_one_reload(self):
        """$XDG_RUNTIME_DIR/keventd/rules.d is missing at start: keventd
        making its own files beside it reloads nothing; the directory and
        a rule in it appearing is one reload, and the rule is in force.
        A new user's: no ~/.config/keventd/rules.d either, and
        ~/.local/state/keventd made at the start."""
        d = self.user_rules
        while d != self.home:
            os.rmdir(d)
            d = os.path.dirname(d)
        p = self.start_user()
        self.ctl("send", "--wait", "general", "/u", "early")
        # the absence of a reload has no descriptor to say it: the watch's
        # longest wait (a burst's 500 ms, keventd(8)) passes, so that
        # a reload the start caused is not merged into the one below
        time.sleep(0.6)
        rt = os.path.join(self.run_dir, "keventd", "rules.d")
        os.mkdir(rt)
        self.own(rt)
        self.own(self.s.write_rule("70-rt.yaml", rule("rt", "late", "rt", self.handler), dir=rt))
        deadline = time.monotonic() + TIMEOUT
        while json.loads(self.ctl("status", "--json").stdout)["ruleset"]["rules"] != 1:
            self.assertTrue(kdtest.deadline_left(deadline), self.logof(p))
            time.sleep(0.02)  # polling interval of a status query, not a synchronisation
        self.ctl("send", "--wait", "general", "/u", "late")
        self.assertEqual(self.out(), ["%d rt" % self.uid], self.logof(p))
        st = json.loads(self.ctl("status", "--json").stdout)
        self.assertEqual(st["ruleset"]["reloads"], 1, self.logof(p))
        self.assertEqual(self.logof(p).count("rule directories changed"), 1, self.logof(p))
        self.stop_user(p)

    def test_foreign_writable_file_refused(self):
        p = self.user_rule("50-loose.yaml", rule("loose", "x", "loose", self.handler))
        os.chmod(p, 0o666)
        r = self.ctl("verify", check=1)
        self.assertIn("writable by group or others", r.stdout + r.stderr)
        d = self.start_user()
        self.ctl("send", "--wait", "general", "/u", "x", check=None)
        self.assertEqual(self.out(), [])
        self.assertIn("writable by group or others", self.logof(d))
        self.stop_user(d)

    def test_no_runtime_dir(self):
        for argv in ([KEVENTD, "--user"], [KEVENTCTL, "--user", "status"]):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                               stdin=subprocess.DEVNULL, env=self.env(XDG_RUNTIME_DIR=None),
                               preexec_fn=self.as_user())
            self.assertNotEqual(r.returncode, 0, argv)
            self.assertIn("XDG_RUNTIME_DIR is not set", r.stderr, argv)
        # and nothing was made
        self.assertFalse(os.path.exists(os.path.join(self.home, ".local")))


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The users socket (keventd(8), USER INSTANCE): one system instance and
two user instances, run as two real uids (nobody, and a uid of no
account), each with its own HOME and XDG_RUNTIME_DIR, connecting to the
system instance's socket beside its control socket.  Each sees what the
forwarding policy lets it see, its own rules running as itself; a user
instance that stops reading costs the system instance its queue's bound,
the oldest dropped and counted on both sides, while the other user misses
nothing; a system instance that restarts is connected to again, and
nothing of what it handled meanwhile is sent; a leak audit of 10,000
events of every source and kind finds each instance got exactly its
share: 0 outside the policy."""
import json
import os
import signal
import subprocess
import time

import kdtest
from kdtest import KEVENTCTL, KEVENTD, TIMEOUT

# each user's handler: "UID SOURCE OBJECT" appended to OUT, in one write
HANDLER = """#!/bin/sh
printf '%s %s %s\\n' "$(id -u)" "$KEVENT_SOURCE" "$KEVENT_OBJECT" >>"$1"
"""

QUEUE_MAX = 256  # KUSERS_QUEUE_MAX


def rss(pid):
    """pid's resident set, in kB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class User:
    """A user instance's account, directories and process."""

    def __init__(self, test, uid, gid, tag):
        s = test.s
        self.test, self.uid, self.gid, self.tag = test, uid, gid, tag
        self.home = self.own(s.mkdir("home-" + tag, 0o700))
        self.run_dir = self.own(s.mkdir("run-" + tag, 0o700))
        rules = os.path.join(self.home, ".config", "keventd", "rules.d")
        os.makedirs(rules)
        for d in (os.path.join(self.home, ".config"), os.path.dirname(rules), rules):
            self.own(d)
        self.rules = rules
        self.out = os.path.join(self.home, "out")
        self.handler = self.own(s.script("home-%s/h.sh" % tag, HANDLER))
        self.proc = None

    def own(self, path):
        os.chown(path, self.uid, self.gid)
        return path

    def env(self, **extra):
        s = self.test.s
        e = {"PATH": kdtest.HANDLER_PATH, "HOME": self.home, "XDG_RUNTIME_DIR": self.run_dir,
             "KEVENTD_USER_SYSTEM_RULES": s.path("none-etc") + ":" + s.path("none-lib"),
             "LC_ALL": "C"}
        e.update(extra)
        return e

    def drop(self):
        uid, gid = self.uid, self.gid

        def f():
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        return f

    def rule(self, match):
        """A rule of the user's own that records each event it sees."""
        p = self.test.s.write_rule("10-mine.yaml", "rules:\n  - name: mine\n    match: %s\n"
                                   "    run: [%s, %s]\n"
                                   % (match, kdtest.yq(self.handler), kdtest.yq(self.out)),
                                   dir=self.rules)
        self.own(p)

    def start(self):
        """keventd --user; waits for READY=1."""
        s = self.test.s
        self.log = open(s.path("keventd-%s.log" % self.tag), "a+")
        self.proc = kdtest.start_ready(
            [KEVENTD, "--user", "--users-socket", self.test.users_socket],
            s.path("notify-" + self.tag), self.log, self.env(), self.drop(),
            "keventd --user (%s)" % self.tag)
        return self

    def logtext(self):
        # a description of its own: keventd appends through the one it
        # shares with self.log, whose offset it moves between a seek and a
        # read (which then reads nothing)
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def ctl(self, *args):
        r = subprocess.run([KEVENTCTL, "--user"] + list(args), capture_output=True, text=True,
                           timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=self.env(),
                           preexec_fn=self.drop())
        if r.returncode != 0:
            raise AssertionError("keventctl --user %s (%s): exit %d\n%s%s\nlog:\n%s"
                                 % (" ".join(args), self.tag, r.returncode, r.stdout,
                                    r.stderr, self.logtext()))
        return r

    def status(self):
        return json.loads(self.ctl("status", "--json").stdout)

    def wait_status(self, pred, what):
        deadline = time.monotonic() + TIMEOUT
        while True:
            st = self.status()
            if pred(st):
                return st
            if not kdtest.deadline_left(deadline):
                raise AssertionError("%s: status never showed %s; last:\n%s\nlog:\n%s"
                                     % (self.tag, what, json.dumps(st["users"]),
                                        self.logtext()))
            time.sleep(0.02)  # polling interval of a status query, not a synchronisation

    def seen(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out) as f:
            return f.read().splitlines()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            self.test.assertEqual(self.proc.wait(TIMEOUT), 0, self.logtext())


class UsersTest(kdtest.DaemonTest):
    def setUp(self):
        super().setUp()
        if not kdtest.IS_ROOT:
            self.skipTest("needs root to run user instances as two uids")
        import pwd
        import grp
        try:
            nobody = pwd.getpwnam("nobody").pw_uid
            nogroup = grp.getgrnam("nogroup").gr_gid
        except KeyError:
            self.skipTest("needs the user nobody and the group nogroup")
        os.chmod(self.s.path(), 0o755)
        # beside the control socket, as the system instance makes it
        self.users_socket = self.s.path("users")
        self.a = User(self, nobody, nogroup, "a")
        self.b = User(self, 40123, 40123, "b")  # a uid of no account

    def tearDown(self):
        for u in (self.a, self.b):
            if u.proc and u.proc.poll() is None:
                u.proc.kill()
                u.proc.wait()
            if getattr(u, "log", None):
                u.log.close()
        super().tearDown()

    def system(self, rules):
        self.s.write_rule("10-system.yaml", rules)
        return self.start("--sources", "socket,condition")

    def test_each_user_sees_what_the_policy_lets_it(self):
        d = self.system("conditions:\n"
                        "  - name: hot\n"
                        "    set: {signal: hot-now}\n"
                        "    clear: {signal: cool-now}\n"
                        "rules:\n"
                        "  - name: shared-with-nobody\n"
                        "    match: {signal: for-nobody}\n"
                        "    share: [nobody]\n"
                        "  - name: shared-with-all\n"
                        "    match: {signal: for-all}\n"
                        "    share: users\n"
                        "  - name: conditions-with-nobody\n"
                        "    match: {source: condition}\n"
                        "    share: [nobody]\n")
        for u in (self.a, self.b):
            u.rule("{type: hotplug}")
            u.start()
        d.wait_status(lambda st: st["users"]["instances"] == 2, "two user instances")
        # a device's uevent: any user may read it from the kernel
        d.ctl("test", "--run", "--source", "udev", "hotplug", "/devices/x", "add", check=0)
        # the system's own socket event: no user's
        d.send("hotplug", "/devices/private", "add")
        # shared by a system rule: with nobody alone, then with every user
        d.send("hotplug", "/devices/n", "for-nobody")
        d.send("hotplug", "/devices/all", "for-all")
        # a condition of the system's, shared with nobody: its set event
        d.send("hotplug", "/devices/c", "hot-now")
        for u, n in ((self.a, 4), (self.b, 2)):
            u.wait_status(lambda st: st["events"]["handled"] >= n
                          and st["runs"]["started"] - st["runs"]["failures"] >= n
                          and st["queue"]["pending"] == 0, "%d events handled" % n)
        want_a = ["%d udev /devices/x" % self.a.uid, "%d socket /devices/n" % self.a.uid,
                  "%d socket /devices/all" % self.a.uid, "%d condition /devices/c" % self.a.uid]
        # a's rule saw the system's condition event; a's own table keeps no
        # row of it
        self.assertEqual(self.a.ctl("conditions", "--json", "--all").stdout, "")
        want_b = ["%d udev /devices/x" % self.b.uid, "%d socket /devices/all" % self.b.uid]
        # the handlers of one instance may run side by side: in any order
        self.assertEqual(sorted(self.a.seen()), sorted(want_a))
        self.assertEqual(sorted(self.b.seen()), sorted(want_b))
        st = d.status()["users"]
        self.assertEqual((st["sent"], st["withheld"], st["dropped"]), (6, 6, 0))
        for u in (self.a, self.b):
            u.stop()
        d.stop_ok(self)

    def test_a_stalled_user_costs_its_bound_and_is_told(self):
        d = self.system("rules:\n  - name: all\n    match: {type: general}\n    share: users\n")
        self.a.rule("{type: general}")
        for u in (self.a, self.b):
            u.start()
        d.wait_status(lambda st: st["users"]["instances"] == 2, "two user instances")
        rss0 = rss(d.proc.pid)
        self.a.proc.send_signal(signal.SIGSTOP)
        # in chunks below the bound, each taken by b before the next: b
        # keeps up, a reads nothing
        n, chunk = 2000, 200
        for k in range(0, n, chunk):
            batch = "".join("general\t/o/%d\tx\n" % i for i in range(k, k + chunk))
            d.ctl("send", "--batch", "-", input=batch, check=0)
            self.b.wait_status(lambda st: st["users"]["received"] == k + chunk,
                               "b's first %d events" % (k + chunk))
        d.wait_idle(n)
        st = d.status()["users"]
        dropped = st["dropped"]
        # a's queue, and what a's socket buffer took before it, at most
        self.assertGreaterEqual(dropped, n - QUEUE_MAX - 400)
        self.assertEqual(self.b.status()["users"]["dropped_at_system"], 0)
        grown = rss(d.proc.pid) - rss0
        # a once it reads again: what it was sent, and the count of the rest
        self.a.proc.send_signal(signal.SIGCONT)
        sa = self.a.wait_status(lambda st: st["users"]["received"]
                                + st["users"]["dropped_at_system"] == n,
                                "a's events and drops adding up to %d" % n)
        self.assertEqual(sa["users"]["dropped_at_system"], dropped)
        self.assertIn("the system instance dropped", self.a.logtext())
        self.assertEqual(d.status()["users"]["sent"], 2 * n - dropped)
        print("a stalled: %d of %d dropped for it, b missed none; the system's RSS grew "
              "%d kB meanwhile (the bound: 256 events, 512 KiB)" % (dropped, n, grown))
        for u in (self.a, self.b):
            u.stop()
        d.stop_ok(self)

    def test_leak_audit(self):
        """10,000 events of every source and kind, replayed into the system
        instance as their sources' (keventctl replay): each user instance
        records what it gets (keventctl --user record), and it is exactly
        what the policy lets that user see: 0 outside it, none missing."""
        d = self.system("rules:\n"
                        "  - name: shared-with-nobody\n"
                        "    match: {signal: for-nobody}\n"
                        "    share: [nobody]\n"
                        "  - name: shared-with-all\n"
                        "    match: {signal: for-all}\n"
                        "    share: users\n")
        for u in (self.a, self.b):
            u.start()
        d.wait_status(lambda st: st["users"]["instances"] == 2, "two user instances")
        recs = {}
        for u in (self.a, self.b):
            out = open(self.s.path("record-" + u.tag), "w+")
            p = subprocess.Popen([KEVENTCTL, "--user", "record"], stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=subprocess.PIPE, env=u.env(),
                                 preexec_fn=u.drop())
            recs[u.tag] = (p, out)
        for u in (self.a, self.b):
            # the recorder, besides the status query itself
            u.wait_status(lambda st: st["control"]["clients"] >= 2, "its recorder connected")
        a, b = self.a, self.b
        md = "/org/kernel/devices/virtual/block/md0"
        # (source, type, object, signal, payload, who may see it)
        kinds = [
            ("udev", "hotplug", "/org/kernel/devices/x/%d", "add", "", "ab"),
            ("thermal", "power", "/org/kernel/devices/virtual/thermal/thermal_zone%d", "high",
             "Temperature: 90000\n", "ab"),
            ("acpi", "power", "/org/kernel/acpi/battery", "change", "", "ab"),
            ("md", "storage", md, "degraded", "", "ab"),
            ("input", "power", "/org/kernel/input/switch/lid", "on", "", "ab"),
            # neither user has a seat's active session
            ("input", "power", "/org/kernel/input/key/power", "pressed", "", ""),
            ("fs", "storage", "/org/kernel/fs/", "space-low", "Mountpoint: /\n", "ab"),
            ("fs", "storage", "/org/kernel/fs/", "block-soft",
             "Quota-Type: user\nId: %d\n" % a.uid, "a"),
            ("fs", "storage", "/org/kernel/fs/", "block-hard",
             "Quota-Type: user\nId: %d\n" % b.uid, "b"),
            ("fs", "storage", "/org/kernel/fs/", "inode-soft", "Quota-Type: user\nId: 12345\n",
             ""),
            ("fs", "storage", "/org/kernel/fs/", "block-soft",
             "Quota-Type: group\nId: %d\n" % a.gid, "a"),
            ("fs", "storage", "/org/kernel/fs/", "block-soft", "Quota-Type: project\nId: 1\n",
             ""),
            ("fs", "storage", "/org/kernel/fs/", "error", "Mountpoint: /\nError: EIO\n", ""),
            ("condition", "storage", md, "set", "Condition: md-degraded\nSource: md\n", "ab"),
            ("condition", "storage", "/org/kernel/fs/", "set",
             "Condition: fs-space-low\nSource: fs\nReason: space-low\n", "ab"),
            ("condition", "storage", "/org/kernel/fs/", "set",
             "Condition: fs-errors\nSource: fs\nReason: error\n", ""),
            ("condition", "general", "/x", "set", "Condition: mine\nSource: socket\n", ""),
            ("kmsg", "general", "/org/kernel/log/segfault", "segfault", "", ""),
            ("trace", "general", "/org/kernel/trace/oom", "mark_victim", "", ""),
            ("mqtt", "general", "/x", "y", "", ""),
            ("socket", "general", "/x", "y", "", ""),
            ("kernel", "general", "/x", "y", "", ""),
            ("socket", "general", "/share/n", "for-nobody", "", "a"),
            ("socket", "general", "/share/all", "for-all", "", "ab"),
        ]
        n, chunk = 10000, 250
        want = {"a": set(), "b": set()}
        lines = []
        for i in range(n):
            src, typ, obj, sig, payload, who = kinds[i % len(kinds)]
            lines.append(json.dumps({"seqnum": i + 1, "timestamp": 1, "source": src, "type": typ,
                                     "object": obj % i if "%d" in obj else obj,
                                     "signal": sig, "payload": payload + "Audit: %d\n" % i,
                                     "properties": {}}))
            for t in who:
                want[t].add(i)
        for k in range(0, n, chunk):
            d.ctl("replay", "-", input="\n".join(lines[k:k + chunk]) + "\n", check=0)
            # each instance takes its share before the next chunk: no queue
            # overflows, so that what is missing would be a leak's twin
            d.wait_idle(k + chunk)
            for u in (a, b):
                u.wait_status(lambda st: st["users"]["received"]
                              == sum(1 for i in want[u.tag] if i < k + chunk),
                              "%s's share of the first %d" % (u.tag, k + chunk))
        st = d.status()["users"]
        self.assertEqual(st["dropped"], 0)
        for u in (a, b):
            p, out = recs[u.tag]
            # the recorder has had every event its instance received: a
            # monitor is told each before the event is handled
            u.wait_status(lambda st: st["events"]["pending"] == 0, "idle")
            p.send_signal(signal.SIGINT)
            err = p.communicate(timeout=TIMEOUT)[1].decode()
            self.assertEqual(p.returncode, 0, err)
            out.seek(0)
            got = [json.loads(l) for l in out.read().splitlines()]
            out.close()
            audit = [int(e["properties"]["Audit"]) for e in got]
            leaked = sorted(set(audit) - want[u.tag])
            self.assertEqual(leaked, [], "%s got events the policy keeps from it: %r"
                             % (u.tag, [lines[i] for i in leaked[:5]]))
            self.assertEqual(sorted(audit), sorted(want[u.tag]), "%s: missing or twice" % u.tag)
            # and each kept its source
            for e in got:
                self.assertEqual(e["source"], kinds[int(e["properties"]["Audit"]) % len(kinds)][0])
        print("leak audit: %d events of %d kinds; a (uid %d) got %d, b (uid %d) got %d, "
              "0 outside the policy" % (n, len(kinds), a.uid, len(want["a"]), b.uid,
                                        len(want["b"])))
        for u in (a, b):
            u.stop()
        d.stop_ok(self)

    def test_reconnects_and_replays_nothing(self):
        rules = "rules:\n  - name: all\n    match: {type: general}\n    share: users\n"
        d = self.system(rules)
        self.a.rule("{type: general}")
        self.a.start()
        d.wait_status(lambda st: st["users"]["instances"] == 1, "a connected")
        d.send("general", "/before", "x")
        self.a.wait_status(lambda st: st["users"]["received"] == 1, "the first event")
        d.stop_ok(self)
        self.a.wait_status(lambda st: not st["users"]["connected"], "a sees the system go")
        # handled while a was not connected: never sent to it
        d2 = self.start("--sources", "socket,condition", "--users-socket", "none")
        d2.send("general", "/meanwhile", "x")
        d2.stop_ok(self)
        d3 = self.system(rules)
        d3.wait_status(lambda st: st["users"]["instances"] == 1, "a connected again")
        d3.send("general", "/after", "x")
        sa = self.a.wait_status(lambda st: st["users"]["received"] == 2, "the event after")
        self.assertTrue(sa["users"]["connected"])
        self.assertEqual(sorted(l.split()[2] for l in self.a.seen()), ["/after", "/before"])
        self.a.stop()
        d3.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

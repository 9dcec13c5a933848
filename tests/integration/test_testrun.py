#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl test --run (keventctl(8)): a real alert fired end to end, as
mdadm --monitor --test does: the handlers the event would run, run once by
keventd, with KEVENT_TEST=1 and the source as given; and a live replay
that keeps each recorded event's source."""
import json
import os

import kdtest
from kdtest import DaemonTest

ALERT = """#!/bin/sh
# the kind of script an admin writes: a mail when a RAID degrades
{ echo "to: root"; echo "subject: $KEVENT_OBJECT $KEVENT_SIGNAL";
  env | grep '^KEVENT_' | sort; } > "$1/mail.$KEVENT_SEQNUM"
[ "$KEVENT_SIGNAL" = degraded ] || { echo "no mail for $KEVENT_SIGNAL" >&2; exit 2; }
"""


def env_of(path):
    with open(path) as f:
        return dict(l.rstrip("\n").split("=", 1) for l in f if l.startswith("KEVENT_"))


class TestRun(DaemonTest):
    def rules(self):
        s = self.s
        self.out = s.mkdir("out")
        self.alert = s.script("raid-alert", ALERT)
        s.write_rule("10-raid.yaml", """rules:
  - name: raid-mail
    match: {source: md, type: storage, signal: [degraded, failed]}
    run: [%s, %s]
  - name: socket-only
    match: {source: socket}
    shell: 'touch %s/socket-ran'
""" % (self.alert, self.out, self.out))

    def test_the_handlers_run_once_with_kevent_test(self):
        self.rules()
        # a condition the event would set: a test sets none, and its
        # answer waits for its own handlers, not for the condition's event
        self.s.write_rule("20-cond.yaml", """conditions:
  - name: raid-degraded
    set: {source: md, signal: degraded}
    clear: {source: md, signal: optimal}
""")
        d = self.start("--sources", "socket,condition")
        r = d.ctl("test", "--run", "--source", "md", "storage", "/org/kernel/md/md0",
                  "degraded", "Level: raid1\nDevice: sdb1", check=0)
        self.assertEqual(d.ctl("conditions", "--json", "--all", check=0).stdout, "")
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^event seqnum \d+$")
        seq = lines[0].split()[-1]
        self.assertRegex(lines[1], r"^raid-mail: exited 0 after \d+ ms$")
        self.assertEqual(len(lines), 2, lines)
        env = env_of(os.path.join(self.out, "mail." + seq))
        self.assertEqual(env["KEVENT_TEST"], "1")
        self.assertEqual(env["KEVENT_SOURCE"], "md")
        self.assertEqual(env["KEVENT_TYPE"], "storage")
        self.assertEqual(env["KEVENT_DEVICE"], "sdb1")
        self.assertFalse(os.path.exists(os.path.join(self.out, "socket-ran")))
        # once: one mail
        self.assertEqual(len([n for n in os.listdir(self.out) if n.startswith("mail.")]), 1)
        # events and explain show it as the md event it was
        ev = json.loads(d.ctl("events", "--json", check=0).stdout.splitlines()[-1])
        self.assertEqual((ev["source"], ev["rules"][0]["outcome"]), ("md", "exited"))
        self.assertIn("source=md", d.ctl("explain", "last", "--source", "md", check=0).stdout)
        # a failing handler: exit 1, its words shown
        r = d.ctl("test", "--run", "--source", "md", "storage", "/org/kernel/md/md0", "failed",
                  check=1)
        self.assertRegex(r.stdout, r"raid-mail: exited 2 after \d+ ms\n"
                         r"  stderr: no mail for failed\n")
        # nothing would run: said, exit 0
        r = d.ctl("test", "--run", "--source", "md", "storage", "/org/kernel/md/md0", "resync",
                  check=0)
        self.assertEqual(r.stdout.splitlines()[1:], ["no rule runs anything for it"])
        # --json: the same, one object (options after the event, too)
        r = d.ctl("test", "--run", "--source", "md", "storage", "/org/kernel/md/md0", "failed",
                  "--json", check=1)
        o = json.loads(r.stdout)
        self.assertEqual((o["result"], o["failed"], o["notes"]), ("done", 1, []))
        self.assertIsInstance(o["seqnum"], int)
        self.assertEqual(len(o["runs"]), 1, o)
        self.assertEqual(o["runs"][0]["rule"], "raid-mail")
        self.assertRegex(o["runs"][0]["outcome"], r"^exited 2 after \d+ ms$")
        self.assertEqual(o["runs"][0]["stderr"], ["no mail for failed"])
        o = json.loads(d.ctl("test", "--run", "--json", "--source", "md", "storage",
                             "/org/kernel/md/md0", "resync", check=0).stdout)
        self.assertEqual((o["runs"], o["notes"], o["failed"]),
                         ([], ["no rule runs anything for it"], 0))
        # a send is the socket's, without KEVENT_TEST
        d.send("storage", "/org/kernel/md/md0", "degraded")
        d.wait_idle(6)
        self.assertTrue(os.path.exists(os.path.join(self.out, "socket-ran")))
        st = d.status()
        d.stop_ok(self)
        self.assertIn("test run (pid", d.logtext())
        kdtest.assert_accounted(self, st)

    def test_usage(self):
        self.rules()
        d = self.start()
        r = d.ctl("test", "--run", "--rules-dir", self.s.rules, "storage", "/o", "x", check=2)
        self.assertIn("no --rules-dir, --seqnum or --timestamp", r.stderr)
        r = d.ctl("test", "--timeout", "1", "storage", "/o", "x", check=2)
        self.assertIn("--timeout goes with --run", r.stderr)
        r = d.ctl("test", "--run", "--source", "nope", "storage", "/o", "x", check=2)
        self.assertIn("unknown source 'nope' (kernel, udev, thermal, socket,", r.stderr)
        d.stop_ok(self)

    def test_no_daemon(self):
        r = kdtest.Daemon(self.s).ctl("test", "--run", "general", "/o", "x", check=1)
        self.assertIn("keventctl", r.stderr)

    def test_live_replay_keeps_each_source(self):
        self.rules()
        rec = self.s.path("rec.jsonl")
        with open(rec, "w") as f:
            for src, sig in (("md", "degraded"), ("socket", "x"), ("kernel", "degraded"),
                             ("md", "degraded")):
                f.write(json.dumps({"seqnum": 7, "source": src, "type": "storage",
                                    "object": "/org/kernel/md/md1", "signal": sig}) + "\n")
        d = self.start()
        r = d.ctl("replay", "-v", rec, check=0)
        self.assertIn("4 event(s) posted, 0 line(s) failed", r.stdout)
        d.wait_idle(4)
        evs = [json.loads(l) for l in d.ctl("events", "--json", check=0).stdout.splitlines()]
        self.assertEqual([e["source"] for e in evs], ["md", "socket", "kernel", "md"])
        mails = sorted(n for n in os.listdir(self.out) if n.startswith("mail."))
        self.assertEqual(len(mails), 2)
        for m in mails:
            env = env_of(os.path.join(self.out, m))
            self.assertEqual(env["KEVENT_SOURCE"], "md")
            self.assertNotIn("KEVENT_TEST", env)
        st = d.status()
        d.stop_ok(self)
        kdtest.assert_accounted(self, st)


if __name__ == "__main__":
    kdtest.main()

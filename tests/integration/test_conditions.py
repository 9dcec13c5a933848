#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Conditions with the real keventd: set and cleared by events sent on the
control socket, told as events of source condition to the rules; the
table in --lib-dir across a restart and a kill -9, exactly; reminders
every 2s, stopped by an acknowledgement; expiry; keventctl conditions
--check's exit statuses; a damaged table costs the table, not keventd."""
import json
import os
import subprocess
import time

import kdtest
from kdtest import KEVENTCTL, TIMEOUT

# a handler that writes down each condition event, in one write
RECORD = """#!/bin/sh
printf '%s %s %s %s\\n' "$KEVENT_SIGNAL" "$KEVENT_OBJECT" "${KEVENT_REDELIVERED:-0}" \
  "$(printf '%s' "$KEVENT_PAYLOAD" | tr '\\n' ';')" >>"$1"
"""

CONDITIONS = """conditions:
  - name: disk-bad
    set: {source: socket, signal: bad}
    clear: {source: socket, signal: good}
    severity: critical
  - name: hot
    set: {source: socket, signal: hot}
    clear: {source: socket, signal: cool}
  - name: nag
    set: {source: socket, signal: nag}
    clear: {source: socket, signal: calm}
    remind: every 2s
  - name: oom
    set: {source: socket, signal: oom}
    expire: 2s
"""


def deadline_poll(pred, what, timeout=TIMEOUT):
    """Polls pred (a file the handlers append to) until true."""
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("never: %s" % what)
        time.sleep(0.02)  # polling a file the handlers write, not a synchronisation


class ConditionsTest(kdtest.DaemonTest):
    def setUp(self):
        super().setUp()
        s = self.s
        self.out = s.path("told")
        rec = s.script("record.sh", RECORD)
        s.write_rule("50-c.yaml", CONDITIONS +
                     "rules:\n"
                     "  - name: tell\n"
                     "    match: {source: condition}\n"
                     "    run: [%s, %s]\n" % (kdtest.yq(rec), kdtest.yq(self.out)))

    def told(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out) as f:
            return [l.split(" ", 3) for l in f.read().splitlines()]

    def wait_told(self, n):
        deadline_poll(lambda: len(self.told()) >= n, "%d condition events told" % n)
        return self.told()

    def start(self, *args, **kw):
        # one table for the test's keventds, one after another
        return super().start("--lib-dir", self.s.path("libdir"), "--sources", "socket,condition",
                             *args, **kw)

    def rows(self, d, *extra):
        r = d.ctl("conditions", "--json", *extra, check=0)
        return [json.loads(l) for l in r.stdout.splitlines()]

    def check(self, d, *names):
        return d.ctl("conditions", "--check", *names)

    def test_set_count_clear_and_check(self):
        d = self.start()
        r = self.check(d)
        self.assertEqual((r.returncode, r.stdout),
                         (0, "CONDITIONS OK - no condition holds | critical=0 warning=0 "
                             "info=0 acknowledged=0\n"))
        d.send("storage", "/dev/sda", "bad", "Sector: 1")
        d.send("storage", "/dev/sda", "bad", "Sector: 2")  # counted, not told
        d.send("power", "/cpu", "hot")
        # the two sets' handlers run side by side: their lines in either order
        told = sorted(self.wait_told(2), key=lambda t: t[1])
        self.assertEqual([t[:3] for t in told],
                         [["set", "/cpu", "0"], ["set", "/dev/sda", "0"]])
        self.assertIn("Condition: disk-bad;Severity: critical;", told[1][3])
        self.assertIn("Reason: bad;Source: socket;", told[1][3])
        rows = {r["condition"]: r for r in self.rows(d)}
        self.assertEqual(rows["disk-bad"]["count"], 2)
        self.assertEqual(rows["disk-bad"]["last"]["payload"], "Sector: 2")
        self.assertEqual(rows["hot"]["severity"], "warning")
        r = self.check(d)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertTrue(r.stdout.startswith("CONDITIONS CRITICAL - 1 critical, 1 warning"))
        self.assertEqual(self.check(d, "hot").returncode, 1)
        self.assertEqual(self.check(d, "nag").returncode, 0)
        st = d.status()["conditions"]
        self.assertEqual((st["holding"], st["critical"], st["warning"]), (2, 1, 1))
        prom = d.ctl("status", "--prometheus", check=0).stdout
        self.assertIn('keventd_condition{condition="disk-bad",object="/dev/sda",'
                      'severity="critical"} 1\n', prom)
        self.assertIn("keventd_condition_since_seconds{condition=\"hot\"", prom)
        d.send("storage", "/dev/sda", "good")
        d.send("storage", "/dev/sdb", "good")  # holds for no row: nothing
        told = self.wait_told(3)
        self.assertEqual(told[2][:2], ["clear", "/dev/sda"])
        self.assertIn("Reason: good", told[2][3])
        self.assertEqual([r["condition"] for r in self.rows(d)], ["hot"])
        self.assertEqual([(r["condition"], r["holds"]) for r in self.rows(d, "--all")],
                         [("disk-bad", False), ("hot", True)])
        text = d.ctl("conditions", check=0).stdout
        self.assertIn("1 condition holds: 0 critical, 1 warning, 0 info; 0 acknowledged\n",
                      text)
        d.stop_ok(self)
        # keventd gone: the plugin says unknown
        r = self.check(d)
        self.assertEqual(r.returncode, 3)
        self.assertTrue(r.stdout.startswith("CONDITIONS UNKNOWN - cannot connect"))
        self.assertEqual(len(self.told()), 3)

    def test_restart_keeps_rows_without_a_second_set(self):
        d = self.start()
        d.send("power", "/cpu", "hot")
        self.wait_told(1)
        before = self.rows(d)
        d.stop_ok(self)
        d2 = self.start()
        # a clean stop leaves no condition event to hand again
        self.assertEqual(d2.status()["sources"]["condition"]["redelivered"], 0)
        d2.send("power", "/cpu", "hot")  # holds: counted
        d2.send("power", "/gpu", "hot")
        told = self.wait_told(2)
        after = {r["key"]: r for r in self.rows(d2)}
        self.assertEqual(after["/cpu"]["since_ns"], before[0]["since_ns"])
        self.assertEqual(after["/cpu"]["count"], 2)
        self.assertEqual([t[:2] for t in told], [["set", "/cpu"], ["set", "/gpu"]])
        d2.stop_ok(self)

    def test_kill_keeps_the_table_exactly(self):
        """Each send is answered once its event is journaled; its changes are
        then in the table or in the journal's condition events: after a kill
        -9 the next keventd has the same rows, and each condition event was
        told once, or again only flagged redelivered."""
        d = self.start()
        script = [("bad", "/a"), ("hot", "/b"), ("good", "/a"), ("bad", "/a"),
                  ("cool", "/b"), ("hot", "/c"), ("bad", "/d")]
        rows_seen = None
        for i, (sig, obj) in enumerate(script):
            d.send("general", obj, sig)
            if i in (2, 5):
                rows_seen = self.rows(d)
                d.kill()
                d = self.start()
                self.assertEqual(self.rows(d), rows_seen)
        want = {("disk-bad", "/a"), ("hot", "/c"), ("disk-bad", "/d")}
        got = {(r["condition"], r["key"]) for r in self.rows(d)}
        self.assertEqual(got, want)
        # 7 changes, each told once unflagged (and again only redelivered)
        deadline_poll(lambda: len([t for t in self.told() if t[2] == "0"]) >= 7,
                      "7 condition events told")
        d.wait_idle(d.status()["events"]["received"])
        fresh = sorted((t[0], t[1]) for t in self.told() if t[2] == "0")
        self.assertEqual(fresh, sorted([("set", "/a"), ("set", "/b"), ("clear", "/a"),
                                        ("set", "/a"), ("clear", "/b"), ("set", "/c"),
                                        ("set", "/d")]))
        d.stop_ok(self)

    def test_reminders_and_ack(self):
        d = self.start()
        d.send("general", "/n", "nag")
        told = self.wait_told(2)  # the set, then a reminder 2s on
        self.assertEqual([t[0] for t in told[:2]], ["set", "remind"])
        r = d.ctl("ack", "nag", "/n", "--note", "on it", check=0)
        self.assertEqual(r.stdout, "1 row acknowledged\n")
        told = self.wait_told(3)
        self.assertEqual(told[-1][0], "ack")
        self.assertIn("Acked-By: ", told[-1][3])
        self.assertIn("Note: on it", told[-1][3])
        row = self.rows(d)[0]
        self.assertIsNone(row["next_reminder"])
        self.assertEqual(row["acked"]["note"], "on it")
        n = len(self.told())
        # two reminder periods: none comes
        time.sleep(4.5)  # the absence of a reminder, over twice its period
        self.assertEqual(len(self.told()), n)
        self.assertEqual(d.ctl("ack", "nag", "/nope").returncode, 1)
        self.assertEqual(d.ctl("ack", "nosuch").returncode, 1)
        d.stop_ok(self)

    def test_expire(self):
        d = self.start()
        d.send("general", "/m", "oom")
        told = self.wait_told(2)
        self.assertEqual(told[1][:2], ["clear", "/m"])
        self.assertIn("Reason: expired", told[1][3])
        self.assertEqual(self.rows(d), [])
        d.stop_ok(self)

    def test_damaged_table_costs_the_table(self):
        lib = self.s.path("libdir")
        os.makedirs(lib, mode=0o700)
        with open(os.path.join(lib, "conditions"), "w") as f:
            f.write("keventd-conditions 1\nrow\tbroken\n")
        d = self.start()
        d.wait_log("the condition table is damaged")
        self.assertTrue(os.path.exists(os.path.join(lib, "conditions.damaged")))
        d.send("power", "/cpu", "hot")
        self.wait_told(1)
        self.assertEqual(len(self.rows(d)), 1)
        d.stop_ok(self)
        # and the next start reads what this one wrote
        d2 = self.start()
        self.assertEqual(len(self.rows(d2)), 1)
        d2.stop_ok(self)

    def test_file_reads_the_table_without_keventd(self):
        d = self.start()
        d.send("storage", "/dev/sda", "bad")
        self.wait_told(1)
        d.stop_ok(self)
        path = os.path.join(self.s.path("libdir"), "conditions")
        r = subprocess.run([KEVENTCTL, "conditions", "--check", "--file", path],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 2, r.stdout)
        r = subprocess.run([KEVENTCTL, "conditions", "--json", "--file", path],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(json.loads(r.stdout)["key"], "/dev/sda")


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a rule's runs are counted by (key:), a storm settled into one run
(debounce:) and switching a rule off (enabled: false), keventd.rules(5),
as the real daemon runs them."""
import json

import kdtest
from kdtest import DaemonTest

RULES = ("rules:\n"
         "  - name: per-object\n    match: {signal: o}\n    ratelimit: 1/1h\n    run: [/bin/true]\n"
         "  - name: per-rule\n    match: {signal: r}\n    ratelimit: 1/1h\n    key: rule\n"
         "    run: [/bin/true]\n"
         "  - name: per-button\n    match: {signal: b}\n    ratelimit: 1/1h\n"
         "    key: payload.Button\n    run: [/bin/true]\n"
         "  - name: off\n    match: {signal: [o, r, b, x]}\n    enabled: false\n"
         "    run: [/bin/false]\n")


class Policy(DaemonTest):
    def outcomes(self, d):
        out = d.ctl("events", "--json", check=0).stdout
        return [(e["object"], e["signal"], [(r["name"], r["outcome"]) for r in e["rules"]])
                for e in map(json.loads, out.splitlines())]

    def test_keys_and_a_switched_off_rule(self):
        self.s.write_rule("10-p.yaml", RULES)
        d = self.start()
        sends = [("/org/kernel/in/a", "o", ""), ("/org/kernel/in/b", "o", ""),
                 ("/org/kernel/in/a", "r", ""), ("/org/kernel/in/b", "r", ""),
                 ("/org/kernel/in/a", "b", "Button: power"),
                 ("/org/kernel/in/b", "b", "Button: power"),
                 ("/org/kernel/in/b", "b", "Button: sleep"),
                 ("/org/kernel/in/c", "b", ""), ("/org/kernel/in/d", "b", ""),
                 ("/org/kernel/in/a", "x", "")]
        for obj, sig, payload in sends:
            d.send("general", obj, sig, payload)
        d.wait_idle(len(sends))
        got = self.outcomes(d)
        self.assertEqual([g[2] for g in got], [
            [("per-object", "exited")], [("per-object", "exited")],  # one budget per object
            [("per-rule", "exited")], [("per-rule", "rate-limited")],  # one for the rule
            [("per-button", "exited")], [("per-button", "rate-limited")],  # same button
            [("per-button", "exited")],  # another button
            # no Button property: they share the empty key
            [("per-button", "exited")], [("per-button", "rate-limited")],
            [],  # "off" never matches
        ])
        r = d.ctl("test", "--rules-dir", self.s.rules, "general", "/x", "r", check=0)
        self.assertIn("  ratelimit: 1/1h for the whole rule (key: rule)\n", r.stdout)
        r = d.ctl("test", "--rules-dir", self.s.rules, "general", "/x", "b", check=0)
        self.assertIn("  ratelimit: 1/1h per value of Button (key: payload.Button)\n", r.stdout)
        st = d.status()
        off = [r for r in st["rules"] if r["name"] == "off"]
        self.assertEqual((len(off), off[0]["matched"], off[0]["runs"]), (1, 0, 0))
        self.assertEqual(st["runs"]["ratelimited"], 3)
        # test and explain say why
        r = d.ctl("test", "--rules-dir", self.s.rules, "general", "/x", "o", check=0)
        self.assertIn("rule off (%s/10-p.yaml:16:5): no match: the rule is switched off "
                      "(enabled: false)" % self.s.rules, r.stdout)
        self.assertIn("the rule is switched off (enabled: false)",
                      d.ctl("explain", "last", check=0).stdout)
        d.stop_ok(self)

    def test_errors_have_their_place(self):
        self.s.write_rule("10-p.yaml", "rules:\n  - name: a\n    key: device\n"
                          "    enabled: perhaps\n")
        r = self.start().ctl("verify", self.s.rules, check=1)
        path = self.s.rules + "/10-p.yaml"
        self.assertEqual(r.stdout.splitlines() + r.stderr.splitlines(), [
            "%s:3:10: error: 'key' must be object, rule or payload.NAME, not \"device\"" % path,
            "%s:4:14: error: 'enabled' must be true or false, not \"perhaps\"" % path,
            "1 rule file, 0 rules, 2 errors"])


class Debounce(DaemonTest):
    def batch(self, events):
        path = self.s.path("batch")
        with open(path, "w") as f:
            for obj, payload in events:
                f.write("general\t%s\td\t%s\n" % (obj, payload.replace("\n", "\\n")))
        return path

    def rule(self, extra=""):
        s = self.s
        return ("rules:\n  - name: settle\n    match: {signal: d}\n    debounce: 300ms\n%s"
                "    run: %s\n" % (extra, self.h("append", s.path("out", "runs"),
                                                 "${KEVENT_OBJECT}=${KEVENT_N}", s.fifo.path)))

    def runs(self):
        with open(self.s.path("out", "runs")) as f:
            return f.read().split()

    def test_a_storm_runs_once_with_the_last_event(self):
        self.s.write_rule("10-d.yaml", self.rule())
        d = self.start()
        obj = "/org/kernel/button/1"
        d.ctl("send", "--batch", self.batch([(obj, "N: %d" % i) for i in range(50)]), check=0)
        self.s.fifo.line()
        st = d.wait_status(lambda st: st["runs"]["started"] == 1 and st["queue"]["pending"] == 0,
                           "one run, nothing pending")
        self.assertEqual(self.runs(), ["%s=49" % obj])
        # the 49 it replaced are counted; the 50th is the one that ran
        self.assertEqual(st["runs"]["debounced"], 49)
        (rule,) = st["rules"]
        self.assertEqual((rule["matched"], rule["runs"], rule["debounced"]), (50, 1, 49))
        # as events: the one that ran is handled, the 49 it replaced debounced
        ev = st["events"]
        self.assertEqual((ev["received"], ev["handled"], ev["debounced"]), (50, 1, 49))
        kdtest.assert_accounted(self, st)
        out = d.ctl("events", "--json", check=0).stdout.splitlines()
        outcomes = [json.loads(l)["rules"][0]["outcome"] for l in out]
        self.assertEqual(outcomes, ["debounced"] * 49 + ["exited"])
        self.assertIn("  settle: debounced (waiting for quiet, or replaced by a later event)",
                      d.ctl("events", "-n", "2", check=0).stdout)
        d.stop_ok(self)

    def test_an_event_with_other_runs_counts_with_them(self):
        # each event also runs a rule without debounce: all five are
        # handled events, and four of the debounced rule's runs replaced
        other = ("  - name: every\n    match: {signal: d}\n    run: %s\n"
                 % self.h("append", self.s.path("out", "every"), "${KEVENT_N}",
                          self.s.fifo.path))
        self.s.write_rule("10-d.yaml", self.rule() + other)
        d = self.start()
        obj = "/org/kernel/button/1"
        d.ctl("send", "--batch", self.batch([(obj, "N: %d" % i) for i in range(5)]), check=0)
        self.s.fifo.lines(6)
        st = d.wait_status(lambda st: st["runs"]["started"] == 6 and st["queue"]["pending"] == 0,
                           "five runs of every, one of settle")
        ev = st["events"]
        self.assertEqual((ev["received"], ev["handled"], ev["debounced"]), (5, 5, 0))
        kdtest.assert_accounted(self, st)
        self.assertEqual(st["runs"]["debounced"], 4)
        d.stop_ok(self)

    def test_key_rule_across_two_objects(self):
        self.s.write_rule("10-d.yaml", self.rule("    key: rule\n"))
        d = self.start()
        events = [("/org/kernel/input/%s" % "ab"[i % 2], "N: %d" % i) for i in range(10)]
        d.ctl("send", "--batch", self.batch(events), check=0)
        self.s.fifo.line()
        st = d.wait_status(lambda st: st["queue"]["pending"] == 0 and st["runs"]["started"] == 1,
                           "one run for both objects")
        self.assertEqual(self.runs(), ["/org/kernel/input/b=9"])
        self.assertEqual(st["runs"]["debounced"], 9)
        ev = st["events"]
        self.assertEqual((ev["received"], ev["handled"], ev["debounced"]), (10, 1, 9))
        kdtest.assert_accounted(self, st)
        d.stop_ok(self)

    def test_by_object_each_object_settles_alone(self):
        self.s.write_rule("10-d.yaml", self.rule())
        d = self.start()
        events = [("/org/kernel/input/%s" % "ab"[i % 2], "N: %d" % i) for i in range(10)]
        d.ctl("send", "--batch", self.batch(events), check=0)
        self.s.fifo.lines(2)
        st = d.wait_status(lambda st: st["queue"]["pending"] == 0 and st["runs"]["started"] == 2,
                           "one run per object")
        self.assertEqual(sorted(self.runs()), ["/org/kernel/input/a=8", "/org/kernel/input/b=9"])
        self.assertEqual(st["runs"]["debounced"], 8)
        ev = st["events"]
        self.assertEqual((ev["received"], ev["handled"], ev["debounced"]), (10, 2, 8))
        kdtest.assert_accounted(self, st)
        self.s.write_rule("20-bad.yaml", "rules:\n  - debounce: 5 parsecs\n")
        r = d.ctl("verify", self.s.rules, check=1)
        self.assertIn("20-bad.yaml:2:15: error: bad debounce \"5 parsecs\"", r.stdout)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

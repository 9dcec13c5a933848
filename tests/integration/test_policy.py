#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a rule's runs are counted by (key:) and switching a rule off
(enabled: false), keventd.rules(5), as the real daemon runs them."""
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


if __name__ == "__main__":
    kdtest.main()

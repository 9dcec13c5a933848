#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Drop-ins (keventd.rules(5), DROP-INS): NAME.yaml.d/ in any rule directory
changes named rules of NAME.yaml key by key, at once, without a restart; a
drop-in that names no rule is reported where it is, and the rest goes on."""
import json
import os
import re

import kdtest
from kdtest import DaemonTest


class DropIns(DaemonTest):
    def setUp(self):
        super().setUp()
        s = self.s
        self.etc = s.mkdir("etc")
        self.lib = s.mkdir("lib")
        self.dropdir = os.path.join(self.etc, "50-vendor.yaml.d")
        s.write_rule("50-vendor.yaml", (
            "rules:\n"
            "  - name: vendor-a\n    match: {signal: a}\n    run: %s\n"
            "  - name: vendor-b\n    match: {signal: b}\n    run: %s\n"
            "  - name: vendor-slow\n    match: {signal: s}\n    timeout: 30s\n"
            "    run: [/bin/sleep, \"30\"]\n"
            % (self.append("vendor-a"), self.append("vendor-b"))), dir=self.lib)
        s.write_rule("60-other.yaml", "rules:\n  - name: other\n    match: {signal: o}\n"
                     "    run: %s\n" % self.append("other"), dir=self.lib)

    def append(self, tag):
        return self.h("append", self.s.path("out", "log"), tag + ":${KEVENT_SIGNAL}",
                      self.s.fifo.path)

    def fires(self, d, tag, sig):
        d.send("general", "/r", sig)
        self.assertEqual(self.s.fifo.line(), "done %s:%s" % (tag, sig))

    def last_event(self, d):
        out = d.ctl("events", "--json", "-n", "1", check=0).stdout
        return json.loads(out.splitlines()[-1])

    def changed(self, d, do):
        """Does DO, then waits for the reload it causes."""
        before = d.status()["ruleset"]["reloads"]
        do()
        return d.wait_status(lambda st: st["ruleset"]["reloads"] > before, "a reload")

    def test_change_switch_off_and_restore_without_restart(self):
        s = self.s
        d = self.start(rules_dirs=[self.etc, self.lib])
        self.fires(d, "vendor-a", "a")
        # the directory first, as an admin makes it; then the file, later
        self.changed(d, lambda: os.mkdir(self.dropdir, 0o755))
        self.changed(d, lambda: s.write_rule("10-local.yaml", (
            "rules:\n"
            "  - name: vendor-a\n    run: %s\n"
            "  - name: vendor-slow\n    timeout: 200ms\n" % self.append("local-a")),
            dir=self.dropdir))
        self.assertIn("rules: 50-vendor.yaml: changed", d.logtext())
        self.fires(d, "local-a", "a")
        d.send("general", "/r", "s")
        d.wait_idle(d.status()["events"]["received"])
        slow = self.last_event(d)["rules"][0]
        self.assertEqual((slow["name"], slow["outcome"], slow["timed_out"]),
                         ("vendor-slow", "killed", True))
        self.assertLess(slow["duration_ms"], 10000)
        # a second drop-in switches vendor-b off; it stays listed
        self.fires(d, "vendor-b", "b")
        st = self.changed(d, lambda: s.write_rule(
            "20-off.yaml", "rules:\n  - name: vendor-b\n    enabled: false\n", dir=self.dropdir))
        self.assertIn("vendor-b", [r["name"] for r in st["rules"]])
        received = st["events"]["received"]
        d.send("general", "/r", "b")
        d.wait_idle(received + 1)
        self.assertEqual(self.last_event(d)["rules"], [])
        # the offline tools see what keventd runs
        r = d.ctl("test", "--rules-dir", self.etc, "--rules-dir", self.lib, "general", "/r", "s",
                  check=0)
        self.assertIn("  timeout: 200ms\n", r.stdout)
        r = d.ctl("test", "--rules-dir", self.etc, "--rules-dir", self.lib, "general", "/r", "b",
                  check=0)
        self.assertIn("the rule is switched off (enabled: false)", r.stdout)
        self.assertEqual(d.ctl("verify", self.etc, self.lib, check=0).stderr,
                         "2 rule files, 4 rules, 0 errors\n")
        # cat's output is the merged file, and loads as it is
        merged = s.mkdir("merged")
        s.write_rule("50-vendor.yaml", d.ctl("cat", "50-vendor.yaml", "--rules-dir", self.etc,
                                             "--rules-dir", self.lib, check=0).stdout, dir=merged)
        r = d.ctl("test", "--rules-dir", merged, "general", "/r", "s", check=0)
        self.assertIn("  timeout: 200ms\n", r.stdout)
        r = d.ctl("test", "--rules-dir", merged, "general", "/r", "b", check=0)
        self.assertIn("the rule is switched off (enabled: false)", r.stdout)
        # the drop-ins go (the directory moved away at once): the vendor's rules are back
        self.changed(d, lambda: os.rename(self.dropdir, s.path("gone")))
        self.fires(d, "vendor-a", "a")
        self.fires(d, "vendor-b", "b")
        self.fires(d, "other", "o")
        self.assertEqual(d.status()["ruleset"]["reload_errors"], 0)
        d.stop_ok(self)

    def test_a_drop_in_naming_no_rule_is_reported_and_the_rest_goes_on(self):
        s = self.s
        os.mkdir(self.dropdir, 0o755)
        s.write_rule("10-local.yaml", "rules:\n  - name: vendor-a\n    run: %s\n"
                     % self.append("local-a"), dir=self.dropdir)
        d = self.start(rules_dirs=[self.etc, self.lib])
        self.fires(d, "local-a", "a")
        bad = os.path.join(self.dropdir, "20-typo.yaml")
        st = self.changed(d, lambda: s.write_rule(
            "20-typo.yaml", "rules:\n  - name: vendor-bb\n    enabled: false\n",
            dir=self.dropdir))
        self.assertEqual(st["ruleset"]["reload_errors"], 1)
        log = d.logtext()
        self.assertRegex(log, re.escape(bad) + r":2:11: error: no rule named \"vendor-bb\" in "
                         r"50-vendor.yaml")
        self.assertIn("rules: 50-vendor.yaml: broken, keeping its last good version", log)
        # the last good version of the file, drop-in included, and every other file
        self.fires(d, "local-a", "a")
        self.fires(d, "vendor-b", "b")
        self.fires(d, "other", "o")
        r = d.ctl("verify", self.etc, self.lib, check=1)
        self.assertEqual(r.stdout, "%s:2:11: error: no rule named \"vendor-bb\" in "
                         "50-vendor.yaml\n" % bad)
        # the reload fails while the file is broken; status names it, and
        # that its last good version is the one in force
        r = d.ctl("reload", check=1)
        self.assertIn("%s:2:11: error: no rule named" % bad, r.stdout)
        b = d.status()["broken_files"]
        self.assertEqual([(x["file"], x["last_good_in_force"]) for x in b],
                         [("50-vendor.yaml", True)])
        self.assertIn("%s:2:11: error: no rule named" % bad, b[0]["error"])
        self.fires(d, "other", "o")
        x = d.ctl("explain", "last", check=0).stdout
        self.assertIn("\nnote: 50-vendor.yaml was broken at the time (%s:2:11: error: no rule "
                      "named" % bad, x)
        self.assertTrue(x.endswith(") and only its last good version was in force\n"), x)
        # a start with the error: the other files load, the broken one does not
        d.stop_ok(self)
        d = self.start(rules_dirs=[self.etc, self.lib])
        self.assertEqual([r["name"] for r in d.status()["rules"]], ["other"])
        self.fires(d, "other", "o")
        # fixed: it loads
        self.changed(d, lambda: os.unlink(bad))
        self.fires(d, "local-a", "a")
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

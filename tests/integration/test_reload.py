#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Live reload (keventd.rules(5), keventd(8)): inotify on the rule directories,
SIGHUP, keventctl reload; broken files keep their last good version; masks."""
import json
import os
import re
import signal

import kdtest
from kdtest import DaemonTest

ERROR_LINE = r"%s:\d+:\d+: error: "
FILE_ERROR = r"%s: error: "  # about the whole file: no position


class Reload(DaemonTest):
    def rule(self, name, signal_="x"):
        return ("rules:\n  - name: %s\n    match: {signal: %s}\n    run: %s\n"
                % (name, signal_, self.h("append", self.s.path("out", "log"), name + ":${KEVENT_SIGNAL}",
                                         self.s.fifo.path)))

    def rule_names(self, d, pred, what):
        return d.wait_status(lambda st: pred([r["name"] for r in st["rules"]]), what)

    def fires(self, d, name, sig="x"):
        d.send("general", "/r", sig)
        self.assertEqual(self.s.fifo.line(), "done %s:%s" % (name, sig))

    def fires_nothing(self, d, sig="x"):
        before = d.status()
        d.send("general", "/r", sig)
        st = d.wait_idle(before["events"]["received"] + 1)
        self.assertEqual(st["runs"]["started"], before["runs"]["started"])

    def test_inotify_add_change_remove(self):
        s = self.s
        d = self.start()
        self.assertEqual(d.status()["ruleset"]["rules"], 0)
        path = s.write_rule("10-a.yaml", self.rule("first"))
        self.rule_names(d, lambda n: n == ["first"], "the added file")
        self.fires(d, "first")
        s.write_rule("10-a.yaml", self.rule("second"))  # replaced by rename, as editors do
        self.rule_names(d, lambda n: n == ["second"], "the changed file")
        self.fires(d, "second")
        with open(path, "w") as f:  # rewritten in place
            f.write(self.rule("third"))
        self.rule_names(d, lambda n: n == ["third"], "the file rewritten in place")
        self.fires(d, "third")
        os.unlink(path)
        st = self.rule_names(d, lambda n: n == [], "the removed file")
        self.assertEqual(st["ruleset"]["files"], 0)
        self.fires_nothing(d)
        log = d.logtext()
        for what in ("added", "changed", "removed"):
            self.assertIn("rules: 10-a.yaml: " + what, log)
        self.assertEqual(st["ruleset"]["reload_errors"], 0)
        d.stop_ok(self)

    def test_broken_file_keeps_last_good_version(self):
        s = self.s
        path = s.write_rule("10-a.yaml", self.rule("good"))
        d = self.start()
        self.fires(d, "good")
        s.write_rule("10-a.yaml", self.rule("good") + "    bogus: 1\n")
        st = d.wait_status(lambda st: st["ruleset"]["reload_errors"] >= 1, "a reload error")
        self.assertEqual([r["name"] for r in st["rules"]], ["good"])
        log = d.logtext()
        self.assertRegex(log, ERROR_LINE % re.escape(path) + "unknown key 'bogus'")
        self.assertIn("10-a.yaml: broken, keeping its last good version", log)
        self.fires(d, "good")
        # a new file that is broken from the start is not loaded; the others stay
        bad = s.write_rule("20-b.yaml", "rules:\n  - name: b\n    match: {signal: x}\n    timeout: soon\n"
                           "    run: [/bin/true]\n")
        d.wait_log("20-b.yaml: broken, not loaded")
        self.assertRegex(d.logtext(), ERROR_LINE % re.escape(bad) + "bad timeout")
        self.fires(d, "good")
        # fixed: both load
        s.write_rule("10-a.yaml", self.rule("fixed"))
        os.unlink(bad)
        self.rule_names(d, lambda n: n == ["fixed"], "the fixed file")
        self.fires(d, "fixed")
        d.stop_ok(self)

    def test_unsafe_file_refused_when_root(self):
        if not kdtest.IS_ROOT:
            self.skipTest("the ownership checks apply when keventd runs as root")
        s = self.s
        s.write_rule("10-a.yaml", self.rule("good"))
        d = self.start()
        path = s.write_rule("20-b.yaml", self.rule("unsafe", "y"))
        os.chmod(path, 0o666)
        d.wait_log("writable by group or others")
        self.assertNotIn("unsafe", [r["name"] for r in d.status()["rules"]])
        self.fires_nothing(d, "y")
        d.stop_ok(self)

    def test_masking_across_directories(self):
        s = self.s
        etc = s.mkdir("etc")
        lib = s.mkdir("lib")
        s.write_rule("50-x.yaml", self.rule("vendor"), dir=lib)
        s.write_rule("60-y.yaml", self.rule("other", "y"), dir=lib)
        d = self.start(rules_dirs=[etc, lib])
        self.fires(d, "vendor")
        # an admin's file of the same name replaces the vendor's
        s.write_rule("50-x.yaml", self.rule("admin"), dir=etc)
        self.rule_names(d, lambda n: n == ["admin", "other"], "the admin's override")
        self.fires(d, "admin")
        # an empty file masks it
        s.write_rule("50-x.yaml", "", dir=etc)
        self.rule_names(d, lambda n: n == ["other"], "the empty file masking")
        self.fires_nothing(d)
        os.unlink(os.path.join(etc, "50-x.yaml"))
        self.rule_names(d, lambda n: n == ["vendor", "other"], "the vendor file back")
        self.fires(d, "vendor")
        # so does a symlink to /dev/null
        os.symlink("/dev/null", os.path.join(etc, "50-x.yaml"))
        self.rule_names(d, lambda n: n == ["other"], "the /dev/null masking")
        self.fires_nothing(d)
        self.fires(d, "other", "y")
        st = d.status()
        self.assertEqual(st["ruleset"]["reload_errors"], 0)
        d.stop_ok(self)

    def test_symlink_across_directories_keventd_and_verify(self):
        """A symlink in one rule directory to a file in another is a rule file
        for keventd --rules-dir A --rules-dir B, and for keventctl verify A B
        alike (keventctl(8)); verify A alone refuses it, as keventd would."""
        s = self.s
        etc, lib = s.mkdir("etc"), s.mkdir("lib")
        s.write_rule("60-y.yaml", self.rule("linked", "y"), dir=lib)
        os.symlink(os.path.join("..", "lib", "60-y.yaml"), os.path.join(etc, "70-link.yaml"))
        d = self.start(rules_dirs=[etc, lib])
        self.rule_names(d, lambda n: n == ["linked", "linked"], "both files loaded")
        self.assertNotIn("symlink points outside", d.logtext())
        st = d.status()
        self.assertEqual(st["ruleset"]["files"], 2)
        self.assertEqual(st["ruleset"]["reload_errors"], 0)
        r = d.ctl("verify", etc, lib)
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)
        self.assertEqual(r.stderr, "2 rule files, 2 rules, 0 errors\n")
        r = d.ctl("verify", etc)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stdout, "^" + FILE_ERROR % re.escape(os.path.join(etc, "70-link.yaml"))
                         + "symlink points outside the rule directories")
        d.stop_ok(self)

    def test_rule_dir_that_did_not_exist_at_start(self):
        s = self.s
        later = s.path("later", "deep", "rules.d")
        d = self.start(rules_dirs=[later, s.rules])
        self.assertEqual(d.status()["ruleset"]["rules"], 0)
        os.makedirs(later, mode=0o755)
        s.write_rule("10-late.yaml", self.rule("late"), dir=later)
        self.rule_names(d, lambda n: n == ["late"], "the rule in the new directory")
        self.fires(d, "late")
        # and it is watched now: a change in it is seen too
        s.write_rule("10-late.yaml", self.rule("later"), dir=later)
        self.rule_names(d, lambda n: n == ["later"], "the change in the new directory")
        d.stop_ok(self)

    def test_reload_while_handlers_run_and_wait(self):
        """Jobs matched before a reload keep the rules they matched, even when
        the file is gone (the sanitizer build catches a use after free)."""
        s = self.s
        s.write_rule("10-a.yaml", "rules:\n  - name: slow\n    match: {signal: x}\n    run: %s\n"
                     % self.h("wait", s.fifo.path, s.gates.dir + "/${KEVENT_SEQNUM}", "${KEVENT_SEQNUM}"))
        s.gates.path("1")
        s.gates.path("2")
        d = self.start()
        d.send("general", "/same", "x")
        d.send("general", "/same", "x")  # queued behind the first
        self.assertEqual(s.fifo.line().split()[:2], ["start", "1"])
        os.unlink(s.path("rules", "10-a.yaml"))
        r = d.ctl("reload", check=0)
        if "no changes" in r.stdout:
            d.wait_log("rules: 10-a.yaml: removed")
        self.assertTrue(r.stdout.endswith("0 rules in 0 files\n"), r.stdout)
        s.gates.release("1")
        self.assertEqual(s.fifo.line(), "end 1")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "2"])
        s.write_rule("10-a.yaml", self.rule("new"))
        d.ctl("reload", check=0)
        s.gates.release("2")
        self.assertEqual(s.fifo.line(), "end 2")
        st = d.wait_idle(2)
        self.assertEqual(st["runs"]["started"], 2)
        self.assertRegex(d.logtext(), r"rule slow\[\d+\]: exited 0 after \d+ms \(seq 2\)")
        self.fires(d, "new")
        d.stop_ok(self)

    def test_rule_dir_removed_and_recreated(self):
        s = self.s
        s.write_rule("10-a.yaml", self.rule("a"))
        d = self.start()
        self.fires(d, "a")
        os.unlink(s.path("rules", "10-a.yaml"))
        os.rmdir(s.rules)
        self.rule_names(d, lambda n: n == [], "the rules gone with their directory")
        os.mkdir(s.rules, 0o755)
        s.write_rule("10-a.yaml", self.rule("back"))
        self.rule_names(d, lambda n: n == ["back"], "the recreated directory's rules")
        self.fires(d, "back")
        d.stop_ok(self)

    def test_sighup(self):
        s = self.s
        s.write_rule("10-a.yaml", self.rule("a"))
        d = self.start()
        self.assertEqual(d.status()["ruleset"]["reloads"], 0)
        d.proc.send_signal(signal.SIGHUP)
        d.wait_notify("RELOADING=1")
        d.wait_notify("READY=1")
        st = d.status()
        self.assertEqual(st["ruleset"]["reloads"], 1)
        self.assertEqual([r["name"] for r in st["rules"]], ["a"])
        self.assertIn("SIGHUP: reloading rules", d.logtext())
        self.fires(d, "a")
        d.stop_ok(self)

    def test_keventctl_reload_output(self):
        s = self.s
        s.write_rule("10-a.yaml", self.rule("a"))
        d = self.start()
        r = d.ctl("reload", check=0)
        self.assertEqual(r.stdout, "no changes\n1 rules in 1 files\n")
        # inotify may see the change first; then this reload has nothing new to say
        s.write_rule("20-b.yaml", self.rule("b", "y"))
        r = d.ctl("reload", check=0)
        if "no changes" in r.stdout:
            d.wait_log("rules: 20-b.yaml: added")
        else:
            self.assertIn("20-b.yaml: added\n", r.stdout)
        self.assertTrue(r.stdout.endswith("2 rules in 2 files\n"), r.stdout)
        # errors are reported on every reload while the file is broken, and
        # fail it, as systemctl reload would
        bad = s.write_rule("30-c.yaml", "rules:\n  - name: c\n    match: {signal: [x}\n")
        r = d.ctl("reload", check=1)
        self.assertRegex(r.stdout, ERROR_LINE % re.escape(bad))
        self.assertIn("1 rule file is broken", r.stderr)
        self.assertTrue(r.stdout.endswith("2 rules in 2 files\n"), r.stdout)
        self.assertIn("reload requested over the control socket", d.logtext())
        self.assertEqual(d.ctl("reload", "extra").returncode, 2)
        self.fires(d, "a")
        self.fires(d, "b", "y")
        d.stop_ok(self)

    def test_broken_file_named_by_reload_status_explain(self):
        """A new rule with a typo is named by what an admin types first: the
        exit and words of keventctl reload, keventctl status, keventctl
        events and explain (keventctl(8))."""
        s = self.s
        s.write_rule("10-a.yaml", self.rule("a"))
        d = self.start()
        bad = s.write_rule("20-b.yaml", "rules:\n  - name: b\n    match: {signal: x}\n"
                           "    timout: 5s\n    run: [/bin/true]\n")
        typo = (ERROR_LINE % re.escape(bad)) + re.escape("unknown key 'timout' in rule: "
                                                         "did you mean timeout?")
        r = d.ctl("reload", check=1)
        self.assertRegex(r.stdout, typo)
        self.assertEqual(r.stderr, "keventctl: keventd: 1 rule file is broken (keventctl status "
                         "lists it)\n")
        text = d.ctl("status", check=0).stdout
        self.assertRegex(text, r"\nbroken: 20-b\.yaml \(not loaded\): " + typo + "\n")
        st = d.status()
        self.assertEqual([b["file"] for b in st["broken_files"]], ["20-b.yaml"])
        self.assertRegex(st["broken_files"][0]["error"], typo)
        self.assertFalse(st["broken_files"][0]["last_good_in_force"])
        self.assertEqual(st["ruleset"]["broken"], 1)
        prom = d.ctl("status", "--prometheus", check=0).stdout
        self.assertIn("\nkeventd_rule_files_broken 1\n", prom)
        self.fires(d, "a")
        ev = d.ctl("events", check=0).stdout
        self.assertIn("  note: 1 rule file was broken at the time (keventctl explain", ev)
        self.assertEqual(json.loads(d.ctl("events", "--json", check=0).stdout.splitlines()[-1])
                         ["broken_files"], 1)
        x = d.ctl("explain", "last", check=0).stdout
        self.assertRegex(x, r"\nnote: 20-b\.yaml was broken at the time \(" + typo
                         + r"\) and its rules were not in force\n$")
        note = json.loads(d.ctl("explain", "last", "--json", check=0).stdout.splitlines()[-1])
        self.assertEqual((note["broken"], note["last_good_in_force"]), ("20-b.yaml", False))
        self.assertRegex(note["error"], typo)
        # fixed: reload succeeds, status names nothing, explain of a new event says nothing
        s.write_rule("20-b.yaml", self.rule("b", "y"))
        r = d.ctl("reload", check=0)
        st = d.status()
        self.assertEqual((st["broken_files"], st["ruleset"]["broken"]), ([], 0))
        self.assertNotIn("broken", d.ctl("status", check=0).stdout)
        self.fires(d, "a")
        self.assertNotIn("note:", d.ctl("explain", "last", check=0).stdout)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

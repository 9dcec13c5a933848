#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Command lines (keventd(8), keventctl(8)): --help, --version, exit status 2 on bad
usage for keventd and keventctl, 1 on a run-time failure."""
import json
import os
import subprocess

import kdtest
from kdtest import DaemonTest, TIMEOUT


def run(*argv, **kw):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL, **kw)


class CommandLine(DaemonTest):
    def test_help_and_version(self):
        for prog, name in ((kdtest.KEVENTD, "keventd"), (kdtest.KEVENTCTL, "keventctl")):
            for opt in ("--help", "-h"):
                r = run(prog, opt)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.startswith("Usage: " + name), r.stdout)
                self.assertEqual(r.stderr, "")
            r = run(prog, "--version")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, r"^%s \d+\.\d+\.\d+\n$" % name)
        r = run(kdtest.KEVENTD, "--help")
        for opt in ("--user", "--rules-dir", "--control", "--sources", "--max-children",
                    "--log-level", "--dry-run"):
            self.assertIn(opt, r.stdout)
        # every source of the sources' list (event.h), kmsg the last added
        sources = ("kernel", "udev", "thermal", "socket", "acpi", "input", "fs", "mqtt",
                   "trace", "md", "kmsg")
        listed = r.stdout.split("--sources LIST", 1)[1].split("--udev-monitor", 1)[0]
        listed = listed.split("file):", 1)[1]
        self.assertEqual([w for w in listed.replace(",", " ").split() if w in sources],
                         list(sources), r.stdout)
        self.assertTrue(all(len(l) <= 80 for l in listed.splitlines()), listed)
        r = run(kdtest.KEVENTCTL, "--help")
        self.assertIn("  --user ", r.stdout)
        for cmd in ("send", "monitor", "test", "verify", "reload", "status"):
            self.assertIn("  " + cmd + " ", r.stdout)
        for cmd in ("send", "monitor", "reload", "status"):
            r = run(kdtest.KEVENTCTL, cmd, "--help")
            self.assertEqual(r.returncode, 0, (cmd, r.stderr))
            self.assertIn("Usage: keventctl " + cmd, r.stdout)

    def test_keventd_bad_usage(self):
        ctl = ["--control", self.s.ctl, "--rules-dir", self.s.rules]
        for args in (["--bogus"], ["extra"], ["--max-children", "0"], ["--max-children", "x"],
                     ["--max-children"], ["--log-level", "loud"], ["--sources", "nosuch"],
                     ["--queue-size", "0"], ["--control-group", "no-such-group-here"],
                     ["--log-format", "xml"]):
            r = run(kdtest.KEVENTD, *(ctl + args))
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn("keventd", r.stderr)
            self.assertEqual(r.stdout, "")
        self.assertFalse(os.path.exists(self.s.ctl))
        r = run(kdtest.KEVENTD, *(ctl + ["--sources", "nosuch"]))
        self.assertIn("(kernel, udev, thermal, socket, acpi, input, fs, mqtt, trace, md, "
                      "kmsg, condition)", r.stderr)

    def test_keventctl_bad_usage(self):
        c = ["--control", self.s.ctl]
        for args in ([], ["--bogus"], ["frobnicate"], ["send"], ["send", "general", "/x"],
                     ["send", "general", "/x", "s", "p", "extra"], ["status", "--bogus"],
                     ["status", "extra"], ["monitor", "extra"], ["monitor", "--bogus"],
                     ["reload", "extra"], ["send", "--bogus", "general", "/x", "s"],
                     ["send", "--batch"], ["send", "--batch", "-", "general"],
                     ["test", "--bogus"], ["verify", "--bogus"]):
            r = run(kdtest.KEVENTCTL, *(c + args))
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            # what is wrong, and where to read how it is right
            self.assertRegex(r.stderr, r"Try 'keventctl( [a-z]+)? --help'\.\n$", args)

    def test_runtime_failures_exit_1(self):
        # no keventd listening
        r = run(kdtest.KEVENTCTL, "--control", self.s.ctl, "status")
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot connect", r.stderr)
        # keventd cannot listen where it is told to
        r = run(kdtest.KEVENTD, "--rules-dir", self.s.rules, "--control",
                "/proc/no/such/dir/ctl", "--sources", "socket")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot listen", r.stderr)

    def test_log_level_and_format(self):
        d = self.start("--log-format", "json", "--log-level", "debug")
        d.send("general", "/j", "x")
        d.wait_idle(1)
        d.stop_ok(self)
        lines = d.logtext().splitlines()
        levels = set()
        for l in lines:
            e = json.loads(l)
            self.assertEqual(sorted(e), ["level", "message"])
            levels.add(e["level"])
        self.assertIn("debug", levels)
        self.assertTrue(any("seq 1" in json.loads(l)["message"] for l in lines))
        # warnings only: a quiet start
        self.s.write_rule("10-a.yaml", "rules:\n  - match: {}\n    run: [/bin/false]\n")
        d = self.start("--log-level", "warning")
        d.send("general", "/q", "x")
        d.wait_idle(1)
        d.stop_ok(self)
        lines = d.logtext().splitlines()
        self.assertTrue(lines)
        for l in lines:
            self.assertRegex(l, r"^keventd: (warning|error): ")

    def test_second_instance_refused(self):
        d = self.start()
        r = run(kdtest.KEVENTD, "--rules-dir", self.s.rules, "--control", self.s.ctl,
                "--sources", "socket")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(d.ctl("status", check=0).returncode, 0)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The configuration file (keventd(8), keventd.yaml(5)): long options by
name, the command line over them, mistakes reported as FILE:LINE:COLUMN with
exit status 2, a file that --config names but is not there."""
import os
import subprocess

import kdtest
from kdtest import DaemonTest, TIMEOUT


def run(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL)


class ConfigFile(DaemonTest):
    def write(self, name, text):
        path = self.s.path(name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def test_options_by_name(self):
        conf = self.write("keventd.yaml", r"""
# as keventd(8)'s long options
max-children: 3
queue-size: 100
history: 0
""")
        d = self.start("--config", conf)
        d.wait_log("max 3 children")
        st = d.status()
        self.assertEqual(st["sources"]["socket"]["share"], 100)
        d.send("general", "/c", "x")
        d.wait_idle(1)
        # --history 0: keventctl events has nothing to show
        r = d.ctl("events", "--json")
        self.assertEqual(r.stdout, "", r.stderr)
        d.stop_ok(self)

    def test_command_line_wins(self):
        conf = self.write("keventd.yaml", "max-children: 3\nqueue-size: 100\n")
        d = self.start("--config", conf, "--queue-size", "50")
        d.wait_log("max 3 children")
        self.assertEqual(d.status()["sources"]["socket"]["share"], 50)
        d.stop_ok(self)

    def test_mistakes(self):
        conf = self.write("bad.yaml", "max-children: many\nmqtt:\n  url: http://b\n  qos: 2\n")
        r = run(kdtest.KEVENTD, "--config", conf, "--control", self.s.ctl,
                "--rules-dir", self.s.rules)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr,
                         "keventd: %s:1:15: error: max-children wants 1..65536, not 'many'\n"
                         "keventd: %s:3:8: error: mqtt: url \"http://b\" is neither "
                         "mqtt://HOST:PORT nor mqtts://HOST:PORT\n"
                         "keventd: %s:4:8: error: mqtt: 'qos' wants a number from 0 to 1, "
                         "not '2'\n" % (conf, conf, conf))
        self.assertFalse(os.path.exists(self.s.ctl))
        # keventctl verify says the same
        r = run(kdtest.KEVENTCTL, "verify", "--config", conf, self.s.rules)
        self.assertEqual(r.returncode, 1)
        self.assertIn("%s:1:15: error: max-children wants 1..65536" % conf, r.stdout)
        self.assertIn("1 configuration file, 0 rule files, 0 rules, 3 errors", r.stderr)

    def test_missing(self):
        r = run(kdtest.KEVENTD, "--config", self.s.path("none.yaml"), "--control", self.s.ctl,
                "--rules-dir", self.s.rules)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot read %s: No such file or directory" % self.s.path("none.yaml"),
                      r.stderr)

    def test_refused_when_others_may_write(self):
        if not kdtest.IS_ROOT:
            self.skipTest("trust checks apply to root only")
        conf = self.write("keventd.yaml", "history: 5\n")
        os.chmod(conf, 0o666)
        r = run(kdtest.KEVENTD, "--config", conf, "--control", self.s.ctl,
                "--rules-dir", self.s.rules)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("refusing configuration file", r.stderr)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl monitor and events as udevadm and journalctl (keventctl(8)):
--source/--type/--rule/--failed filters, -n of what passes, monitor -c and
-t, times in local time unless --utc, options after positionals."""
import json
import os
import re
import subprocess
import time

import kdtest
from kdtest import DaemonTest

RULES = """rules:
  - name: ok
    match: {signal: ok}
    shell: 'exit 0'
  - name: bad
    match: {signal: bad}
    shell: 'exit 5'
  - name: watch
    match: {type: power}
"""


class Events(DaemonTest):
    def events(self, d, *args):
        r = d.ctl("events", "--json", *args, check=0)
        return [json.loads(l) for l in r.stdout.splitlines()]

    def test_filters_and_n(self):
        self.s.write_rule("10-f.yaml", RULES)
        d = self.start()
        sends = [("power", "ok"), ("storage", "bad"), ("power", "bad"), ("general", "ok"),
                 ("storage", "ok"), ("power", "x")]
        for i, (t, sig) in enumerate(sends):
            d.send(t, "/org/kernel/f/%d" % i, sig)
        d.wait_idle(len(sends))
        seqs = lambda evs: [e["seqnum"] for e in evs]
        self.assertEqual(seqs(self.events(d, "--type", "power")), [1, 3, 6])
        self.assertEqual(seqs(self.events(d, "--failed")), [2, 3])
        self.assertEqual(seqs(self.events(d, "--rule", "watch")), [1, 3, 6])
        self.assertEqual(seqs(self.events(d, "--rule", "ok", "--type", "storage")), [5])
        self.assertEqual(seqs(self.events(d, "--source", "udev")), [])
        self.assertEqual(seqs(self.events(d, "--source", "socket")), list(range(1, 7)))
        # -n: the last N of those that pass
        self.assertEqual(seqs(self.events(d, "--type", "power", "-n", "2")), [3, 6])
        # options after positionals, and in text: the failed runs' events only
        text = d.ctl("events", "--failed", "-n", "1", check=0).stdout
        self.assertIn("power /org/kernel/f/2 bad\n  bad: exited 5", text)
        self.assertEqual(text.count(" socket seq="), 1)
        # mistakes are usage errors, named
        r = d.ctl("events", "--type", "nope", check=2)
        self.assertIn("unknown type 'nope'", r.stderr)
        r = d.ctl("events", "--source", "nope", check=2)
        self.assertIn("(kernel, udev, thermal, socket,", r.stderr)
        d.stop_ok(self)

    def test_local_time_unless_utc(self):
        self.s.write_rule("10-f.yaml", RULES)
        d = self.start()
        d.send("power", "/org/kernel/f", "ok")
        d.wait_idle(1)
        env = dict(os.environ, TZ="XYZ-5:30")  # POSIX: 5h30 east of UTC, no tzdata needed
        run = lambda *a: subprocess.run([kdtest.KEVENTCTL, "--control", self.s.ctl] + list(a),
                                        capture_output=True, text=True, env=env,
                                        check=True).stdout
        local = run("events").splitlines()[0]
        utc = run("events", "--utc").splitlines()[0]
        m = re.match(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) XYZ socket seq=1 ", local)
        self.assertTrue(m, local)
        u = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z socket seq=1 ", utc)
        self.assertTrue(u, utc)
        lt = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
        ut = time.mktime(time.strptime(u.group(1), "%Y-%m-%dT%H:%M:%S"))
        self.assertEqual(lt - ut, 5.5 * 3600)
        self.assertEqual(m.group(2), u.group(2))
        x = run("explain", "1")
        self.assertRegex(x, r"\ntime: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} XYZ\n")
        self.assertRegex(run("explain", "1", "--utc"), r"\ntime: \d{4}-\d\d-\d\dT[0-9:.]+Z\n")
        d.stop_ok(self)


class Monitor(DaemonTest):
    def monitor(self, *args):
        p = subprocess.Popen([kdtest.KEVENTCTL, "--control", self.s.ctl, "monitor"] + list(args),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        self.assertIn("monitoring", p.stderr.readline())  # subscribed
        return p

    def test_filters_count_and_timeout(self):
        self.s.write_rule("10-f.yaml", RULES)
        d = self.start()
        power = self.monitor("--type", "power", "-c", "2", "--json")
        rule = self.monitor("--rule", "bad", "-c", "1")
        for t, sig in (("storage", "ok"), ("power", "ok"), ("storage", "bad"), ("power", "x")):
            d.send(t, "/org/kernel/m", sig)
        out, _ = power.communicate(timeout=kdtest.TIMEOUT)
        self.assertEqual(power.returncode, 0)
        self.assertEqual([json.loads(l)["seqnum"] for l in out.splitlines()], [2, 4])
        out, _ = rule.communicate(timeout=kdtest.TIMEOUT)
        self.assertEqual(rule.returncode, 0)
        (line,) = out.splitlines()
        self.assertRegex(line, r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+ socket seq=3 "
                         r"storage /org/kernel/m bad payload=\"\" rules=bad$")
        # -t: gives up after the time, exit 0, nothing seen
        t0 = time.monotonic()
        r = d.ctl("monitor", "-t", "300ms", "--source", "udev", check=0)
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        self.assertEqual(r.stdout, "")
        # --failed is for events
        r = d.ctl("monitor", "--failed", check=2)
        self.assertIn("--failed is for events", r.stderr)
        r = d.ctl("monitor", "-c", "0", check=2)
        self.assertIn("-c wants a number of events", r.stderr)
        d.stop_ok(self)


# two conditions of two severities, to order in the verdict
COND = """conditions:
  - name: too-hot
    set: {source: socket, object: /org/kernel/b, signal: hot}
    clear: {source: socket, object: /org/kernel/b, signal: cool}
    severity: critical
  - name: warm
    set: {source: socket, object: /org/kernel/a, signal: hot}
    clear: {source: socket, object: /org/kernel/a, signal: cool}
    severity: warning
"""


class Status(DaemonTest):
    def test_the_verdict_first(self):
        self.s.write_rule("10-f.yaml", RULES)
        self.s.write_rule("20-typo.yaml", "rules:\n  - name: t\n    timout: 5s\n")
        self.s.write_rule("30-cond.yaml", COND)
        d = self.start("--sources", "socket,fs,condition")
        for obj in ("/org/kernel/a", "/org/kernel/b"):
            d.ctl("send", "--wait", "power", obj, "hot")
        out = d.ctl("status", check=0).stdout
        lines = out.splitlines()
        self.assertRegex(lines[0], r"^\u25cf keventd \S+: running, degraded since "
                         r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+ \(\d+s ago\), pid %d$"
                         % d.proc.pid)
        self.assertIn("     rules: 3 in 2 files; broken files below", out)
        self.assertIn("  rule dir: %s\n" % self.s.rules, out)
        self.assertIn("     state: %s\n" % d.state_dir, out)
        self.assertIn("    broken: 20-typo.yaml (not in force): ", out)
        self.assertIn("did you mean timeout?", out)
        # each source on, with what it watches
        self.assertRegex(out, r"\n   sources: socket +the control socket %s, \d+ clients?\n"
                         r" {12}fs +\d+ mounts? \(\d+ for space[^)]*\), errors on \d+, "
                         r"(quota warnings|no quota family)\n"
                         r" {12}condition +the condition table in the lib directory\n"
                         % re.escape(self.s.ctl))
        # the conditions that hold, the most severe first
        self.assertRegex(out, r"\nconditions: 2 hold: 1 critical, 1 warning, 0 info\n"
                         r" {12}critical +too-hot /org/kernel/b since \d{4}-[^\n]+\n"
                         r" {12}warning +warm /org/kernel/a since ")
        self.assertNotIn("\033[", out)  # no colour off a terminal
        # then the counters, the sources that are off left out
        rows = [l.split()[0] for l in lines if re.match(r"^[a-z]+ +\d", l)]
        self.assertEqual(rows, ["socket", "fs", "condition"])
        # the same verdict in JSON, before the counters
        j = json.loads(d.ctl("status", "--json", check=0).stdout)["keventd"]
        self.assertEqual(j["state"], "degraded")
        self.assertEqual(j["pid"], d.proc.pid)
        self.assertEqual(list(j["sources"]), ["socket", "fs", "condition"])
        self.assertTrue(j["sources"]["socket"].startswith("the control socket "))
        self.assertEqual(j["conditions"], {"holding": 2, "critical": 1, "warning": 1, "info": 0})
        self.assertEqual([(r["severity"], r["object"]) for r in j["conditions_shown"]],
                         [("critical", "/org/kernel/b"), ("warning", "/org/kernel/a")])
        self.assertEqual(j["rule_dirs"], [self.s.rules])
        rows = [l.split()[0] for l in d.ctl("status", "--all", check=0).stdout.splitlines()
                if re.match(r"^[a-z]+ +\d", l)]
        self.assertIn("kernel", rows)
        self.assertEqual(len(rows), 12)  # every source of KEVENT_SOURCE_LIST
        # cleared, a row leaves the verdict
        d.ctl("send", "--wait", "power", "/org/kernel/b", "cool")
        out = d.ctl("status", check=0).stdout
        self.assertIn("\nconditions: 1 hold: 0 critical, 1 warning, 0 info\n", out)
        self.assertNotIn("/org/kernel/b since", out)
        # fixed: the verdict says running
        os.unlink(os.path.join(self.s.rules, "20-typo.yaml"))
        d.ctl("reload", check=0)
        self.assertRegex(d.ctl("status", check=0).stdout.splitlines()[0],
                         r"^\u25cf keventd \S+: running since ")
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl send --wait (keventctl(8)): returns once every handler of the
event has finished, 0 only if all exited 0, listing each rule's outcome."""
import subprocess

import kdtest
from kdtest import DaemonTest

OBJ = "/org/kernel/test/wait"
RULES = ("rules:\n"
         "  - name: good\n    match: {signal: [ok, mixed]}\n    shell: 'exit 0'\n"
         "  - name: also-good\n    match: {signal: ok}\n    run: [/bin/true]\n"
         "  - name: bad\n    match: {signal: [fail, mixed]}\n    shell: 'exit 4'\n"
         "  - name: hang\n    match: {signal: hang}\n    timeout: 200ms\n"
         "    run: [/bin/sleep, \"30\"]\n"
         "  - name: watch\n    match: {signal: [ok, quiet]}\n"
         "  - name: once\n    match: {signal: once}\n    ratelimit: 1/1h\n    run: [/bin/true]\n")


class Wait(DaemonTest):
    def wait(self, d, sig, *opts, check):
        r = d.ctl("send", "--wait", *opts, "general", OBJ, sig, check=check)
        return r.stdout.splitlines(), r.stderr

    def test_succeeding_failing_and_timed_out_handlers(self):
        self.s.write_rule("10-w.yaml", RULES)
        d = self.start()
        out, _ = self.wait(d, "ok", check=0)
        self.assertEqual(out[0], "event seqnum 1")
        self.assertRegex(out[1], r"^good: exited 0 after \d+ ms$")
        self.assertRegex(out[2], r"^also-good: exited 0 after \d+ ms$")
        self.assertEqual(len(out), 3)
        out, _ = self.wait(d, "fail", check=1)
        self.assertRegex(out[1], r"^bad: exited 4 after \d+ ms$")
        out, _ = self.wait(d, "mixed", check=1)
        self.assertEqual([l.split(":")[0] for l in out[1:]], ["good", "bad"])
        out, _ = self.wait(d, "hang", check=1)
        self.assertRegex(out[1], r"^hang: killed by SIGTERM after \d+ ms, timed out$")
        # nothing to run: done at once
        out, _ = self.wait(d, "quiet", check=0)
        self.assertEqual(out[1:], ["no rule runs anything for it"])
        # rate-limited is not a failure: nothing failed, and it says so
        self.wait(d, "once", check=0)
        out, _ = self.wait(d, "once", check=0)
        self.assertEqual(out[1:], ["once: rate-limited (not run)"])
        d.stop_ok(self)

    def test_the_client_gives_up_at_its_timeout(self):
        s = self.s
        s.write_rule("10-w.yaml", "rules:\n  - name: slow\n    match: {signal: slow}\n"
                     "    run: %s\n" % self.h("wait", s.fifo.path, s.gates.path("g"), "g"))
        d = self.start()
        out, err = self.wait(d, "slow", "--timeout", "300ms", check=1)
        self.assertEqual(out, ["event seqnum 1"])
        self.assertIn("timed out after 300ms waiting for the handlers", err)
        self.assertEqual(s.fifo.line().split()[:2], ["start", "g"])
        # a waiter that went away is forgotten; the handler goes on
        s.gates.release("g")
        self.assertEqual(s.fifo.line(), "end g")
        d.wait_idle(1)
        (e,) = [l for l in d.ctl("events", check=0).stdout.splitlines() if "slow:" in l]
        self.assertIn("slow: exited 0", e)
        self.assertIn("--timeout goes with --wait",
                      d.ctl("send", "--timeout", "1", "general", OBJ, "x", check=2).stderr)
        self.assertIn("--timeout wants", d.ctl("send", "--wait", "--timeout", "soon",
                                               "general", OBJ, "x", check=2).stderr)
        d.stop_ok(self)

    def test_dry_run_outcomes_come_before_the_send_returns(self):
        self.s.write_rule("10-w.yaml", RULES)
        d = self.start("--dry-run")
        out, _ = self.wait(d, "mixed", check=0)
        self.assertEqual(out[1:], ["good: dry-run (not run)", "bad: dry-run (not run)"])
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The handler's own words where the tools point (keventctl(8)): the last
lines of a run's stderr, bounded, in send --wait, events and explain; and
every log line about a run (its output, "cannot run", its end) with the
fields rule and seq, which the journal calls KEVENT_RULE and KEVENT_SEQNUM."""
import json

import kdtest
from kdtest import DaemonTest

OBJ = "/org/kernel/test/words"
RULES = """rules:
  - name: loud
    match: {signal: fail}
    shell: 'echo to-stdout; for i in 1 2 3 4 5 6; do echo "line $i" >&2; done; exit 3'
  - name: long
    match: {signal: long}
    shell: 'head -c 3000 /dev/zero | tr "\\\\0" x >&2; echo >&2; exit 1'
  - name: missing
    match: {signal: missing}
    run: [/nonexistent/keventd-test-handler]
  - name: quiet
    match: {signal: quiet}
    shell: 'exit 0'
"""


class HandlerWords(DaemonTest):
    def test_stderr_tail_in_send_wait_events_and_explain(self):
        self.s.write_rule("10-w.yaml", RULES)
        d = self.start()
        out = d.ctl("send", "--wait", "general", OBJ, "fail", check=1).stdout.splitlines()
        self.assertRegex(out[1], r"^loud: exited 3 after \d+ ms$")
        # the last four lines of stderr, in order; stdout is not among them
        self.assertEqual(out[2:], ["  stderr: line %d" % i for i in (3, 4, 5, 6)])
        # one overlong line: cut, and the whole tail within 512 bytes
        out = d.ctl("send", "--wait", "general", OBJ, "long", check=1).stdout.splitlines()
        self.assertEqual(len(out), 3, out)
        self.assertTrue(out[2].startswith("  stderr: xxxx"), out[2])
        self.assertLessEqual(len(out[2]) - len("  stderr: "), 512)
        # a run that wrote nothing to stderr has no such line
        out = d.ctl("send", "--wait", "general", OBJ, "quiet", check=0).stdout.splitlines()
        self.assertEqual(len(out), 2, out)

        ev = d.ctl("events", check=0).stdout
        block = ev[ev.index("fail\n"):ev.index("long\n")]
        self.assertIn("  loud: exited 3", block)
        self.assertIn("    stderr: line 3\n    stderr: line 4\n    stderr: line 5\n"
                      "    stderr: line 6\n", block)
        self.assertNotIn("line 2", block)
        js = [json.loads(l) for l in d.ctl("events", "--json", check=0).stdout.splitlines()]
        (loud,) = [r for e in js for r in e["rules"] if r["name"] == "loud"]
        self.assertEqual(loud["stderr"], "line 3\nline 4\nline 5\nline 6\n")
        (quiet,) = [r for e in js for r in e["rules"] if r["name"] == "quiet"]
        self.assertNotIn("stderr", quiet)

        x = d.ctl("explain", "1", check=0).stdout
        self.assertIn("what became of its runs:\n  loud: exited 3", x)
        self.assertIn("    stderr: line 6\n", x)
        xj = [json.loads(l) for l in d.ctl("explain", "--json", "1", check=0).stdout.splitlines()]
        (runs,) = [o["runs"] for o in xj if "runs" in o]
        self.assertEqual(runs[0]["stderr"].splitlines()[-1], "line 6")
        d.stop_ok(self)

    def test_every_line_of_a_run_carries_rule_and_seq(self):
        self.s.write_rule("10-w.yaml", RULES)
        d = self.start("--log-format", "json", "--log-level", "debug")
        d.send("general", OBJ, "fail")
        d.send("general", OBJ, "missing")
        d.wait_idle(2)
        d.stop_ok(self)
        recs = [json.loads(l) for l in d.logtext().splitlines()]
        about = [r for r in recs if r["message"].startswith("rule ")]
        kinds = {"stdout": 0, "stderr": 0, "exited": 0, "cannot run": 0, "started": 0}
        for r in about:
            self.assertIn("rule", r, r)
            self.assertIn("seq", r, r)
            want = {"loud": 1, "missing": 2}[r["rule"]]
            self.assertEqual(r["seq"], want, r)
            for k in kinds:
                if k in r["message"]:
                    kinds[k] += 1
        self.assertEqual(kinds["stdout"], 1, about)
        self.assertEqual(kinds["stderr"], 6, about)
        self.assertEqual(kinds["exited"], 1, about)
        self.assertEqual(kinds["cannot run"], 1, about)
        self.assertEqual(kinds["started"], 1, about)

    def test_text_log_lines_carry_the_fields(self):
        self.s.write_rule("10-w.yaml", RULES)
        d = self.start()
        d.send("general", OBJ, "missing")
        d.wait_idle(1)
        d.stop_ok(self)
        (line,) = [l for l in d.logtext().splitlines() if "cannot run" in l]
        self.assertTrue(line.endswith(" rule=missing seq=1"), line)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl events (keventctl(8)): the last events keventd handled, and
what became of each rule they matched, as the handlers really ended."""
import json
import signal

import kdtest
from kdtest import DaemonTest, yq

OBJ = "/org/kernel/test/history"


class History(DaemonTest):
    def events(self, d, *args):
        r = d.ctl("events", "--json", *args, check=0)
        return [json.loads(l) for l in r.stdout.splitlines()]

    def test_outcomes_match_what_the_handlers_did(self):
        s = self.s
        s.write_rule("10-h.yaml", "rules:\n"
                     "  - name: ok\n    match: {signal: a}\n    shell: 'exit 0'\n"
                     "  - name: fails\n    match: {signal: a}\n    shell: 'exit 3'\n"
                     "  - name: signalled\n    match: {signal: a}\n    shell: 'kill -USR1 $$'\n"
                     "  - name: watch-only\n    match: {signal: a}\n"
                     "  - name: hang\n    match: {signal: b}\n    timeout: 100ms\n"
                     "    run: [/bin/sleep, \"30\"]\n"
                     "  - name: limited\n    match: {signal: c}\n    ratelimit: 1/1h\n"
                     "    run: [/bin/true]\n")
        d = self.start()
        d.send("general", OBJ, "a", "Key: v")
        d.send("general", OBJ, "b")
        d.send("general", OBJ, "c")
        d.send("general", OBJ, "c")
        d.send("general", OBJ, "none")
        d.wait_idle(5)
        ev = self.events(d)
        self.assertEqual([e["seqnum"] for e in ev], [1, 2, 3, 4, 5])
        self.assertEqual([e["signal"] for e in ev], ["a", "b", "c", "c", "none"])
        for e in ev:
            self.assertEqual((e["source"], e["type"], e["object"]), ("socket", "general", OBJ))
            self.assertGreater(e["timestamp"], 10**18)
        a = {r["name"]: r for r in ev[0]["rules"]}
        self.assertEqual(list(a), ["ok", "fails", "signalled", "watch-only"])
        self.assertEqual((a["ok"]["outcome"], a["ok"]["status"]), ("exited", 0))
        self.assertEqual((a["fails"]["outcome"], a["fails"]["status"]), ("exited", 3))
        self.assertEqual((a["signalled"]["outcome"], a["signalled"]["signal"]),
                         ("killed", signal.SIGUSR1))
        self.assertFalse(a["signalled"]["timed_out"])
        self.assertEqual(a["watch-only"]["outcome"], "matched")
        hang = ev[1]["rules"][0]
        self.assertEqual((hang["name"], hang["outcome"], hang["signal"], hang["timed_out"]),
                         ("hang", "killed", signal.SIGTERM, True))
        self.assertGreaterEqual(hang["duration_ms"], 100)
        self.assertEqual(ev[2]["rules"][0]["outcome"], "exited")
        self.assertEqual(ev[3]["rules"][0]["outcome"], "rate-limited")
        self.assertEqual((ev[4]["rules"], ev[4]["matched"]), ([], 0))
        # the text: a line per event, an indented line per rule
        text = d.ctl("events", "-n", "2", check=0).stdout.splitlines()
        self.assertRegex(text[0], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z socket seq=4 "
                         r"general %s c$" % OBJ)
        self.assertEqual(text[1:], ["  limited: rate-limited (not run)",
                                    text[2], "  (no rule matched)"])
        self.assertRegex(text[2], r" socket seq=5 general %s none$" % OBJ)
        first = d.ctl("events", "-n", "5", check=0).stdout.splitlines()
        self.assertIn("  fails: exited 3 after", "\n".join(first))
        self.assertIn("  signalled: killed by SIGUSR1 after", "\n".join(first))
        self.assertRegex("\n".join(first), r"  hang: killed by SIGTERM after \d+ ms, timed out")
        d.stop_ok(self)

    def test_a_running_handler_shows_as_running(self):
        s = self.s
        s.write_rule("10-w.yaml", "rules:\n  - name: slow\n    match: {signal: w}\n"
                     "    run: %s\n  - name: after\n    match: {signal: w}\n    run: [/bin/true]\n"
                     % self.h("wait", s.fifo.path, s.gates.path("w"), "w"))
        d = self.start()
        d.send("general", OBJ, "w")
        start = s.fifo.line().split()
        self.assertEqual(start[:2], ["start", "w"])
        (e,) = self.events(d)
        self.assertEqual([(r["name"], r["outcome"]) for r in e["rules"]],
                         [("slow", "running"), ("after", "queued")])
        self.assertEqual(e["rules"][0]["pid"], int(start[2]))
        s.gates.release("w")
        self.assertEqual(s.fifo.line(), "end w")
        d.wait_idle(1)
        (e,) = self.events(d)
        self.assertEqual([(r["name"], r["outcome"], r["status"]) for r in e["rules"]],
                         [("slow", "exited", 0), ("after", "exited", 0)])
        d.stop_ok(self)

    def test_the_ring_is_bounded_and_shown_in_status(self):
        d = self.start("--history", "3")
        for i in range(5):
            d.send("general", OBJ, "s%d" % i)
        d.wait_idle(5)
        self.assertEqual([e["seqnum"] for e in self.events(d)], [3, 4, 5])
        self.assertEqual([e["seqnum"] for e in self.events(d, "-n", "2")], [4, 5])
        h = d.status()["history"]
        self.assertEqual((h["entries"], h["capacity"], h["not_kept"]), (3, 3, 0))
        self.assertGreater(h["bytes"], 0)
        text = d.ctl("status", check=0).stdout
        self.assertRegex(text, r"\nhistory: 3 of 3 events, %d bytes, not kept 0\n" % h["bytes"])
        d.stop_ok(self)

    def test_no_history(self):
        d = self.start("--history", "0")
        d.send("general", OBJ, "x")
        r = d.ctl("events", check=1)
        self.assertIn("keeps no history (--history 0)", r.stderr)
        self.assertEqual(d.status()["history"]["capacity"], 0)
        d.stop_ok(self)

    def test_bad_usage(self):
        d = self.start()
        self.assertIn("-n wants a number", d.ctl("events", "-n", "0", check=2).stderr)
        self.assertIn("takes no arguments", d.ctl("events", "x", check=2).stderr)
        r = d.ctl("--help", check=0)
        self.assertIn("events [--json] [-n N]", r.stdout)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

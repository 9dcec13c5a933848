#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl events and explain (keventctl(8)): the last events keventd
handled, what became of each rule they matched, as the handlers really
ended, and why, against the rules of then and of today."""
import json
import os
import re
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
        self.assertRegex(text[0], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+ socket seq=4 "
                         r"general %s c$" % OBJ)
        # --utc: keventd's own
        utc = d.ctl("events", "-n", "2", "--utc", check=0).stdout.splitlines()
        self.assertRegex(utc[0], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z socket seq=4 ")
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


GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
# local time (keventctl's), unless --utc
TIME = re.compile(r"^time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+$", re.M)

HOT = ("rules:\n  - name: hot\n    match:\n      type: power\n      signal: high\n"
       "      payload: {Temperature: \">= %d\"}\n    run: [/bin/true]\n"
       "  - name: stop\n    match: {signal: high}\n    last: true\n"
       "  - name: after\n    match: {signal: high}\n")


class Explain(DaemonTest):
    def golden(self, name, text):
        with open(os.path.join(GOLDEN, name + ".expected")) as f:
            want = f.read().replace("@RULES@", self.s.rules)
        self.assertRegex(text, TIME)
        text = re.sub(r"after \d+ ms", "after @MS@ ms", TIME.sub("time: @TIME@", text))
        self.assertEqual(text, want)

    def test_after_a_reload_both_answers(self):
        s = self.s
        s.write_rule("10-a.yaml", HOT % 90000)
        d = self.start()
        d.send("power", "/org/kernel/cpu", "high", 'Temperature: 95000\nZone: "x"')
        d.send("power", "/org/kernel/cpu", "low")
        d.wait_idle(2)
        self.golden("explain-same", d.ctl("explain", "last", check=0).stdout)
        self.assertIn("today's rules decide the same\n", d.ctl("explain", "1", check=0).stdout)
        s.write_rule("10-a.yaml", HOT % 99000)
        # once reload returns, the file as written is in force: this reload
        # loaded it ("changed"), or the watch's own reload came first
        out = d.ctl("reload", check=0).stdout
        self.assertRegex(out, r"^(.*10-a.yaml: changed.*|no changes)\n", out)
        self.golden("explain-reload", d.ctl("explain", "1", "--source", "socket", check=0).stdout)
        j, runs = map(json.loads, d.ctl("explain", "--json", "1", check=0).stdout.splitlines())
        self.assertEqual(runs["runs"][0]["name"], "hot")
        self.assertEqual((runs["runs"][0]["outcome"], runs["runs"][0]["status"]), ("exited", 0))
        self.assertEqual(j["event"]["payload"], 'Temperature: 95000\nZone: "x"')
        self.assertEqual((j["then"]["matched"], j["today"]["matched"], j["differs"]), (2, 1, True))
        self.assertEqual([r["result"] for r in j["then"]["rules"]],
                         ["matched", "matched", "not tried"])
        self.assertEqual(j["today"]["rules"][0]["why"],
                         "payload property Temperature=95000 is not >= 99000")
        # the history said what ran, then: the rule as it was
        (e,) = [e for e in self.events(d) if e["seqnum"] == 1]
        self.assertEqual([(r["name"], r["outcome"]) for r in e["rules"]],
                         [("hot", "exited"), ("stop", "matched")])
        d.stop_ok(self)

    def events(self, d):
        return [json.loads(l) for l in d.ctl("events", "--json", check=0).stdout.splitlines()]

    def test_an_event_gone_from_the_history(self):
        d = self.start("--history", "2")
        for i in range(4):
            d.send("general", OBJ, "s%d" % i)
        d.wait_idle(4)
        r = d.ctl("explain", "1", check=1)
        self.assertRegex(r.stderr, r"^keventctl: keventd: seq 1 is not in the history: it holds "
                         r"the last 2 events \(--history 2\), the oldest seq 3 \(socket\) at "
                         r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n$")
        r = d.ctl("explain", "3", "--source", "kernel", check=1)
        self.assertIn("seq 3 (kernel) is not in the history", r.stderr)
        self.assertIn("seqnum=3 ", d.ctl("explain", "3", check=0).stdout)
        d.stop_ok(self)

    def test_the_rule_sets_kept_are_bounded(self):
        s = self.s
        rule = "rules:\n  - name: g\n    match: {signal: g%d}\n"
        s.write_rule("10-g.yaml", rule % 0)
        d = self.start()
        # an event under each of 9 rule sets: the first set is dropped
        for i in range(9):
            if i:
                s.write_rule("10-g.yaml", rule % i)
                # once reload returns, the file as written is in force: this
                # reload loaded it ("changed"), or the watch's own reload
                # came first ("no changes")
                out = d.ctl("reload", check=0).stdout
                self.assertRegex(out, r"^(.*changed.*|no changes)\n1 rules in 1 files\n", out)
            d.send("general", "/org/kernel/g", "g%d" % i)
        d.wait_idle(9)
        self.golden("explain-gone", d.ctl("explain", "1", check=0).stdout)
        out = d.ctl("explain", "2", check=0).stdout
        self.assertIn("rules in force then: 1 in 1 file\n\nrule g (%s/10-g.yaml:2:5): matched, runs nothing\n"
                      % s.rules, out)
        self.assertIn("today's rules decide differently", out)
        d.stop_ok(self)

    def test_bad_usage(self):
        d = self.start()
        self.assertIn("needs SEQ or last", d.ctl("explain", check=2).stderr)
        self.assertIn("not 'x'", d.ctl("explain", "x", check=2).stderr)
        self.assertIn("unknown source", d.ctl("explain", "1", "--source", "nope", check=2).stderr)
        self.assertIn("holds no events yet", d.ctl("explain", "last", check=1).stderr)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

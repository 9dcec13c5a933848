# SPDX-License-Identifier: GPL-2.0-or-later
"""Every handler run is one log record: a sentence, then the fields rule,
file (path:line), seq, pid, exit or signal, timed_out and duration_ms, as
key=value in text and as JSON keys with --log-format json; every other
line about a run (its output, a timeout, a failure to start) carries rule
and seq (KEVENT_RULE and KEVENT_SEQNUM in the journal)."""
import json
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
import kdtest  # noqa: E402

NAME = 'odd "name" = x\\y'  # needs quoting and escapes in text
KEYS = ["rule", "file", "seq", "pid", "exit|signal", "timed_out", "duration_ms"]


def logfmt(s):
    """Parses 'k=v k="q\\"v"...' strictly; returns a list of (key, value)."""
    out, i = [], 0
    while i < len(s):
        if s[i] != " ":
            raise ValueError("expected a space at %d in %r" % (i, s))
        m = re.compile(r" ([a-z0-9_]+)=").match(s, i)
        if not m:
            raise ValueError("expected key= at %d in %r" % (i, s))
        i = m.end()
        if i < len(s) and s[i] == '"':
            i += 1
            v = []
            while s[i] != '"':
                if s[i] == "\\":
                    e = s[i + 1]
                    if e == "x":
                        v.append(chr(int(s[i + 2:i + 4], 16)))
                        i += 4
                        continue
                    v.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}[e])
                    i += 2
                else:
                    v.append(s[i])
                    i += 1
            i += 1
            val = "".join(v)
        else:
            j = s.find(" ", i)
            j = len(s) if j < 0 else j
            val = s[i:j]
            if not val or any(c in val for c in '"=\\'):
                raise ValueError("bad bare value %r in %r" % (val, s))
            i = j
        out.append((m.group(1), val))
    return out


class LogRecords(kdtest.DaemonTest):
    def rules(self):
        s = self.s
        self.file = s.write_rule("10-log.yaml", """rules:
  - name: %s
    match: {signal: ok}
    run: %s
  - name: three
    match: {signal: three}
    shell: 'exit 3'
  - name: killed
    match: {signal: kill}
    shell: 'kill -KILL $$'
""" % (kdtest.yq(NAME), self.h("append", s.path("out", "ran"), "x", s.fifo.path)))

    def run_three(self, d):
        d.send("general", "/org/kernel/test/a", "ok")
        d.send("general", "/org/kernel/test/b", "three")
        d.send("general", "/org/kernel/test/c", "kill")
        d.wait_idle(3)

    def check(self, recs):
        """recs: rule name -> dict of fields."""
        self.assertEqual(set(recs), {NAME, "three", "killed"})
        ok, three, killed = recs[NAME], recs["three"], recs["killed"]
        self.assertEqual(ok["file"], self.file + ":2")
        self.assertEqual(three["file"], self.file + ":5")
        self.assertEqual(killed["file"], self.file + ":8")
        self.assertEqual([r["seq"] for r in (ok, three, killed)], [1, 2, 3])
        self.assertEqual((ok["exit"], three["exit"]), (0, 3))
        self.assertEqual(killed["signal"], 9)
        self.assertNotIn("exit", killed)
        for r in recs.values():
            self.assertGreater(r["pid"], 1)
            self.assertIs(r["timed_out"], False)
            self.assertGreaterEqual(r["duration_ms"], 0)

    def test_text(self):
        self.rules()
        d = self.start()
        self.run_three(d)
        d.stop_ok(self)
        recs = {}
        for line in d.logtext().splitlines():
            at = line.find(" rule=")
            if at < 0 or " duration_ms=" not in line:
                continue  # not a run's end (its other lines carry rule and seq alone)
            fields = logfmt(line[at:])
            keys = [k for k, _ in fields]
            self.assertEqual(len(keys), 7, line)
            for k, want in zip(keys, KEYS):
                self.assertIn(k, want.split("|"), line)
            f = dict(fields)
            for k in ("seq", "pid", "exit", "signal", "duration_ms"):
                if k in f:
                    f[k] = int(f[k])
            self.assertIn(f["timed_out"], ("true", "false"))
            f["timed_out"] = f["timed_out"] == "true"
            recs[f["rule"]] = f
            # the sentence before the fields, for people (and old greps)
            self.assertRegex(line[:at], r"^keventd: (warning: )?rule .*\[\d+\]: "
                             r"(exited \d+|killed by signal \d+ \(.*\)) after \d+ms \(seq \d\)$")
        self.check(recs)
        # an operator's grep finds one line per run
        self.assertEqual(d.logtext().count("rule=three "), 1)

    def test_json(self):
        self.rules()
        d = self.start("--log-format", "json")
        self.run_three(d)
        d.stop_ok(self)
        recs = {}
        for line in d.logtext().splitlines():
            rec = json.loads(line)  # every line is JSON
            self.assertIn(rec["level"], ("err", "warning", "notice", "info", "debug"))
            self.assertIsInstance(rec["message"], str)
            if "rule" not in rec:
                continue
            # every line about a run carries the rule and the event
            self.assertIn("seq", rec)
            if "duration_ms" not in rec:
                continue
            self.assertEqual(list(rec)[:2], ["level", "message"])
            self.assertEqual(len(rec), 9, rec)
            for k in ("seq", "pid", "duration_ms"):
                self.assertIsInstance(rec[k], int)
            self.assertIsInstance(rec["timed_out"], bool)
            recs[rec["rule"]] = rec
        self.check(recs)
        self.assertEqual(recs["three"]["level"], "warning")
        self.assertEqual(recs[NAME]["level"], "info")

    def test_timed_out(self):
        self.s.write_rule("10-slow.yaml", """rules:
  - name: slow
    shell: 'exec sleep 30'
    timeout: 100ms
""")
        d = self.start("--log-format", "json")
        d.send("general", "/org/kernel/test/slow", "go")
        d.wait_idle(1)
        d.stop_ok(self)
        recs = [json.loads(l) for l in d.logtext().splitlines()]
        runs = [r for r in recs if r.get("rule") == "slow" and "duration_ms" in r]
        self.assertEqual(len(runs), 1, recs)
        self.assertIs(runs[0]["timed_out"], True)
        self.assertEqual(runs[0]["signal"], 15)
        self.assertGreaterEqual(runs[0]["duration_ms"], 100)
        # the timeout's own line is found by the same query
        (term,) = [r for r in recs if "sending SIGTERM" in r["message"]]
        self.assertEqual((term["rule"], term["seq"]), ("slow", 1))


if __name__ == "__main__":
    kdtest.main()

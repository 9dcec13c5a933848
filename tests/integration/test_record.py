#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl record and replay (keventctl(8)): 1,000 real events recorded,
replayed offline and into a keventd, decide the same; the payload comes
back byte for byte; bad lines are reported by number."""
import json
import re
import select
import signal
import subprocess
import time

import kdtest
from kdtest import DaemonTest

N = 1000
RULES = ("rules:\n"
         "  - name: tens\n    match: {signal: tick, payload: {N: \"*0\"}}\n"
         "  - name: big\n    match: {signal: tick, payload: {N: \">= 900\"}}\n    last: true\n"
         "  - name: all-ticks\n    match: {signal: tick}\n"
         "  - name: other\n    match: {signal: [tock, odd]}\n    run: [/bin/true]\n")


def escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


class Record(DaemonTest):
    def record(self, d, path):
        p = subprocess.Popen([kdtest.KEVENTCTL, "--control", self.s.ctl, "record", "-o", path],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.procs.append(p)
        # it says so on stderr once keventd has it as a monitor
        r, _, _ = select.select([p.stderr], [], [], kdtest.TIMEOUT)
        self.assertTrue(r, "record never started")
        self.assertIn(b"recording the events of", p.stderr.readline())
        return p

    def stop_record(self, p, n):
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=kdtest.TIMEOUT)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn(("keventctl: %d events recorded" % n).encode(), err)

    def history_matches(self, d):
        out = d.ctl("events", "--json", check=0).stdout
        return [(e["type"], e["object"], e["signal"], [r["name"] for r in e["rules"]])
                for e in map(json.loads, out.splitlines())]

    def test_record_then_replay_offline_and_live(self):
        s = self.s
        s.write_rule("10-r.yaml", RULES)
        batch = s.path("batch")
        payloads = []
        with open(batch, "w") as f:
            for i in range(N):
                sig = ["tick", "tock", "odd", "none"][i % 4] if i % 7 else "tick"
                payload = "N: %d\nText: tab\there \"q\" \\ end" % i
                payloads.append(payload)
                f.write("general\t/org/kernel/r/%d\t%s\t%s\n" % (i % 13, sig, escape(payload)))
        d = self.start()
        rec = s.path("rec.jsonl")
        p = self.record(d, rec)
        d.ctl("send", "--batch", batch, check=0)
        d.wait_idle(N)
        # a payload that is not UTF-8 goes through too: bytes, no text
        bin_payload = b"Bin: \xff\xfe\x80 \x1f end"
        r = subprocess.run([kdtest.KEVENTCTL, "--control", s.ctl, "send", "general",
                            "/org/kernel/r/bin", "odd", bin_payload], capture_output=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        d.wait_idle(N + 1)
        live1 = self.history_matches(d)
        self.stop_record(p, N + 1)
        with open(rec, "rb") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), N + 1)
        recs = [json.loads(l.decode("utf-8", "surrogateescape")) for l in lines]
        self.assertEqual([r["seqnum"] for r in recs], list(range(1, N + 2)))
        self.assertEqual([r["payload"] for r in recs[:N]], payloads)
        self.assertEqual(recs[5]["properties"], {"N": "5", "Text": "tab\there \"q\" \\ end"})
        self.assertNotIn("payload_base64", recs[0])
        self.assertEqual(__import__("base64").b64decode(recs[N]["payload_base64"]), bin_payload)

        # offline: test's answers for each line, the same rules as keventd's
        r = d.ctl("replay", "--dry-run", "--rules-dir", s.rules, rec, check=0)
        offline, cur = [], None
        for line in r.stdout.splitlines():
            m = re.match(r"^event: type=(\S+) object=(\S+) signal=(\S+) ", line)
            if m:
                cur = (m.group(1), m.group(2), m.group(3), [])
                offline.append(cur)
            m = re.match(r"^rule (\S+) \(.*\): matched", line)
            if m:
                cur[3].append(m.group(1))
        self.assertEqual(len(live1), N + 1)  # the history holds 1024
        self.assertEqual(offline, live1)
        d.stop_ok(self)

        # live: into another keventd, as socket events, recorded again
        d2 = self.start()
        rec2 = s.path("rec2.jsonl")
        p2 = self.record(d2, rec2)
        r = d2.ctl("replay", "-v", rec, check=0)
        self.assertIn("%d event(s) posted, 0 line(s) failed" % (N + 1), r.stdout)
        d2.wait_idle(N + 1)
        self.assertEqual(self.history_matches(d2), live1)
        self.stop_record(p2, N + 1)
        with open(rec2, "rb") as f:
            again = [json.loads(l.decode("utf-8", "surrogateescape")) for l in f.read().splitlines()]
        keys = ("type", "object", "signal", "payload", "properties", "payload_base64")
        self.assertEqual([{k: e.get(k) for k in keys} for e in again],
                         [{k: e.get(k) for k in keys} for e in recs])
        self.assertEqual({e["source"] for e in again}, {"socket"})
        d2.stop_ok(self)

    def test_bad_lines_are_numbered(self):
        d = self.start()
        rec = self.s.path("bad.jsonl")
        with open(rec, "w") as f:
            f.write('{"type":"general","object":"/a","signal":"one"}\n'
                    '{"type":"general","object":"/a"}\n'
                    '[1, 2]\n'
                    '{"type":"general","object":"/a","signal":"bad signal!"}\n'
                    '{"type":"general","object":"/a","signal":"two","payload_base64":"@@"}\n'
                    '{"type":"general","object":"/a","signal":"three","seqnum":"x"}\n'
                    '{"type":"general","object":"/a","signal":"four"}\n'
                    '{"type":"general","object":"/a","sig')
        r = d.ctl("replay", rec, check=1)
        self.assertEqual(r.stderr.splitlines(), [
            "%s:2: error: type, object and signal are needed" % rec,
            "%s:3: error: not a JSON object" % rec,
            "%s:4: error: signal has a character outside [A-Za-z0-9_.:-]" % rec,
            "%s:5: error: payload_base64 is not base64" % rec,
            "%s:6: error: a key of the wrong type" % rec,
            "%s:8: error: truncated JSON" % rec,
            "2 event(s) posted, 6 line(s) failed"])
        d.wait_idle(2)
        self.assertEqual([e[2] for e in self.history_matches(d)], ["one", "four"])
        r = d.ctl("replay", "--strict", rec, check=1)
        self.assertEqual(r.stderr.splitlines(), [
            "%s:2: error: type, object and signal are needed" % rec,
            "1 event(s) posted, 1 line(s) failed"])
        d.wait_idle(3)
        self.assertIn("--rules-dir goes with --dry-run",
                      d.ctl("replay", "--rules-dir", "/x", rec, check=2).stderr)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

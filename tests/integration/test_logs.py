#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Logs that cannot be flooded or forged (keventd(8) LOGGING, docs/SECURITY.md):
a flood of bad control requests is counted in full and logged at a bounded
rate; text from rule files, file names and handlers is escaped wherever it
is logged or printed."""
import os
import re
import select
import socket
import subprocess
import time

import kdtest
from kdtest import DaemonTest, Raw, TIMEOUT

BURST = 20      # lines of one class per window (keventd(8))
WINDOW = 5.0    # seconds
# what a bad request is logged as, and the two lines that sum the rest up
BAD_LINE = re.compile(r"control: (malformed message|message too long|empty message|unknown command)")
SUMMARY = re.compile(r"control: (\d+ bad requests in 5s: the next ones are counted in status but "
                     r"not logged, for now|\d+ more bad requests were not logged)$")
ESC = "\x1b"
# a line of its own if a newline got through unescaped: what a forger wants
FORGED = "keventd: error: forged"


def flood(path, n, deadline):
    """Sends N bad requests as fast as the socket takes them, reading the
    error each one is answered with; returns how many answers came."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.setblocking(False)
    kinds = [b"no-terminating-nul",               # malformed
             Raw.encode("no-such-command", "x"),  # unknown command
             b""]                                 # empty
    too_long = b"x" * 9000
    sent = answered = 0
    try:
        while answered < n:
            left = kdtest.deadline_left(deadline)
            r, w, _ = select.select([s], [s] if sent < n else [], [], left)
            if not r and not w:
                raise AssertionError("flood stalled: %d sent, %d answered" % (sent, answered))
            if w:
                try:
                    while sent < n:
                        s.send(too_long if sent % 100 == 99 else kinds[sent % len(kinds)])
                        sent += 1
                except BlockingIOError:
                    pass
            if r:
                try:
                    while True:
                        data = s.recv(16384)
                        if not data:
                            raise AssertionError("keventd closed the connection after %d answers"
                                                 % answered)
                        if not data.startswith(b"err\0"):
                            raise AssertionError("a bad request answered with %r" % data)
                        answered += 1
                except BlockingIOError:
                    pass
    finally:
        s.close()
    return answered


class Flood(DaemonTest):
    def test_bad_request_flood_is_counted_and_logged_at_a_bounded_rate(self):
        d = self.start()
        n = 20000
        t0 = time.monotonic()
        self.assertEqual(flood(self.s.ctl, n, t0 + 6 * TIMEOUT), n)
        st = d.status()
        elapsed = time.monotonic() - t0
        self.assertEqual(st["control"]["bad_requests"], n)
        # keventd still answers, and still logs what else happens
        d.send("general", "/after", "x")
        d.stop_ok(self)
        lines = d.logtext().splitlines()
        bad = [l for l in lines if BAD_LINE.search(l)]
        summary = [l for l in lines if SUMMARY.search(l)]
        # at most a burst per window (and a window may have started just
        # before the flood and one just at its end), each with at most two
        # summary lines
        windows = int(elapsed / WINDOW) + 2
        self.assertGreaterEqual(len(bad), BURST)
        self.assertLessEqual(len(bad), BURST * windows, "\n".join(lines[:80]))
        self.assertLessEqual(len(summary), 2 * windows)
        self.assertIn("keventd: warning: control: 20 bad requests in 5s: the next ones are "
                      "counted in status but not logged, for now", lines)
        # no other line came of it: a log of a few dozen lines, not 20,000
        self.assertLess(len(lines), len(bad) + len(summary) + 30, "\n".join(lines[:80]))
        # what was summed up never exceeds what came
        more = sum(int(m.group(1)) for m in
                   (re.search(r"control: (\d+) more bad requests were not logged", l) for l in lines)
                   if m)
        self.assertLessEqual(len(bad) + more, n)


class Escaped(DaemonTest):
    def assert_clean(self, text, what):
        """No raw control character but the newlines between lines, and no
        line that a rule file or a handler made."""
        for ch in text:
            self.assertFalse(ord(ch) < 0x20 and ch != "\n" or ord(ch) == 0x7f,
                             "%s holds a raw %r:\n%r" % (what, ch, text))
        for l in text.splitlines():
            self.assertFalse(l.startswith(FORGED) or l.startswith("<3>"),
                             "%s has a forged line: %r" % (what, l))

    def evil_file(self):
        return self.s.write_rule("10-evil.yaml", (
            "rules:\n"
            '  - name: "evil\\e[2J\\n' + FORGED + '"\n'
            "    run: [/bin/true]\n"
            "  - name: key\n"
            '    "k\\e[31m\\n' + FORGED + ' key": 1\n'
            "  - name: glob\n"
            "    match:\n"
            '      object: "/a/\\e]0;title\\a\\n<3>forged["\n'))

    def test_verify_prints_rule_file_text_escaped(self):
        path = self.evil_file()
        # a file name with a newline is shown escaped too
        odd = self.s.write_rule("20-a\n" + FORGED + ".yaml", "rules:\n  - nmae: x\n")
        r = subprocess.run([kdtest.KEVENTCTL, "verify", self.s.rules], capture_output=True,
                           text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assert_clean(r.stdout, "verify's output")
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 4, r.stdout)
        for l in lines:
            self.assertRegex(l, r"^%s/[^/]+\.yaml:\d+:\d+: error: " % re.escape(self.s.rules))
        # the name is refused where it stands, without being echoed
        self.assertIn(path + ":2:11: error: a rule name is 1-128 printable characters", lines)
        self.assertIn("unknown key 'k\\x1b[31m\\n" + FORGED + " key' in rule", r.stdout)
        self.assertIn("\"/a/\\x1b]0;title\\x07\\n<3>forged[\": glob has '[' without a closing ']'", r.stdout)
        self.assertIn(odd.replace("\n", "\\n") + ":2:5: error: unknown key 'nmae'", r.stdout)

    def test_daemon_logs_and_prints_outside_text_escaped(self):
        self.evil_file()
        # a rule without a name is named after its file: here one with an ESC
        # and a control sequence, whose handler prints more of them
        named = "30-\x1b[1mbold.yaml"
        self.s.write_rule(named, (
            "rules:\n"
            "  - match: {signal: esc}\n"
            "    shell: %s\n") % kdtest.yq(
                "printf '\\033[2Jout\\n\\033]0;title\\007\\n" + FORGED + " by a handler\\n'"
                " >&2; printf 'x\\r\\n'"))
        d = self.start()
        mon = self.raw()
        self.assertEqual(mon.request("monitor", "text")[0], "ok")
        d.send("general", "/esc", "esc")
        st = d.wait_idle(1)
        self.assertEqual(st["runs"]["started"], 1)
        shown = "30-\\x1b[1mbold.yaml"
        line = mon.recv()
        self.assertEqual(line[0], "data")
        self.assertTrue(line[1].endswith(" rules=%s:0" % shown), line[1])
        self.assert_clean(line[1], "a monitor line")
        status = d.ctl("status", check=0).stdout
        self.assert_clean(status, "status")
        self.assertIn("rule %s:0 (%s): " % (shown, shown), status)
        d.stop_ok(self)
        log = d.logtext()
        self.assert_clean(log, "keventd's log")
        for l in log.splitlines():
            self.assertTrue(l.startswith("keventd: "), "a log line of no record: %r" % l)
        self.assertIn("unknown key 'k\\x1b[31m\\n" + FORGED + " key' in rule", log)
        self.assertIn("\"/a/\\x1b]0;title\\x07\\n<3>forged[\": glob has '[' without a closing ']'", log)
        self.assertIn("rules: 10-evil.yaml: broken, not loaded", log)
        self.assertRegex(log, r"rule %s:0\[\d+\] stderr: \\x1b\[2Jout rule=.* seq=1\n" % re.escape(shown))
        self.assertRegex(log, r"rule %s:0\[\d+\] stderr: \\x1b\]0;title\\x07 rule=.* seq=1\n"
                         % re.escape(shown))
        self.assertRegex(log, r"rule %s:0\[\d+\] stderr: %s by a handler rule=.* seq=1\n"
                         % (re.escape(shown), FORGED))
        self.assertRegex(log, r"rule %s:0\[\d+\] stdout: x\\x0d rule=.* seq=1\n" % re.escape(shown))


if __name__ == "__main__":
    kdtest.main()

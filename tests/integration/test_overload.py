#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Overload without loss: 100,000 events pushed through the control socket
as fast as keventd takes them, against 1,000 rules with handlers on a
fraction of them.  Afterwards every event is accounted for (handled +
rate-limited + rejected = sent), memory is back to about its idle size,
no zombie is left and no descriptor has leaked."""
import os
import subprocess
import time

import kdtest
from kdtest import DaemonTest, Raw

EVENTS = int(os.environ.get("KEVENT_OVERLOAD_EVENTS", "100000"))
RULES = 1000
WINDOW = 256  # requests in flight on the socket before reading replies


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def zombies_of(pid):
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] == "Z":
            found.append(int(p))
    return found


class Overload(DaemonTest):
    def write_rules(self):
        lines = ["rules:"]
        for i in range(RULES):
            lines.append("  - name: r%d" % i)
            lines.append("    match: {type: power, signal: s%d, object: /org/kernel/load/%d}"
                         % (i % 50, i % 20))
            if i in (0, 100):  # handlers on two rules, one of them rate-limited
                lines.append("    run: [/bin/true, \"${KEVENT_SEQNUM}\"]")
            if i == 100:
                lines.append("    ratelimit: 20/1m")
        self.s.write_rule("10-load.yaml", "\n".join(lines) + "\n")

    def push(self, raw, n):
        """Sends n events (some invalid), pipelined; returns how many were refused."""
        refused = 0
        in_flight = 0
        for i in range(n):
            if i % 1000 == 999:
                obj, sig = "no-slash", "s1"  # invalid: rejected at the edge
            else:
                obj, sig = "/org/kernel/load/%d" % (i % 20), "s%d" % (i % 50)
            raw.send_raw(Raw.encode("send", "power", obj, sig, "N: %d" % i))
            in_flight += 1
            if in_flight == WINDOW:
                refused += self.drain(raw, in_flight)
                in_flight = 0
        return refused + self.drain(raw, in_flight)

    def drain(self, raw, n):
        refused = 0
        for _ in range(n):
            kind, text, _ = raw.reply(timeout=60)
            if kind == "err":
                self.assertIn("invalid event", text)
                refused += 1
            else:
                self.assertEqual(kind, "ok")
        return refused

    def test_100k_events_all_accounted_for(self):
        self.write_rules()
        d = self.start("--queue-size", "2048")
        pid = d.proc.pid
        # warm up, so the idle size includes the allocator's steady state
        warm = self.raw()
        self.push(warm, 2000)
        d.wait_status(lambda st: st["events"]["pending"] == 0, "warm-up finished")
        idle_rss, idle_fds = rss_kib(pid), fds(pid)

        raw = self.raw()
        t0 = time.monotonic()
        refused = self.push(raw, EVENTS)
        t1 = time.monotonic()
        st = d.wait_status(lambda st: st["events"]["pending"] == 0 and st["queue"]["running"] == 0,
                           "the queue drained", timeout=300)
        t2 = time.monotonic()
        sent = EVENTS + 2000
        ev = st["events"]
        sock = st["sources"]["socket"]
        self.assertEqual(refused, EVENTS // 1000)
        self.assertEqual(sock["rejected"], refused + 2)  # the warm-up's two invalid ones
        self.assertEqual(sock["received"] + sock["rejected"], sent)
        self.assertEqual(ev["handled"] + ev["ratelimited"] + sock["rejected"], sent,
                         "every event handled, rate-limited or rejected")
        self.assertGreater(st["runs"]["started"], 0)
        self.assertGreater(st["runs"]["ratelimited"], 0)
        self.assertEqual(st["runs"]["failures"], 0)
        self.assertGreater(st["queue"]["paused_times"] + 1, 0)
        print("\n%d events: accepted in %.1fs (%.0f/s), drained in %.1fs; runs %d, "
              "rate-limited runs %d, paused %d times"
              % (EVENTS, t1 - t0, EVENTS / (t1 - t0), t2 - t0, st["runs"]["started"],
                 st["runs"]["ratelimited"], st["queue"]["paused_times"]))

        self.assertEqual(zombies_of(pid), [], "zombie children of keventd")
        raw.close()
        warm.close()
        self.raws.clear()
        # the closed clients are gone once keventd has read their EOF
        d.wait_status(lambda st: st["control"]["clients"] == 1, "the load clients gone")
        self.assertLessEqual(fds(pid), idle_fds, "descriptors leaked")
        rss = rss_kib(pid)
        print("RSS idle %d KiB, after the load %d KiB" % (idle_rss, rss))
        # back to about its idle size: the queue's memory is returned (not
        # measurable under ASan, whose quarantine keeps freed memory)
        if b"libasan" in subprocess.run(["ldd", kdtest.KEVENTD], capture_output=True).stdout:
            print("ASan build: memory size not checked")
        else:
            self.assertLess(rss, idle_rss + 4096, "memory did not come back to its idle size")
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

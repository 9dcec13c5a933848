#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How handlers are scheduled (keventd.rules(5)): per-object order, parallel
objects, --max-children, rule order, last, ratelimit, timeout, dry run."""
import fcntl
import os
import re
import subprocess
import time

import kdtest
from kdtest import DaemonTest, Raw, yq


class Ordering(DaemonTest):
    def test_per_object_order_under_load(self):
        s = self.s
        # each handler appends its seqnum to a file per object, then reports
        s.write_rule("10-order.yaml", "rules:\n  - name: order\n    match: {signal: tick}\n"
                     "    shell: %s\n" % yq('o=$(basename "$KEVENT_OBJECT"); '
                                           'echo "$KEVENT_SEQNUM" >> %s/"$o"; echo "$o" > %s'
                                           % (s.out, s.fifo.path)))
        d = self.start("--max-children", "8")
        c = self.raw()
        sent = {"A": [], "B": [], "C": []}
        for i in range(50):
            for obj in ("A", "B") + (("C",) if i % 5 == 0 else ()):
                kind, seq, _ = c.request("send", "general", "/order/" + obj, "tick", "I: %d" % i)
                self.assertEqual(kind, "ok")
                sent[obj].append(int(seq))
        c.close()
        total = sum(len(v) for v in sent.values())
        got = s.fifo.lines(total, timeout=60)
        for obj, seqs in sent.items():
            self.assertEqual(got.count(obj), len(seqs))
            lines = [int(x) for x in s.read("out", obj).split()]
            self.assertEqual(lines, seqs, "object %s handled out of order" % obj)
        st = d.wait_idle(total)
        self.assertEqual(st["runs"]["started"], total)
        self.assertEqual(st["runs"]["failures"], 0)
        d.stop_ok(self)

    def test_objects_run_in_parallel_and_one_object_serially(self):
        s = self.s
        s.write_rule("10-wait.yaml", "rules:\n  - name: wait\n    match: {signal: wait}\n"
                     "    run: %s\n" % self.h("wait", s.fifo.path, s.gates.dir + "/${KEVENT_TAG}",
                                              "${KEVENT_TAG}"))
        for t in ("a1", "b1", "a2"):
            s.gates.path(t)
        d = self.start()
        d.send("general", "/par/A", "wait", "Tag: a1")
        d.send("general", "/par/A", "wait", "Tag: a2")
        d.send("general", "/par/B", "wait", "Tag: b1")
        # A's first and B's handlers both start while neither may finish: they overlap
        self.assertEqual(sorted(l.split()[1] for l in s.fifo.lines(2)), ["a1", "b1"])
        st = d.status()
        self.assertEqual(st["queue"]["running"], 2)
        self.assertEqual(st["runs"]["started"], 2, "A's second event started before its first ended")
        s.gates.release("b1")
        self.assertEqual(s.fifo.line(), "end b1")
        # B is done; A's second event still waits for A's first
        st = d.wait_status(lambda st: st["events"]["pending"] == 2, "B's event finished")
        self.assertEqual(st["runs"]["started"], 2)
        s.gates.release("a1")
        self._end_then_start("a1", "a2")
        s.gates.release("a2")
        self.assertEqual(s.fifo.line(), "end a2")
        d.wait_idle(3)
        d.stop_ok(self)

    @staticmethod
    def read_counter(path):
        with open(path) as f:
            fcntl.flock(f, fcntl.LOCK_SH)  # the handlers rewrite it under flock
            cur, top = map(int, f.read().split())
        return cur, top

    def _end_then_start(self, first, second):
        l1 = self.s.fifo.line()
        l2 = self.s.fifo.line().split()
        self.assertEqual(l1, "end " + first)
        self.assertEqual(l2[:2], ["start", second])
        return ["end " + first, "start " + second]

    def test_max_children(self):
        s = self.s
        ctr = s.path("out", "counter")
        s.write_rule("10-count.yaml", "rules:\n  - name: count\n    match: {signal: c}\n"
                     "    run: %s\n" % self.h("count", ctr, s.fifo.path, s.gates.dir + "/${KEVENT_N}",
                                              "${KEVENT_N}"))
        n = 9
        for i in range(n):
            s.gates.path(str(i))
        d = self.start("--max-children", "3")
        for i in range(n):
            d.send("general", "/mc/%d" % i, "c", "N: %d" % i)
        running = []
        started = 0
        finished = 0
        while finished < n:
            # wait until as many run as may: 3, or what is left
            while len(running) < min(3, n - finished):
                kind, tag = s.fifo.line().split()[:2]
                self.assertEqual(kind, "start")
                running.append(tag)
                started += 1
            st = d.status()
            self.assertEqual(st["runs"]["started"], started, "more handlers than --max-children")
            self.assertLessEqual(st["queue"]["running"], 3)
            self.assertGreaterEqual(st["queue"]["running"], len(running))
            cur, top = self.read_counter(ctr)
            self.assertLessEqual(top, 3)
            s.gates.release(running.pop(0))
            kind, tag = s.fifo.line().split()[:2]
            self.assertEqual(kind, "end")
            finished += 1
        self.assertEqual(self.read_counter(ctr), (0, 3))
        self.assertEqual(d.wait_idle(n)["queue"]["max_children"], 3)
        d.stop_ok(self)

    def test_rules_of_one_event_run_in_rule_order(self):
        s = self.s
        def rule(name):
            return ("  - name: %s\n    match: {signal: ro}\n    run: %s\n"
                    % (name, self.h("wait", s.fifo.path, s.gates.path(name), name)))
        # the file order decides across files, the order in the file within one
        s.write_rule("20-b.yaml", "rules:\n" + rule("r3"))
        s.write_rule("10-a.yaml", "rules:\n" + rule("r1") + rule("r2"))
        s.write_rule("30-c.yaml", "rules:\n  - name: r4\n    match: {signal: other}\n    run: [/bin/false]\n")
        d = self.start()
        d.send("general", "/ro", "ro")
        for name in ("r1", "r2", "r3"):
            kind, tag = s.fifo.line().split()[:2]
            self.assertEqual((kind, tag), ("start", name))
            st = d.status()
            self.assertEqual(st["runs"]["started"], int(name[1]), "a later rule started early")
            s.gates.release(name)
            self.assertEqual(s.fifo.line(), "end " + name)
        st = d.wait_idle(1)
        self.assertEqual([(r["name"], r["matched"], r["runs"]) for r in st["rules"]],
                         [("r1", 1, 1), ("r2", 1, 1), ("r3", 1, 1), ("r4", 0, 0)])
        d.stop_ok(self)


class Backpressure(DaemonTest):
    def blocking_rules(self, quick_run):
        """Rule "block" (signal w) holds its handler until the gate "first"
        opens; rule "quick" (signal q) runs QUICK_RUN, a YAML flow list."""
        s = self.s
        s.write_rule("10-bp.yaml", (
            "rules:\n"
            "  - name: block\n    match: {signal: w}\n    run: %s\n"
            "  - name: quick\n    match: {signal: q}\n    run: %s\n")
            % (self.h("wait", s.fifo.path, s.gates.path("first"), "first"), quick_run))

    def test_full_queue_pauses_the_sender_and_loses_nothing(self):
        s = self.s
        self.blocking_rules(self.h("append", s.path("out", "log"), "${KEVENT_SEQNUM}",
                                   s.fifo.path))
        d = self.start("--queue-size", "4", "--max-children", "1")
        d.send("general", "/bp", "w")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "first"])
        for _ in range(3):
            d.send("general", "/bp", "q")
        st = d.wait_status(lambda st: st["queue"]["paused"], "the sources paused")
        self.assertEqual((st["queue"]["pending"], st["queue"]["paused_times"]), (4, 1))
        # the next sender waits instead of being refused or dropped
        p = subprocess.Popen([kdtest.KEVENTCTL, "--control", s.ctl, "send", "general", "/bp", "q"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(p)
        st = d.status()
        self.assertEqual(st["events"]["received"], 4)
        self.assertIsNone(p.poll(), "a send into a full queue returned")
        s.gates.release("first")
        self.assertEqual(p.wait(kdtest.TIMEOUT), 0)
        got = [s.fifo.line()] + s.fifo.lines(4)
        self.assertEqual(got[0], "end first")
        self.assertEqual(s.read("out", "log").split(), ["2", "3", "4", "5"])
        st = d.wait_idle(5)
        self.assertFalse(st["queue"]["paused"])
        self.assertEqual(st["events"]["handled"], 5)
        self.assertIn("socket: its share of the queue is full (4 events): pausing it", d.logtext())
        d.stop_ok(self)


    def test_posts_into_a_full_queue_wait_and_are_all_handled(self):
        """Posts are not answered, so their flow control is the socket's: once
        the queue is full keventd stops reading, the sender's socket buffer
        fills, and everything goes in, in order, when there is room."""
        s = self.s
        # a shell, not the Python handler: 2,000 runs one at a time
        self.blocking_rules("[/bin/sh, -c, 'echo \"$KEVENT_PAYLOAD\" >>%s']" % s.path("out", "log"))
        d = self.start("--queue-size", "4", "--max-children", "1")
        d.send("general", "/bp", "w")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "first"])
        c = self.raw()
        c.sock.setblocking(False)
        n, sent = 2000, 0
        while sent < n:
            try:
                c.sock.send(c.encode("post", "general", "/bp", "q", "%d" % sent))
                sent += 1
            except BlockingIOError:
                break  # keventd has stopped reading: the socket is full
        self.assertLess(sent, n, "a full queue did not push back on the sender")
        st = d.wait_status(lambda st: st["queue"]["paused"], "the sources paused")
        self.assertEqual(st["queue"]["pending"], 4)
        s.gates.release("first")
        self.assertEqual(s.fifo.line(), "end first")
        c.sock.setblocking(True)
        while sent < n:
            c.sock.send(c.encode("post", "general", "/bp", "q", "%d" % sent))
            sent += 1
        c.sock.send(c.encode("sync"))
        self.assertEqual(c.recv(), ["ok", str(n)])
        st = d.wait_idle(n + 1)
        self.assertEqual(st["events"]["handled"], n + 1)
        self.assertEqual(s.read("out", "log").split(), [str(i) for i in range(n)])
        d.stop_ok(self)

    def test_posts_of_a_sender_gone_while_waiting_all_go_in(self):
        """A sender that posts and closes while keventd waits for room: what
        it sent before it went is handled, none of it dropped."""
        s = self.s
        self.blocking_rules("[/bin/sh, -c, 'echo \"$KEVENT_PAYLOAD\" >>%s']" % s.path("out", "log"))
        d = self.start("--queue-size", "2", "--max-children", "1")
        d.send("general", "/bp", "w")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "first"])
        c = self.raw()
        for i in range(40):
            c.send_raw(c.encode("post", "general", "/bp", "q", "%d" % i))
        d.wait_status(lambda st: st["queue"]["paused"], "the sources paused")
        c.close()
        s.gates.release("first")
        self.assertEqual(s.fifo.line(), "end first")
        st = d.wait_idle(41)
        self.assertEqual(st["events"]["handled"], 41)
        self.assertEqual(st["control"]["clients"], 1)
        self.assertEqual(s.read("out", "log").split(), [str(i) for i in range(40)])
        d.stop_ok(self)

    def test_sender_gone_while_waiting(self):
        """A sender that hangs up while its send waits for room: keventd must
        not spin on the dead socket, and the send it read still goes in."""
        s = self.s
        self.blocking_rules("[/bin/true]")
        # at debug level keventd logs, as it stops, how often its loop woke
        d = self.start("--queue-size", "2", "--max-children", "1", "--log-level", "debug")
        d.send("general", "/bp", "w")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "first"])
        d.send("general", "/bp", "q")
        d.wait_status(lambda st: st["queue"]["paused"], "the sources paused")
        c = self.raw()
        c.send_raw(c.encode("send", "general", "/bp", "q", ""))
        c.close()
        # half a second with the hung-up socket parked, queried now and then:
        # a loop spinning on it would wake without end in that time
        queries, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < 0.5:
            self.assertTrue(d.status()["queue"]["paused"])
            queries += 1
            time.sleep(0.02)  # polling interval
        s.gates.release("first")
        self.assertEqual(s.fifo.line(), "end first")
        st = d.wait_idle(3)
        self.assertEqual(st["control"]["clients"], 1)
        self.assertEqual(st["events"]["handled"], 3, "the gone sender's send went in")
        d.stop_ok(self)
        m = re.search(r"event loop: (\d+) wakeups", d.logtext())
        self.assertIsNotNone(m, d.logtext())
        wakeups = int(m.group(1))
        # each request is a handful of wakeups (connection, request, reply,
        # hang-up), a handler a few more: a spinning loop makes millions
        print("\nkeventd's loop woke %d times for %d status queries" % (wakeups, queries))
        self.assertLess(wakeups, 500 + 20 * (queries + st["runs"]["started"]),
                        "keventd's loop spun while a gone sender's send waited")


class RuleOptions(DaemonTest):
    def append_rule(self, name, match, extra=""):
        return ("  - name: %s\n    match: %s\n    run: %s\n%s"
                % (name, match, self.h("append", self.s.path("out", "log"), name + ":${KEVENT_SIGNAL}",
                                       self.s.fifo.path), extra))

    def test_last(self):
        s = self.s
        s.write_rule("10-last.yaml", "rules:\n"
                     + self.append_rule("first", "{signal: [x, z]}", "    last: true\n")
                     + "  - name: filter\n    match: {signal: y}\n    last: true\n"
                     + self.append_rule("catchall", "{}"))
        d = self.start()
        d.send("general", "/l", "x")
        self.assertEqual(s.fifo.line(), "done first:x")
        d.send("general", "/l", "y")  # filtered: nothing runs
        d.send("general", "/l", "w")
        self.assertEqual(s.fifo.line(), "done catchall:w")
        st = d.wait_idle(3)
        self.assertEqual(s.read("out", "log").split(), ["first:x", "catchall:w"])
        self.assertEqual({r["name"]: r["matched"] for r in st["rules"]},
                         {"first": 1, "filter": 1, "catchall": 1})
        self.assertEqual(st["runs"]["started"], 2)
        d.stop_ok(self)

    def test_ratelimit(self):
        s = self.s
        s.write_rule("10-rl.yaml", "rules:\n"
                     + self.append_rule("limited", "{signal: r}", "    ratelimit: 2/1h\n")
                     + self.append_rule("free", "{signal: [r, q]}"))
        d = self.start()
        for i in range(5):
            d.send("general", "/rl/A", "r")
        d.send("general", "/rl/B", "r")  # its own budget
        # limited runs for A twice and for B once; free runs for all six
        got = s.fifo.lines(9)
        self.assertEqual(got.count("done limited:r"), 3)
        self.assertEqual(got.count("done free:r"), 6)
        st = d.wait_idle(6)
        self.assertEqual(st["runs"]["ratelimited"], 3)
        self.assertEqual(st["runs"]["started"], 9)
        self.assertEqual(st["events"]["ratelimited"], 0)  # "free" still ran for each event
        rules = {r["name"]: r for r in st["rules"]}
        self.assertEqual(rules["limited"]["ratelimited"], 3)
        self.assertEqual(rules["limited"]["runs"], 3)
        self.assertEqual(rules["limited"]["matched"], 6)
        self.assertIn("rate limit 2 per", d.logtext())
        d.stop_ok(self)

    def test_ratelimit_suppresses_whole_event(self):
        s = self.s
        s.write_rule("10-rl.yaml", "rules:\n" + self.append_rule("only", "{}", "    ratelimit: 1/1h\n"))
        d = self.start()
        for i in range(4):
            d.send("general", "/rl/A", "r")
        self.assertEqual(s.fifo.line(), "done only:r")
        st = d.wait_idle(4)
        # an event whose every run was suppressed counts as rate-limited, not handled
        self.assertEqual((st["events"]["handled"], st["events"]["ratelimited"]), (1, 3))
        self.assertEqual(st["runs"]["ratelimited"], 3)
        d.stop_ok(self)

    def test_timeout_kills_hung_handler(self):
        s = self.s
        s.write_rule("10-to.yaml", (
            "rules:\n"
            "  - name: hang\n    match: {signal: hang}\n    timeout: 300ms\n    shell: %s\n"
            "  - name: stubborn\n    match: {signal: stubborn}\n    timeout: 300ms\n    shell: %s\n")
            % (yq("echo $$ > %s/hang.pid; echo start > %s; exec sleep 600" % (s.out, s.fifo.path)),
               yq("trap '' TERM; echo $$ > %s/stubborn.pid; echo start > %s; sleep 600; echo survived"
                  % (s.out, s.fifo.path))))
        d = self.start()
        t0 = time.monotonic()
        d.send("general", "/to/hang", "hang")
        d.send("general", "/to/stubborn", "stubborn")
        s.fifo.lines(2)
        st = d.wait_status(lambda st: st["runs"]["timeouts"] == 1, "one timeout")
        self.assertEqual(st["runs"]["failures"], 1)
        self.assertIn("rule hang[", d.logtext())
        self.assertIn("timed out after", d.logtext())
        self.assertIn("killed by signal 15", d.logtext())
        # the one that ignores SIGTERM dies of SIGKILL 5 s later
        st = d.wait_status(lambda st: st["runs"]["timeouts"] == 2, "two timeouts", timeout=30)
        self.assertGreaterEqual(time.monotonic() - t0, 5.3)
        log = d.logtext()
        self.assertIn("still running 5s after SIGTERM, sending SIGKILL", log)
        self.assertIn("killed by signal 9", log)
        self.assertNotIn("survived", log)
        rules = {r["name"]: r for r in st["rules"]}
        self.assertEqual(rules["hang"]["timeouts"], 1)
        self.assertEqual(rules["stubborn"]["timeouts"], 1)
        for name in ("hang", "stubborn"):
            pid = int(s.read("out", name + ".pid"))
            try:
                with open("/proc/%d/cmdline" % pid) as f:
                    alive = "sleep" in f.read()
            except OSError:
                alive = False
            self.assertFalse(alive, "handler %s still alive" % name)
        d.wait_idle(2)
        text = d.ctl("status", check=0).stdout
        self.assertRegex(text, r"runs: 2, failures 2, timeouts 2")
        d.stop_ok(self)

    def test_dry_run_runs_nothing(self):
        s = self.s
        s.write_rule("10-dry.yaml", "rules:\n  - name: dry\n    match: {}\n    run: [/usr/bin/touch, %s]\n"
                     % yq(s.path("out", "ran")))
        d = self.start("--dry-run")
        d.send("general", "/dry", "x", "K: v")
        st = d.wait_idle(1)
        self.assertEqual(st["runs"]["dry_run"], 1)
        self.assertEqual(st["runs"]["failures"], 0)
        self.assertFalse(os.path.exists(s.path("out", "ran")))
        self.assertIn("dry run: rule dry would run", d.logtext())
        self.assertIn(s.path("out", "ran"), d.logtext())
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The journal of accepted events: what a stop leaves queued runs once after
the restart, flagged KEVENT_REDELIVERED=1; what keventd acknowledged before
it was killed runs after the restart."""
import os
import signal
import socket
import subprocess

import kdtest
from kdtest import KEVENTCTL, TIMEOUT

# a handler that writes down which event it ran for, and whether it was
# redelivered, in one write (O_APPEND): the lines of concurrent runs never mix
RECORD = """#!/bin/sh
printf '%s %s\\n' "$KEVENT_PAYLOAD" "${KEVENT_REDELIVERED:-0}" >>"$1"
"""

# the same, with the rule's name first
RECORD_NAMED = """#!/bin/sh
printf '%s %s %s\\n' "$2" "$KEVENT_PAYLOAD" "${KEVENT_REDELIVERED:-0}" >>"$1"
"""


class JournalTest(kdtest.DaemonTest):
    def rules(self):
        s = self.s
        self.out = s.path("out", "runs")
        rec = s.script("record.sh", RECORD)
        s.write_rule("10-j.yaml",
                     "rules:\n"
                     "  - name: gate\n"
                     "    match: {signal: gate}\n"
                     "    run: %s\n"
                     "  - name: rec\n"
                     "    match: {signal: x}\n"
                     "    run: %s\n"
                     % (self.h("wait", s.fifo.path, s.gates.path("g"), "g"),
                        "[%s, %s]" % (kdtest.yq(rec), kdtest.yq(self.out))))

    def parked_send(self, d, payload):
        """A send of x on /one that keventd parks: its client is there and
        has no answer yet.  Returns the keventctl process."""
        p = subprocess.Popen([KEVENTCTL, "--control", self.s.ctl, "send", "general",
                              "/one", "x", payload], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        d.wait_status(lambda st: st["control"]["clients"] >= 2, "the waiting client")
        self.assertIsNone(p.poll())
        return p

    def runs(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out) as f:
            return [tuple(l.split()) for l in f.read().splitlines()]

    def test_sigterm_keeps_the_queue_for_the_next_start(self):
        """20 events queued on one object behind a held handler: SIGTERM
        lets the held one end and keeps the 20; the next keventd on the same
        state directory runs each once, in order, with KEVENT_REDELIVERED=1,
        and not the one that had ended."""
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        for i in range(20):
            d.send("general", "/one", "x", "%d" % i)
        d.proc.send_signal(signal.SIGTERM)
        d.wait_log("queued events not started, kept in the journal for the next start: "
                   "20 (socket 20)")
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertEqual(self.runs(), [])

        d2 = self.start("--state-dir", state)
        st = d2.wait_status(lambda st: st["queue"]["pending"] == 0
                            and st["events"]["handled"] == 20, "the 20 handled")
        self.assertEqual(st["sources"]["socket"]["redelivered"], 20)
        self.assertEqual(self.runs(), [("%d" % i, "1") for i in range(20)])
        self.assertNotIn("start g", self.s.fifo.seen[1:])  # the gate ran once
        self.assertIn("journal: 20 unfinished events handled again", d2.logtext())
        d2.stop_ok(self)
        # and a third start has nothing left to redeliver
        d3 = self.start("--state-dir", state)
        self.assertEqual(d3.status()["sources"]["socket"]["redelivered"], 0)
        d3.stop_ok(self)
        self.assertEqual(len(self.runs()), 20)

    def test_sigterm_with_a_queue_and_a_debounced_run(self):
        """20 events queued on one object behind a held handler, and a
        debounced run waiting for its quiet time: SIGTERM keeps both, and
        after the restart each runs exactly once, flagged."""
        self.rules()
        s = self.s
        deb = s.path("out", "deb")
        rec = s.script("record-deb.sh", RECORD)
        s.write_rule("20-deb.yaml",
                     "rules:\n"
                     "  - name: deb\n"
                     "    match: {signal: q}\n"
                     "    debounce: 2s\n"
                     "    run: [%s, %s]\n" % (kdtest.yq(rec), kdtest.yq(deb)))
        state = s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "gate")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "g"])
        for i in range(20):
            d.send("general", "/one", "x", "%d" % i)
        for i in range(3):
            d.send("general", "/two", "q", "q%d" % i)
        d.proc.send_signal(signal.SIGTERM)
        d.wait_log("debounced runs waiting for quiet, kept in the journal for the next start: 1")
        s.gates.release("g")
        self.assertEqual(s.fifo.line(), "end g")
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertEqual(self.runs(), [])
        d2 = self.start("--state-dir", state)
        st = d2.wait_status(lambda st: st["journal"]["unfinished"] == 0
                            and st["queue"]["pending"] == 0 and st["queue"]["running"] == 0
                            and st["events"]["handled"] == 21, "all handled",
                            timeout=TIMEOUT + 2)
        d2.stop_ok(self)
        self.assertEqual(self.runs(), [("%d" % i, "1") for i in range(20)])
        with open(deb) as f:
            self.assertEqual(f.read().split(), ["q2", "1"])
        kdtest.assert_accounted(self, st)

    def test_sigkill_loses_no_acknowledged_event(self):
        """keventd killed while the events it acknowledged wait: the next
        start runs every one of them; the run the kill cut off runs again."""
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        lines = "".join("general\t/one\tx\t%d\n" % i for i in range(30))
        r = d.ctl("send", "--batch", "-", input=lines)
        self.assertEqual(r.returncode, 0, r.stderr)  # every one acknowledged
        d.kill()
        # the orphaned handler of the cut-off run ends; its event is not done
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        self.assertEqual(self.runs(), [])

        d2 = self.start("--state-dir", state)
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])  # again
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        st = d2.wait_status(lambda st: st["queue"]["pending"] == 0
                            and st["events"]["handled"] == 31, "the 31 handled")
        self.assertEqual(st["sources"]["socket"]["redelivered"], 31)
        self.assertEqual(self.runs(), [("%d" % i, "1") for i in range(30)])
        d2.stop_ok(self)

    def test_send_wait_across_a_stop_and_a_kill(self):
        """send --wait for an event queued behind a held handler: a stop
        keeps the event and keventctl says it will be redelivered, exit 3;
        so does a kill; the next start runs it, flagged."""
        self.rules()
        state = self.s.path("state")
        last_seq = 1  # the first keventd's gate
        for how, said in ((signal.SIGTERM, "keventd restarted (or stopped) before the event's"),
                          (signal.SIGKILL, "keventd went away before the event's")):
            d = self.start("--state-dir", state)
            d.send("general", "/one", "gate")
            self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
            w = subprocess.Popen([KEVENTCTL, "--control", self.s.ctl, "send", "--wait",
                                  "general", "/one", "x", how.name],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # journaled; numbered after every event the instances before it had
            line = w.stdout.readline()
            self.assertRegex(line, r"^event seqnum \d+\n$")
            seq = int(line.split()[2])
            self.assertGreater(seq, last_seq)
            last_seq = seq
            d.proc.send_signal(how)
            if how == signal.SIGTERM:
                d.wait_log("kept in the journal for the next start: 1")
            out, err = w.communicate(timeout=TIMEOUT)
            self.assertEqual(w.returncode, 3, err)
            self.assertIn(said, err)
            self.s.gates.release("g")
            self.assertEqual(self.s.fifo.line(), "end g")
            d.proc.wait(TIMEOUT)
            d2 = self.start("--state-dir", state)
            if how == signal.SIGKILL:  # the cut-off gate runs again
                self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
                self.s.gates.release("g")
                self.assertEqual(self.s.fifo.line(), "end g")
            d2.wait_status(lambda st: st["queue"]["pending"] == 0
                           and st["journal"]["unfinished"] == 0, "the journal empty")
            d2.stop_ok(self)
            self.assertIn((how.name, "1"), self.runs())

    def test_socket_numbers_go_on_across_restarts(self):
        """send's numbers across a stop and a kill: each restart numbers
        after every event of the keventd before it, so a number is never
        given to two events, redelivered ones included."""
        self.rules()
        state = self.s.path("state")
        seqs = []

        def send(d, n):
            for _ in range(n):
                r = d.ctl("send", "-v", "general", "/seq", "none")
                seqs.append(int(r.stdout.split()[-1]))

        d = self.start("--state-dir", state)
        send(d, 3)
        self.assertEqual(seqs, [1, 2, 3])  # a new state directory starts at 1
        d.stop_ok(self)
        d = self.start("--state-dir", state)
        send(d, 2)
        self.assertEqual(seqs[3:], [4, 5])  # a clean stop: on from the last
        d.kill()
        d = self.start("--state-dir", state)
        send(d, 2)
        d.kill()
        # queued behind the gate, so the journal holds them at the kill
        d = self.start("--state-dir", state)
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        for i in range(3):
            r = d.ctl("send", "-v", "general", "/one", "x", "k%d" % i)
            seqs.append(int(r.stdout.split()[-1]))
        d.kill()
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        d = self.start("--state-dir", state)
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])  # redelivered
        send(d, 2)  # while the old numbers are in the journal
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        d.wait_status(lambda st: st["journal"]["unfinished"] == 0, "the journal empty")
        d.stop_ok(self)
        print("\nsocket numbers across a stop and two kills: %s" % seqs)
        self.assertEqual(seqs, sorted(set(seqs)), "numbers strictly increasing")
        self.assertEqual([r for r in self.runs()], [("k%d" % i, "1") for i in range(3)])

    def test_a_run_that_ended_is_not_run_again(self):
        """An event of two rules, killed while the second's handler runs:
        the next start runs the second again, flagged, and not the first,
        whose run had ended."""
        s = self.s
        self.out = s.path("out", "runs")
        rec = s.script("record.sh", RECORD)
        s.write_rule("10-two.yaml",
                     "rules:\n"
                     "  - name: first\n"
                     "    match: {signal: two}\n"
                     "    run: [%s, %s]\n"
                     "  - name: second\n"
                     "    match: {signal: two}\n"
                     "    run: %s\n"
                     % (kdtest.yq(rec), kdtest.yq(self.out),
                        self.h("wait", s.fifo.path, s.gates.path("g"), "g")))
        state = s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "two", "first-run")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "g"])
        self.assertEqual(self.runs(), [("first-run", "0")])
        d.kill()
        s.gates.release("g")
        self.assertEqual(s.fifo.line(), "end g")
        d2 = self.start("--state-dir", state)
        self.assertEqual(s.fifo.line().split()[:2], ["start", "g"])  # the second again
        s.gates.release("g")
        self.assertEqual(s.fifo.line(), "end g")
        d2.wait_status(lambda st: st["queue"]["pending"] == 0
                       and st["journal"]["unfinished"] == 0, "the journal empty")
        d2.stop_ok(self)
        self.assertEqual(self.runs(), [("first-run", "0")])  # the first did not run again

    def test_a_reload_between_kill_and_start_skips_by_name(self):
        """An event of rules A, B and C, killed after A's run ended and
        while B's runs; the rule file then gets a rule X before A that
        matches too, and loses C: the next start runs B again and X (new)
        once each, flagged, and neither A (its run ended) nor C (gone)."""
        s = self.s
        self.out = s.path("out", "runs")
        rec = s.script("record-named.sh", RECORD_NAMED)

        def rule(name, run):
            return "  - name: %s\n    match: {signal: two}\n    run: %s\n" % (name, run)

        def recording(name):
            return "[%s, %s, %s]" % (kdtest.yq(rec), kdtest.yq(self.out), name)

        gate = self.h("wait", s.fifo.path, s.gates.path("g"), "g")
        s.write_rule("10-two.yaml", "rules:\n" + rule("a", recording("a")) + rule("b", gate)
                     + rule("c", recording("c")))
        state = s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "two", "ev")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "g"])
        self.assertEqual(self.runs(), [("a", "ev", "0")])  # a's run ended
        d.kill()
        s.gates.release("g")
        self.assertEqual(s.fifo.line(), "end g")
        s.write_rule("10-two.yaml", "rules:\n" + rule("x", recording("x"))
                     + rule("a", recording("a")) + rule("b", gate))
        d2 = self.start("--state-dir", state)
        self.assertEqual(s.fifo.line().split()[:2], ["start", "g"])  # b again
        s.gates.release("g")
        self.assertEqual(s.fifo.line(), "end g")
        st = d2.wait_status(lambda st: st["queue"]["pending"] == 0
                            and st["journal"]["unfinished"] == 0, "the journal empty")
        d2.stop_ok(self)
        self.assertEqual({r["name"]: r["runs"] for r in st["rules"]}, {"x": 1, "a": 0, "b": 1})
        ev = st["events"]
        self.assertEqual((ev["received"], ev["handled"], ev["pending"]), (1, 1, 0))
        self.assertEqual(self.runs(), [("a", "ev", "0"), ("x", "ev", "1")])

    def test_one_write_for_a_round_of_events(self):
        """40 posts and a sync, waiting in the socket while keventd is
        stopped (SIGSTOP), are read in one round of its loop: their 40
        records go to the journal in one write, before the sync's "ok"."""
        self.rules()
        d = self.start("--state-dir", self.s.path("state"))
        before = d.status()["journal"]["writes"]
        g = self.raw()
        d.proc.send_signal(signal.SIGSTOP)
        try:
            for i in range(40):
                g.send_raw(g.encode("post", "general", "/batch/%d" % i, "none", ""))
            g.send_raw(g.encode("sync"))
        finally:
            d.proc.send_signal(signal.SIGCONT)
        self.assertEqual(g.reply(), ("ok", "40", []))
        st = d.status()
        self.assertEqual(st["events"]["received"], 40)
        # the status request's own round writes nothing: no event in it
        self.assertEqual(st["journal"]["writes"] - before, 1)
        d.stop_ok(self)

    def test_a_debounced_run_waiting_at_a_stop_runs_after_the_start(self):
        """Three events of one object for a debounced rule, and a stop
        within its quiet time: the waiting run is kept in the journal, and
        the next start runs it once, with the last event, flagged; the
        event's other rule, which had run, does not run again."""
        s = self.s
        self.out = s.path("out", "runs")
        rec = s.script("record.sh", RECORD)
        s.write_rule("10-deb.yaml",
                     "rules:\n"
                     "  - name: deb\n"
                     "    match: {signal: q}\n"
                     "    debounce: 3s\n"
                     "    run: [%s, %s]\n"
                     "  - name: now\n"
                     "    match: {signal: q}\n"
                     "    run: [%s, %s]\n"
                     % (kdtest.yq(rec), kdtest.yq(self.out), kdtest.yq(rec),
                        kdtest.yq(self.out + ".now")))
        state = s.path("state")
        d = self.start("--state-dir", state)
        for i in range(3):
            d.send("general", "/one", "q", "e%d" % i)
        d.wait_status(lambda st: st["queue"]["pending"] == 0 and st["queue"]["running"] == 0,
                      "the immediate runs done")
        d.proc.send_signal(signal.SIGTERM)
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertIn("debounced runs waiting for quiet, kept in the journal for the next "
                      "start: 1", d.logtext())
        self.assertEqual(self.runs(), [])  # within the quiet time: not run
        d2 = self.start("--state-dir", state)
        d2.wait_status(lambda st: st["journal"]["unfinished"] == 0
                       and any(r["name"] == "deb" and r["runs"] == 1 for r in st["rules"]),
                       "the debounced run", timeout=TIMEOUT + 3)
        d2.stop_ok(self)
        self.assertEqual(self.runs(), [("e2", "1")])
        with open(self.out + ".now") as f:  # the other rule ran once each, before
            self.assertEqual(sorted(f.read().split()), ["0", "0", "0", "e0", "e1", "e2"])

    def test_status_and_damage(self):
        """A damaged record costs that record: counted in status as corrupt,
        the ones around it run."""
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        for i in range(3):
            d.send("general", "/one", "x", "%d" % i)
        st = d.status()
        self.assertEqual(st["journal"]["unfinished"], 4)
        self.assertGreater(st["journal"]["bytes"], 0)
        d.kill()
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        segs = sorted(f for f in os.listdir(state) if f.startswith("journal-"))
        self.assertEqual(len(segs), 1)
        path = os.path.join(state, segs[0])
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            # the third record's payload "1": the one damaged
            at = data.index(b"\x01\x00\x00\x001", data.index(b"x\x01\x00\x00\x000") + 5)
            data[at + 4] ^= 0x40
            f.seek(0)
            f.write(data)
        d2 = self.start("--state-dir", state)
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        st = d2.wait_status(lambda st: st["queue"]["pending"] == 0
                            and st["events"]["handled"] == 3, "the 3 handled")
        self.assertEqual(st["journal"]["corrupt"], 1)
        self.assertEqual(self.runs(), [("0", "1"), ("2", "1")])
        self.assertIn("damaged records skipped: 1", d2.logtext())
        d2.stop_ok(self)


    def test_a_damaged_length_costs_its_record_alone(self):
        """199 events wait in the journal behind a held handler when keventd
        is killed; one record's length field is damaged: the next start runs
        the other 198, counts 1 corrupt, and keeps the damaged bytes aside
        as journal-N@OFFSET.corrupt."""
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state)
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        lines = "".join("general\t/one\tx\t%d\n" % i for i in range(199))
        r = d.ctl("send", "--batch", "-", input=lines)
        self.assertEqual(r.returncode, 0, r.stderr)
        d.kill()
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        segs = sorted(f for f in os.listdir(state) if f.startswith("journal-"))
        self.assertEqual(len(segs), 1)
        path = os.path.join(state, segs[0])
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            # walk the records (magic, len, sum, state, done: 16 bytes, then
            # the body) to the one of payload "100"
            off = 0
            while b"\x03\x00\x00\x00100" not in data[off:off + 16 + int.from_bytes(
                    data[off + 4:off + 8], "little")]:
                off += 16 + int.from_bytes(data[off + 4:off + 8], "little")
            data[off + 5] ^= 0x10  # its length 4096 bytes longer
            f.seek(0)
            f.write(data)
        d2 = self.start("--state-dir", state)
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        st = d2.wait_status(lambda st: st["queue"]["pending"] == 0
                            and st["events"]["handled"] == 199, "the 199 handled")
        self.assertEqual(st["journal"]["corrupt"], 1)
        self.assertEqual(self.runs(), [("%d" % i, "1") for i in range(199) if i != 100])
        self.assertIn("damaged records skipped: 1", d2.logtext())
        self.assertTrue(os.path.exists(os.path.join(state, "%s@%d.corrupt" % (segs[0], off))),
                        os.listdir(state))
        d2.stop_ok(self)

    def test_long_held_records_never_stop_intake(self):
        """A debounced run waiting an hour in each of eight segments of a
        journal of 64K: the segments are compacted, the waiting records
        copied forward, and intake never pauses; the journal stays within
        its size and a segment more.  A stop keeps the eight waits, and the
        next start runs each once."""
        s = self.s
        deb = s.path("out", "deb")
        rec = s.script("record.sh", RECORD)
        rules = ("rules:\n"
                 "  - name: deb\n"
                 "    match: {signal: q}\n"
                 "    debounce: %s\n"
                 "    run: [%s, %s]\n")
        s.write_rule("10-deb.yaml", rules % ("1h", kdtest.yq(rec), kdtest.yq(deb)))
        state = s.path("state")
        d = self.start("--state-dir", state, "--journal-size", "64K")
        brief = "".join("general\t/brief/%d\tnone\t%0100d\n" % (i, i) for i in range(150))
        for k in range(8):
            d.send("general", "/held/%d" % k, "q", "h%d" % k)
            r = d.ctl("send", "--batch", "-", input=brief)
            self.assertEqual(r.returncode, 0, r.stderr)
            size = sum(os.path.getsize(os.path.join(state, f))
                       for f in os.listdir(state) if f.startswith("journal-"))
            self.assertLessEqual(size, 64 * 1024 + 16 * 1024 + 4096)
        st = d.status()
        self.assertEqual(st["journal"]["full_times"], 0, d.logtext())
        self.assertEqual(st["journal"]["unfinished"], 8)
        self.assertEqual(st["events"]["received"], 8 * 151)
        self.assertNotIn("the journal is full", d.logtext())
        d.proc.send_signal(signal.SIGTERM)
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertIn("debounced runs waiting for quiet, kept in the journal for the next "
                      "start: 8", d.logtext())
        s.write_rule("10-deb.yaml", rules % ("100ms", kdtest.yq(rec), kdtest.yq(deb)))
        d2 = self.start("--state-dir", state, "--journal-size", "64K")
        d2.wait_status(lambda st: st["journal"]["unfinished"] == 0
                       and any(r["name"] == "deb" and r["runs"] == 8 for r in st["rules"]),
                       "the 8 debounced runs")
        d2.stop_ok(self)
        with open(deb) as f:
            self.assertEqual(sorted(f.read().split()),
                             sorted(["h%d" % k for k in range(8)] + ["1"] * 8))

    def test_ok_means_written(self):
        """The state directory's file system fills while events wait in
        the journal: a send is answered "ok" only when its record is
        written; the others are refused with the reason, counted, and
        status says the journal is failing.  Once there is room again sends
        are "ok" again.  After a kill every event answered "ok" runs, and
        no refused one."""
        self.rules()
        state = self.s.path("state")
        os.makedirs(state, mode=0o700)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs",
                            state], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.addCleanup(subprocess.run, ["umount", "-l", state])
        d = self.start("--state-dir", state, "--journal-size", "64K")
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        filler = os.path.join(state, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096) == 4096:
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        oks, refused = [], []
        for i in range(300):
            r = d.ctl("send", "general", "/one", "x", "%d" % i)
            if r.returncode == 0:
                oks.append("%d" % i)
                continue
            self.assertIn("the journal cannot write it: event refused: No space left on device",
                          r.stderr)
            refused.append("%d" % i)
            if len(refused) == 3:
                break
        self.assertEqual(len(refused), 3)
        st = d.status()
        self.assertEqual(st["journal"]["failing"], "No space left on device")
        self.assertEqual(st["journal"]["refused"], 3)
        self.assertEqual(st["sources"]["socket"]["received"], 1 + len(oks))
        kdtest.assert_accounted(self, st)
        self.assertIn("journal: failing (No space left on device), ",
                      d.ctl("status", check=0).stdout)
        # posts too: each refused, by its number
        r = d.ctl("send", "--batch", "-", input="general\t/one\tx\tp0\ngeneral\t/one\tx\tp1\n")
        self.assertNotEqual(r.returncode, 0)
        for n in (1, 2):
            self.assertIn("(stdin):%d: keventd: the journal cannot write it: event refused: "
                          "No space left on device" % n, r.stderr)
        # and send --wait, whose event is written at once
        r = d.ctl("send", "--wait", "general", "/one", "x", "w0")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("the journal cannot write it: event refused: No space left on device",
                      r.stderr)
        self.assertEqual(d.status()["journal"]["refused"], 6)
        os.unlink(filler)
        for i in range(5):
            oks.append("later%d" % i)
            d.send("general", "/one", "x", oks[-1])
        st = d.status()
        self.assertIsNone(st["journal"]["failing"])
        self.assertEqual(st["journal"]["refused"], 6)
        d.kill()
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        self.assertEqual(self.runs(), [])
        d2 = self.start("--state-dir", state, "--journal-size", "64K")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        d2.wait_status(lambda st: st["queue"]["pending"] == 0
                       and st["events"]["handled"] == len(oks) + 1, "the events answered ok")
        d2.stop_ok(self)
        self.assertEqual(self.runs(), [(v, "1") for v in oks])

    def test_full_journal_pauses_and_then_runs_all(self):
        """Events held behind a running handler fill a journal of 64K with
        their live records: the journal is full, the socket source paused,
        and a send waits; once the handler ends and the events run, the
        send is taken, and every event runs once, in order."""
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state, "--journal-size", "64K")
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        sent = []
        for i in range(100):
            sent.append("%d-%s" % (i, "p" * 2000))
            d.send("general", "/one", "x", sent[-1])
            if d.status()["journal"]["full"]:
                break
        st = d.status()
        self.assertTrue(st["journal"]["full"], st["journal"])
        self.assertTrue(st["sources"]["socket"]["paused"])
        d.wait_log("socket: the journal is full: pausing it")
        # the request is parked: the socket source takes nothing while full
        waiting = self.parked_send(d, "last")
        self.assertEqual(d.status()["sources"]["socket"]["received"], 1 + len(sent))
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        out, err = waiting.communicate(timeout=TIMEOUT)
        self.assertEqual(waiting.returncode, 0, err)
        sent.append("last")
        st = d.wait_status(lambda st: st["queue"]["pending"] == 0
                           and st["events"]["handled"] == len(sent) + 1, "all handled")
        self.assertFalse(st["journal"]["full"])
        self.assertEqual(st["journal"]["full_times"], 1)
        self.assertIn("the journal has room again", d.logtext())
        d.stop_ok(self)
        self.assertEqual(self.runs(), [(v, "0") for v in sent])

    def test_replay_across_several_segments(self):
        """150 events of 300-byte payloads wait behind a held handler, in
        three segments and more of a journal of 64K, when keventd is
        killed: the next start runs each once, in order, flagged."""
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state, "--journal-size", "64K")
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        sent = ["%d-%s" % (i, "r" * 300) for i in range(150)]
        r = d.ctl("send", "--batch", "-",
                  input="".join("general\t/one\tx\t%s\n" % v for v in sent))
        self.assertEqual(r.returncode, 0, r.stderr)
        d.kill()
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        segs = [f for f in os.listdir(state) if f.startswith("journal-")]
        self.assertGreaterEqual(len(segs), 3, segs)
        d2 = self.start("--state-dir", state, "--journal-size", "64K")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        st = d2.wait_status(lambda st: st["queue"]["pending"] == 0
                            and st["events"]["handled"] == 151, "the 151 handled")
        self.assertEqual(st["sources"]["socket"]["redelivered"], 151)
        self.assertIn("journal: 151 unfinished events handled again", d2.logtext())
        d2.stop_ok(self)
        self.assertEqual(self.runs(), [(v, "1") for v in sent])

    def test_replay_is_fed_within_the_share(self):
        """100 events wait behind a held handler when keventd is killed;
        the next start, with a queue of 16, takes the journal's events in
        as its share has room, never all at once: while the replayed gate
        holds, 16 are queued, the rest still in the journal.  A send made
        meanwhile waits until the replay is in, and runs after them; the
        100 run once each, in order."""
        self.rules()
        state = self.s.path("state")
        d = self.start("--state-dir", state, "--queue-size", "200")
        d.send("general", "/one", "gate")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        sent = ["%d" % i for i in range(100)]
        r = d.ctl("send", "--batch", "-",
                  input="".join("general\t/one\tx\t%s\n" % v for v in sent))
        self.assertEqual(r.returncode, 0, r.stderr)
        d.kill()
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")

        d2 = self.start("--state-dir", state, "--queue-size", "16")
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        st = d2.wait_status(lambda st: st["sources"]["socket"]["pending"] == 16,
                            "the share full")
        self.assertEqual(st["sources"]["socket"]["share"], 16)
        self.assertEqual(st["sources"]["socket"]["redelivered"], 16)
        # parked: the socket source takes nothing while the replay goes on
        late = self.parked_send(d2, "late")
        st = d2.status()
        self.assertEqual(st["sources"]["socket"]["pending"], 16)
        self.assertTrue(st["sources"]["socket"]["paused"])
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        out, err = late.communicate(timeout=TIMEOUT)
        self.assertEqual(late.returncode, 0, err)
        st = d2.wait_status(lambda st: st["queue"]["pending"] == 0
                            and st["events"]["handled"] == 102, "all handled")
        self.assertEqual(st["sources"]["socket"]["redelivered"], 101)
        self.assertIn("journal: 101 unfinished events handled again", d2.logtext())
        d2.stop_ok(self)
        self.assertEqual(self.runs(), [(v, "1") for v in sent] + [("late", "0")])

    def test_sends_answered_to_a_sender_that_shut_down_writing(self):
        """Two sends and a post, then the sender shuts down its writing
        side: the sends are answered once their records are written, though
        the connection is at its end, and the events run."""
        self.rules()
        d = self.start("--state-dir", self.s.path("state"))
        g = self.raw()
        g.send_raw(g.encode("send", "general", "/h", "x", "a"))
        g.send_raw(g.encode("post", "general", "/h", "x", "b"))
        g.send_raw(g.encode("send", "general", "/h", "x", "c"))
        g.sock.shutdown(socket.SHUT_WR)
        first, second = g.recv(), g.recv()
        self.assertEqual((first[0], second[0]), ("ok", "ok"))
        self.assertEqual(int(second[1]), int(first[1]) + 2)
        self.assertIsNone(g.recv())  # and then keventd closes its side
        d.wait_idle(3)
        d.stop_ok(self)
        self.assertEqual(self.runs(), [("a", "0"), ("b", "0"), ("c", "0")])

if __name__ == "__main__":
    kdtest.main()

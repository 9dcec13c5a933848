#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The crash loop: keventd killed again and again while a client sends
events, in acknowledged batches (send --batch, whose sync answers once
every event is in the journal) and alone (send, whose "ok" says the same).
Every event matches two rules.  keventd dies in two ways:

- at random moments, KEVENT_CRASH_KILLS times (default 100): SIGKILL, and
  one time in four SIGSEGV;
- at each fault point (KEVENTD_FAULT=POINT:N[:segv], keventd(8)) of
  FAULT_POINTS, FAULT_ROUNDS times each, with N drawn at random, killing
  itself with SIGKILL or SIGSEGV: after an event is handed over and before
  the journal has it, after the journal is written and before the "ok",
  right after replies are sent, after a handler is spawned, after a job's runs are over and before its
  event is retired.

Across all the kills, every acknowledged event runs at least once for
each rule, and every run after an event's first for a rule carries
KEVENT_REDELIVERED=1 (at most one run lacks it: the first, or a killed
keventd's orphaned handler writing after the next keventd's run).  Every
fault point is reached.

Runs again only what a kill cut off.  Each keventd is one epoch: the rule
file, rewritten before each start, hands the handler its number, so a run
is known by the keventd that started it (an orphaned handler writing after
its keventd died included).  A keventd runs an event for a rule at most
once, and of the runs that a killed keventd started, at most MAX_CHILDREN
(its --max-children) run again later: the runs in flight when it died,
whose end it had not yet written as done in the journal.  A journal that
forgot its done bits would run again all it holds at every start.

Every death is the one the test caused: a SIGSEGV, sent from outside or
raised at a fault point, is marked on keventd's stderr (keventd(8),
KEVENTD_FAULT; at random moments keventd runs with KEVENTD_FAULT=none for
that), and a SIGSEGV without its mark is a real crash: a failure.

At the end, events sent to a keventd that is not killed run once each,
none flagged.  Prints the kills, the time, a histogram of runs per event
and rule, and the runs that ran again.

KEVENT_CRASH_SEED sets the random seed (default: the time), printed so
that a failure can be rerun."""
import collections
import json
import os
import random
import signal
import subprocess
import threading
import time

import kdtest
from kdtest import KEVENTCTL, TIMEOUT

KILLS = int(os.environ.get("KEVENT_CRASH_KILLS", "100"))
FAULT_POINTS = ("accepted", "journaled", "replied", "spawned", "exited")
FAULT_ROUNDS = 6  # per point: 30 more kills, half of them SIGSEGV
MAX_CHILDREN = 4
BATCH = 10
OBJECTS = 4
RULES = ("a", "b")
# the debounced rule's kills: rounds, keys (objects) a round, its quiet time
DEB_ROUNDS = 10
DEB_KEYS = 3
# (a round -- a start, nine sends, a kill within 1 s -- must end within the
# quiet time, on a loaded machine and under ASan too)
DEB_QUIET = 8
DEB_KILL_WITHIN = 1.0
# the condition table's kills, and the objects whose condition flips
COND_KILLS = int(os.environ.get("KEVENT_CRASH_COND_KILLS", "100"))
COND_OBJECTS = 6
# a fault point not reached within this much sending: the keventd is killed
# from outside and the point counted as missed
FAULT_PATIENCE = 5.0

# one write per run (O_APPEND): the lines of concurrent runs never mix
RECORD = """#!/bin/sh
printf '%s %s %s\\n' "$KEVENT_PAYLOAD" "$2" "${KEVENT_REDELIVERED:-0}" >>"$1"
"""
# the kill loop's: a line at the run's start and one at its end, each with
# the epoch (the keventd that started it), one write each (O_APPEND)
RECORD_EPOCH = """#!/bin/sh
printf 'start %s %s %s %s\\n' "$KEVENT_PAYLOAD" "$2" "$3" "${KEVENT_REDELIVERED:-0}" >>"$1"
printf 'end %s %s %s\\n' "$KEVENT_PAYLOAD" "$2" "$3" >>"$1"
"""
SENT_MARK = "fault: injected crash: SIGSEGV sent by another process"


def injected_mark(point, sig):
    return "fault point reached: injected crash at %s (%s)" % (point, signal.Signals(sig).name)


class CrashTest(kdtest.DaemonTest):
    def restart(self, state, *args, env=None, before=None):
        """A keventd on state.  A handler that the last one forked can hold
        its descriptors, the control socket's among them, for the moment
        between its fork and its exec: a start that finds the socket in use
        then is tried again, at most 5 times.  before() runs before each
        start (a start that fails may have handed the journal's events to
        handlers already)."""
        # a SIGSEGV from outside ends keventd as the kernel's default does,
        # not in a sanitizer's report
        env = dict(env or {})
        env["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"
        for attempt in range(5):
            if before:
                before()
            try:
                return self.start("--state-dir", state, *args, env=env)
            except AssertionError as e:
                if "KEVENTD_FAULT" in env and "fault point reached" in str(e):
                    # reached while the journal's events were handled again
                    return self.daemons[-1]
                if "Address already in use" not in str(e) or attempt == 4:
                    raise

    def test_kill_loop(self):
        s = self.s
        out = s.path("out", "runs")
        rec = s.script("record.sh", RECORD_EPOCH)

        epoch = -1

        def epoch_rules():
            """The rules of the next keventd, their run naming its epoch:
            the same rules to the journal, whose records know a rule by its
            file and name."""
            nonlocal epoch
            epoch += 1
            s.write_rule("10-c.yaml", "rules:\n" + "".join(
                "  - name: rec-%s\n"
                "    match: {signal: c}\n"
                "    run: [%s, %s, %s, '%d']\n" % (r, kdtest.yq(rec), kdtest.yq(out), r, epoch)
                for r in RULES))
        state = s.path("state")
        seed = int(os.environ.get("KEVENT_CRASH_SEED", "0")) or int(time.time())
        rnd = random.Random(seed)
        plan = [("random", None)] * KILLS
        for p in FAULT_POINTS:
            plan += [("fault", (p, i % 2 == 1)) for i in range(FAULT_ROUNDS)]
        rnd.shuffle(plan)
        print("\ncrash loop: %d kills at random moments, %d at fault points, seed %d"
              % (KILLS, len(plan) - KILLS, seed))
        acked, sent = set(), 0
        next_id = [0]
        signals = collections.Counter()
        reached, missed = collections.Counter(), collections.Counter()

        def send_until_dead(d, deadline=None):
            """Batches and single sends until d dies (or deadline passes);
            each acknowledged whole or not at all."""
            nonlocal sent
            k = 0
            while d.proc.poll() is None:
                if deadline and time.monotonic() > deadline:
                    return False
                n = 1 if k % 4 == 3 else BATCH
                k += 1
                ids = list(range(next_id[0], next_id[0] + n))
                next_id[0] += n
                if n == 1:
                    argv = ["send", "general", "/crash/%d" % (ids[0] % OBJECTS), "c",
                            str(ids[0])]
                    inp = None
                else:
                    argv = ["send", "--batch", "-"]
                    inp = "".join("general\t/crash/%d\tc\t%d\n" % (i % OBJECTS, i) for i in ids)
                r = subprocess.run([KEVENTCTL, "--control", s.ctl] + argv, input=inp,
                                   capture_output=True, text=True, timeout=TIMEOUT,
                                   stdin=subprocess.DEVNULL if inp is None else None)
                sent += n
                if r.returncode == 0:
                    acked.update(ids)
                elif d.proc.poll() is None:
                    d.proc.wait(TIMEOUT)  # the connection went with keventd
            return True

        t0 = time.monotonic()
        maxc = ("--max-children", str(MAX_CHILDREN))
        for kind, arg in plan:
            hit = None  # the fault point this keventd died at
            if kind == "random":
                sig = signal.SIGSEGV if rnd.random() < 0.25 else signal.SIGKILL
                # KEVENTD_FAULT=none: a SIGSEGV sent is marked, a real one not
                d = self.restart(state, *maxc, env={"KEVENTD_FAULT": "none"},
                                 before=epoch_rules)
                killer = threading.Timer(rnd.uniform(0.0, 0.25), d.proc.send_signal, (sig,))
                killer.start()
                send_until_dead(d)
                killer.join()
            else:
                point, segv = arg
                sig = signal.SIGSEGV if segv else signal.SIGKILL
                n = rnd.randint(1, 3 * BATCH if point == "accepted" else BATCH)
                d = self.restart(state, *maxc, env={
                    "KEVENTD_FAULT": "%s:%d%s" % (point, n, ":segv" if segv else "")},
                    before=epoch_rules)
                if send_until_dead(d, time.monotonic() + FAULT_PATIENCE):
                    reached[point] += 1
                    hit = point
                else:
                    missed[point] += 1
                    sig = signal.SIGKILL
                    d.proc.send_signal(sig)
            d.proc.wait(TIMEOUT)
            log = d.logtext()
            self.assertEqual(d.proc.returncode, -sig, log)
            # the death this round caused, not a real crash
            if hit:
                self.assertIn(injected_mark(hit, sig), log,
                              "epoch %d: no mark of the fault point (seed %d)" % (epoch, seed))
            elif sig == signal.SIGSEGV:
                self.assertIn(SENT_MARK, log, "epoch %d: a SIGSEGV not sent by the test "
                              "(seed %d)" % (epoch, seed))
            with open(out, "a") as f:
                f.write("killed %d\n" % epoch)
            signals[signal.Signals(sig).name] += 1
            d.kill()
        # the last start: what is left runs
        d = self.restart(state, before=epoch_rules)
        last = epoch
        d.wait_status(lambda st: st["queue"]["pending"] == 0 and st["journal"]["unfinished"] == 0,
                      "the journal empty")
        # and a keventd that is not killed runs each event once, unflagged
        calm = list(range(next_id[0], next_id[0] + 3 * BATCH))
        d.ctl("send", "--batch", "-", check=0, input="".join(
            "general\t/crash/%d\tc\t%d\n" % (i % OBJECTS, i) for i in calm))
        d.wait_status(lambda st: st["queue"]["pending"] == 0 and st["journal"]["unfinished"] == 0
                      and st["events"]["pending"] == 0, "the calm batch handled")
        d.stop_ok(self)
        took = time.monotonic() - t0

        runs = collections.defaultdict(list)  # (event, rule): its runs' flags
        epochs = collections.defaultdict(list)  # (event, rule): its runs' keventds
        ended = {}  # (event, rule, epoch): the run's end written before that keventd died
        killed = set()
        with open(out) as f:
            for line in f:
                w = line.split()
                if w[0] == "killed":
                    killed.add(int(w[1]))
                elif w[0] == "start":
                    runs[(int(w[1]), w[2])].append(w[4])
                    epochs[(int(w[1]), w[2])].append(int(w[3]))
                else:
                    ended[(int(w[1]), w[2], int(w[3]))] = int(w[3]) not in killed
        twice = sorted(k + (e,) for k, es in epochs.items()
                       for e, c in collections.Counter(es).items() if c > 1)
        self.assertEqual(twice, [], "(event, rule, keventd) run twice by one keventd "
                         "(seed %d)" % seed)
        # what a killed keventd started that ran again: its runs in flight
        again = collections.defaultdict(list)
        for k, es in epochs.items():
            for e in es:
                if e < max(es):
                    again[e].append(k)
        self.assertTrue(all(e < last for e in again))
        over = {e: len(v) for e, v in again.items() if len(v) > MAX_CHILDREN}
        self.assertEqual(over, {}, "keventd (epoch): how many of its runs ran again, more than "
                         "it had children (%d), e.g. (event, rule) %r (seed %d)" % (
                             MAX_CHILDREN, sorted(again[min(over)])[:8] if over else None, seed))
        for i in calm:
            for r in RULES:
                self.assertEqual(runs[(i, r)], ["0"], "event %d rule %s, never killed" % (i, r))
        never = sorted((i, r) for i in acked for r in RULES if (i, r) not in runs)
        self.assertEqual(never, [], "acknowledged events never run (seed %d)" % seed)
        for key, flags in runs.items():
            self.assertLessEqual(flags.count("0"), 1,
                                 "event %d rule %s: runs after its first without "
                                 "KEVENT_REDELIVERED=1: %r (seed %d)" % (key + (flags, seed)))
        print("%d kills (%s) in %.0f s; events sent %d, acknowledged %d" % (
            len(plan), ", ".join("%s %d" % kv for kv in sorted(signals.items())), took,
            sent, len(acked)))
        print("fault points reached: %s; missed: %s" % (
            ", ".join("%s %d" % (p, reached[p]) for p in FAULT_POINTS),
            ", ".join("%s %d" % (p, missed[p]) for p in FAULT_POINTS)))
        hist = collections.Counter(len(runs.get((i, r), [])) for i in range(next_id[0])
                                   for r in RULES)
        print("runs per event and rule (all sent): " + ", ".join(
            "%d run%s: %d" % (n, "" if n == 1 else "s", c) for n, c in sorted(hist.items())))
        acked_hist = collections.Counter(len(runs[(i, r)]) for i in acked for r in RULES)
        dup = sum(c for n, c in acked_hist.items() if n > 1)
        print("runs per acknowledged event and rule: " + ", ".join(
            "%d: %d" % (n, c) for n, c in sorted(acked_hist.items()))
            + "; run more than once: %d of %d" % (dup, len(acked) * len(RULES)))
        print("runs again after their keventd's death: %d (at most %d of one keventd, which may "
              "have %d); of them ended before it, not yet written done: %d" % (
                  sum(map(len, again.values())), max(map(len, again.values()), default=0),
                  MAX_CHILDREN, sum(ended.get(k + (e,), False)
                                    for e, v in again.items() for k in v)))
        for p in FAULT_POINTS:
            self.assertGreater(reached[p], 0, "fault point %s never reached" % p)
        self.assertGreaterEqual(len(acked), KILLS)  # the loop did send between the kills

    def test_debounced_runs_survive_kills(self):
        """A debounced rule (quiet time DEB_QUIET s): each round sends three
        events on each of DEB_KEYS objects of its own and kills keventd
        (SIGKILL, one time in four SIGSEGV) at a random moment within the
        quiet time, DEB_ROUNDS times.  Every key's run happens once, after
        the kills, with its last event and KEVENT_REDELIVERED=1: the
        journal kept each waiting run, and each event a later one of its
        key replaced is not run.  The events also match a rule that runs
        at once: it runs for each event at least once, and only its first
        run lacks the flag (a kill may cut one off before its end)."""
        s = self.s
        out = s.path("out", "deb")
        rec = s.script("record.sh", RECORD)
        s.write_rule("10-deb.yaml",
                     "rules:\n"
                     "  - name: deb\n"
                     "    match: {signal: d}\n"
                     "    debounce: %ds\n"
                     "    run: [%s, %s, deb]\n"
                     "  - name: now\n"
                     "    match: {signal: d}\n"
                     "    run: [%s, %s, now]\n"
                     % (DEB_QUIET, kdtest.yq(rec), kdtest.yq(out), kdtest.yq(rec),
                        kdtest.yq(out + ".now")))
        state = s.path("state")
        seed = int(os.environ.get("KEVENT_CRASH_SEED", "0")) or int(time.time())
        rnd = random.Random(seed)
        keys = []
        for rnd_no in range(DEB_ROUNDS):
            sig = signal.SIGSEGV if rnd.random() < 0.25 else signal.SIGKILL
            d = self.restart(state, env={"KEVENTD_FAULT": "none"})  # a SIGSEGV sent, marked
            for k in range(DEB_KEYS):
                obj = "/deb/%d/%d" % (rnd_no, k)
                for e in range(3):
                    r = d.ctl("send", "general", obj, "d", "%s:%d" % (obj, e))
                    self.assertEqual(r.returncode, 0, r.stderr)
                keys.append(obj)
            # within the quiet time of the last event sent
            time.sleep(rnd.uniform(0.0, DEB_KILL_WITHIN))
            self.assertIsNone(d.proc.poll(), d.logtext())
            d.proc.send_signal(sig)
            d.proc.wait(TIMEOUT)
            self.assertEqual(d.proc.returncode, -sig, d.logtext())
            if sig == signal.SIGSEGV:
                self.assertIn(SENT_MARK, d.logtext(), "a SIGSEGV not sent by the test")
            d.kill()
        self.assertFalse(os.path.exists(out), "a run before its quiet time ended")
        d = self.restart(state)
        d.wait_status(lambda st: st["journal"]["unfinished"] == 0
                      and st["queue"]["pending"] == 0 and st["queue"]["running"] == 0,
                      "the kept runs done", timeout=TIMEOUT + DEB_QUIET)
        st = d.status()
        d.stop_ok(self)
        now = collections.defaultdict(list)
        with open(out + ".now") as f:
            for line in f:
                payload, _, redelivered = line.split()
                now[payload].append(redelivered)
        for k in keys:
            for e in range(3):
                flags = now.get("%s:%d" % (k, e), [])
                self.assertGreaterEqual(len(flags), 1, "%s:%d never ran now" % (k, e))
                self.assertLessEqual(flags.count("0"), 1, "%s:%d: %r" % (k, e, flags))
        runs = collections.defaultdict(list)
        with open(out) as f:
            for line in f:
                payload, _, redelivered = line.split()
                obj, e = payload.rsplit(":", 1)
                runs[obj].append((e, redelivered))
        hist = collections.Counter(len(runs.get(k, [])) for k in keys)
        print("\ndebounced keys killed in their quiet time: %d in %d kills (seed %d); runs per "
              "key: %s" % (len(keys), DEB_ROUNDS, seed, ", ".join(
                  "%d: %d" % kv for kv in sorted(hist.items()))))
        for k in keys:
            self.assertEqual(runs.get(k), [("2", "1")], "key %s (seed %d)" % (k, seed))
        # the last event of each key, and those whose "now" a kill cut off
        self.assertGreaterEqual(st["sources"]["socket"]["redelivered"], len(keys))
        kdtest.assert_accounted(self, st)
        print("runs of the rule that runs at once, per event: %s" % ", ".join(
            "%d: %d" % kv for kv in sorted(collections.Counter(
                len(v) for v in now.values()).items())))

    def test_conditions_survive_kills(self):
        """The condition table across COND_KILLS kills (SIGKILL, one time in
        four SIGSEGV) at random moments while one sender flips COND_OBJECTS
        objects' condition up and down.  A send answered "ok" is in the
        journal: after each restart, once its events are all handled, the
        table holds exactly the objects whose last answered send was up
        (a send the kill cut off is sent again first, so that its fate is
        known).  The table file is never found damaged, and every row that
        held across a kill keeps its since.  A rule on the condition events
        logs each run: no condition event is told twice unless the later
        telling says KEVENT_REDELIVERED=1, and no number is given to two
        different events."""
        s = self.s
        told = s.path("told")
        s.write_rule("10-cond.yaml",
                     "conditions:\n"
                     "  - name: flip\n"
                     "    set: {source: socket, signal: up}\n"
                     "    clear: {source: socket, signal: down}\n"
                     "rules:\n"
                     "  - name: tell\n"
                     "    match: {source: condition}\n"
                     "    shell: 'echo \"$KEVENT_SEQNUM $KEVENT_SIGNAL $KEVENT_OBJECT "
                     "${KEVENT_REDELIVERED:-0}\" >> %s'\n" % told)
        state, lib = s.path("state"), s.path("lib")
        seed = int(os.environ.get("KEVENT_CRASH_SEED", "0")) or int(time.time())
        rnd = random.Random(seed)
        want = {}  # object: the signal of its last answered send
        redo = None  # the send a kill cut off: sent again first
        sends = answered = 0
        since = {}  # object: its row's since, as the last keventd left it
        args = ("--lib-dir", lib, "--sources", "socket,condition")
        env = {"KEVENTD_FAULT": "none"}
        t0 = time.monotonic()

        def settle(d):
            d.wait_status(lambda x: x["queue"]["pending"] == 0
                          and x["journal"]["unfinished"] == 0
                          and x["events"]["pending"] == 0, "the journal's events handled")
            r = d.ctl("conditions", "--json", check=0)
            return {row["key"]: row for row in map(json.loads, r.stdout.splitlines())}

        def send(d, obj, flip):
            nonlocal sends, answered
            r = subprocess.run([KEVENTCTL, "--control", s.ctl, "send", "general", obj, flip],
                               capture_output=True, text=True, timeout=TIMEOUT,
                               stdin=subprocess.DEVNULL)
            sends += 1
            if r.returncode != 0:
                return False
            answered += 1
            want[obj] = flip
            if flip == "down":
                since.pop(obj, None)
            return True

        for k in range(COND_KILLS + 1):
            d = self.restart(state, *args, env=env)
            rows = settle(d)
            held = {o for o, sig in want.items() if sig == "up"}
            # a send the kill cut off may be in the journal or not
            maybe = {redo[0]} if redo else set()
            self.assertEqual(set(rows) - maybe, held - maybe,
                             "after kill %d: the table's rows (seed %d)" % (k, seed))
            for o in (held & set(since)) - maybe:
                self.assertEqual(rows[o]["since"], since[o],
                                 "after kill %d: %s's since moved (seed %d)" % (k, o, seed))
            if redo:
                since.pop(redo[0], None)
                self.assertTrue(send(d, *redo), "a send to a settled keventd")
                redo = None
                rows = settle(d)
                self.assertEqual(set(rows), {o for o, sig in want.items() if sig == "up"})
            since = {o: r["since"] for o, r in rows.items()}
            if k == COND_KILLS:
                break
            sig = signal.SIGSEGV if rnd.random() < 0.25 else signal.SIGKILL
            killer = threading.Timer(rnd.uniform(0.05, 0.4), d.proc.send_signal, (sig,))
            killer.start()
            while d.proc.poll() is None:
                obj = "/cond/%d" % rnd.randrange(COND_OBJECTS)
                flip = rnd.choice(("up", "down"))
                if not send(d, obj, flip):
                    redo = (obj, flip)
                    if d.proc.poll() is None:
                        d.proc.wait(TIMEOUT)  # the connection went with keventd
            killer.join()
            d.proc.wait(TIMEOUT)
            self.assertEqual(d.proc.returncode, -sig, d.logtext())
            if sig == signal.SIGSEGV:
                self.assertIn(SENT_MARK, d.logtext(), "a SIGSEGV not sent by the test")
            d.kill()
        log = d.logtext()
        d.stop_ok(self)
        self.assertNotIn("damaged", log)
        self.assertFalse(os.path.exists(os.path.join(lib, "conditions.damaged")))
        # each condition event told once, or again only as redelivered
        first, again = {}, 0
        with open(told) as f:
            for line in f:
                seq, sig, obj, redelivered = line.split()
                if seq in first:
                    self.assertEqual(first[seq], (sig, obj),
                                     "condition event %s numbered twice (seed %d)" % (seq, seed))
                    self.assertEqual(redelivered, "1", "condition event %s %s %s told twice, "
                                     "the second time not as redelivered (seed %d)"
                                     % (seq, sig, obj, seed))
                    again += 1
                first[seq] = (sig, obj)
        self.assertGreater(len(first), COND_KILLS, "the condition events told")
        print("conditions: %d kills in %.0f s; sends %d, answered %d; holding at the end %d "
              "of %d objects; condition events told %d, again as redelivered %d (seed %d)"
              % (COND_KILLS, time.monotonic() - t0, sends, answered, len(rows), COND_OBJECTS,
                 len(first), again, seed))


if __name__ == "__main__":
    kdtest.main()

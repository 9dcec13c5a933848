#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The condition table's figures (keventd.rules(5), CONDITIONS), by hand,
alone on the machine:
  - an event that sets a condition -> the handler start of a rule on the
    condition's `set`, against a plain rule on the same event (each alone,
    in blocks in turns; bench-stamp, CLOCK_MONOTONIC, from the moment the
    script starts `keventctl send`), p50/p99 over ROUNDS events each
    (goal: <= +1 ms p99);
  - intake: EVENTS events through `keventctl send --batch`, matching no
    rule and no condition, with 10,000 conditions declared against none,
    medians of 3 runs each, taken in turns (goal: ratio >= 0.95);
  - a table of EVENTS rows: keventd's resident memory per row, and
    `keventctl conditions --json` (to /dev/null, from the start of the
    keventctl process) against the text listing of the same table, 9
    requests each in turns (goal: --json < 100 ms for 100,000 rows); with
    PEER_BUILD_DIR, another build's keventd and keventctl (the build
    before a change) with a table of its own, in the same turns.
Usage: tests/bench/cond-bench.py BUILD_DIR [ROUNDS] [EVENTS] [PEER_BUILD_DIR]
(defaults 200 and 100,000)."""
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if len(sys.argv) < 2:
    sys.exit(__doc__)
BUILD = os.path.abspath(sys.argv[1])
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
EVENTS = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
PEER = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
os.environ.setdefault("KEVENTD", os.path.join(BUILD, "keventd", "keventd"))
os.environ.setdefault("KEVENTCTL", os.path.join(BUILD, "keventd", "keventctl"))
STAMP = os.path.join(BUILD, "tests", "bench", "bench-stamp")
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kdtest  # noqa: E402


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def ms(v):
    return "p50 %.2f ms, p99 %.2f ms" % (pct(v, 50) / 1e6, pct(v, 99) / 1e6)


def lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [int(x) for x in f.read().split()]


LAT_RULES = """conditions:
  - name: lat
    set: {source: socket, signal: bad}
    clear: {source: socket, signal: good}
rules:
  - name: %s
    match: %s
    run: [%s, %s, "0"]
"""
BLOCK = 25


def latency(s):
    """In blocks of BLOCK events, in turns: the rule on the condition's set
    alone, then a plain rule on the event alone (the condition declared in
    both), so that neither handler waits for the other's spawn."""
    out = {"set": s.path("set.ns"), "plain": s.path("plain.ns")}
    match = {"set": "{source: condition, signal: set}", "plain": "{source: socket, signal: bad}"}
    s.write_rule("50-lat.yaml", LAT_RULES % ("set", match["set"], STAMP, out["set"]))
    d = kdtest.Daemon(s, ["--sources", "socket,condition"]).start()
    sent = {"set": [], "plain": []}
    try:
        i = 0
        while i < 2 * ROUNDS:
            kind = "set" if (i // BLOCK) % 2 == 0 else "plain"
            if i % BLOCK == 0:
                s.write_rule("50-lat.yaml", LAT_RULES % (kind, match[kind], STAMP, out[kind]))
                d.ctl("reload", check=0)
            sent[kind].append(time.monotonic_ns())
            d.ctl("send", "general", "/bench/%d" % i, "bad", check=0)
            while len(lines(out[kind])) < len(sent[kind]):
                time.sleep(0.001)  # polling the handler's file: each event waits for its run
            i += 1
        d.stop()
    finally:
        d.kill()
    got = {k: [t - s0 for t, s0 in zip(lines(out[k]), sent[k])] for k in out}
    print("cond-bench: %d events each way, each setting a condition of its own, in blocks "
          "of %d in turns" % (ROUNDS, BLOCK))
    print("  send -> a plain rule's handler start:        %s" % ms(got["plain"]))
    print("  send -> the condition's set rule's start:    %s" % ms(got["set"]))
    print("  set - plain: p50 %+.2f ms, p99 %+.2f ms   (goal p99 <= +1 ms)" % (
        (pct(got["set"], 50) - pct(got["plain"], 50)) / 1e6,
        (pct(got["set"], 99) - pct(got["plain"], 99)) / 1e6))


def intake(s, conds):
    s.write_rule("50-lat.yaml", "rules: []\n" if not conds else "conditions:\n" + "".join(
        "  - name: c%d\n    set: {source: socket, signal: s%d}\n" % (i, i)
        for i in range(conds)))
    batch = "".join("general\t/bench/%d\tx\n" % (i % 1000) for i in range(EVENTS))
    d = kdtest.Daemon(s, ["--sources", "socket,condition", "--history", "16"]).start()
    try:
        t0 = time.monotonic()
        d.ctl("send", "--batch", "-", input=batch, check=0, timeout=600)
        d.wait_idle(EVENTS, timeout=600)
        took = time.monotonic() - t0
        d.stop()
    finally:
        d.kill()
    return EVENTS / took


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


def use(build):
    """kdtest's keventd and keventctl those of build."""
    kdtest.KEVENTD = os.path.join(build, "keventd", "keventd")
    kdtest.KEVENTCTL = os.path.join(build, "keventd", "keventctl")


def filled(s, build):
    """A keventd of build holding a table of EVENTS rows, and its memory
    per row."""
    use(build)
    rules = os.path.join(s.path("rules-" + os.path.basename(build)))
    os.makedirs(rules, exist_ok=True)
    with open(os.path.join(rules, "50-table.yaml"), "w") as f:
        f.write("conditions:\n  - name: bench\n    set: {source: socket, signal: up}\n")
    d = kdtest.Daemon(s, ["--sources", "socket,condition", "--history", "16"],
                      rules_dirs=[rules]).start()
    before = rss_kb(d.proc.pid)
    batch = "".join("general\t/bench/obj/%d\tup\tValue: %d\n" % (i, i) for i in range(EVENTS))
    d.ctl("send", "--batch", "-", input=batch, check=0, timeout=600)
    d.wait_status(lambda x: x["conditions"]["holding"] == EVENTS and x["events"]["pending"] == 0,
                  "every row set", timeout=600)
    return d, (rss_kb(d.proc.pid) - before) * 1024.0 / EVENTS


def listing(d, build, *args):
    """The time of one keventctl conditions ARGS to /dev/null."""
    use(build)
    t0 = time.monotonic()
    r = subprocess.run([kdtest.KEVENTCTL, "--control", d.ctl_path, "conditions"] + list(args),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit("keventctl conditions %s: %s" % (" ".join(args), r.stderr))
    return took


def table():
    builds = [BUILD] + ([PEER] if PEER else [])
    daemons = {}
    try:
        for b in builds:
            s = kdtest.Scratch()
            d, per_row = filled(s, b)
            d.ctl_path = s.ctl
            daemons[b] = (s, d, per_row)
        got = {(b, k): [] for b in builds for k in ("json", "text")}
        for _ in range(9):
            for b in builds:
                d = daemons[b][1]
                got[(b, "json")].append(listing(d, b, "--json"))
                got[(b, "text")].append(listing(d, b))
        print("  a table of %d rows, 9 requests each in turns (median, min-max):" % EVENTS)
        for b in builds:
            name = "this build" if b == BUILD else "peer %s" % b
            j, t = got[(b, "json")], got[(b, "text")]
            print("    %s: conditions --json %.3f s (%.3f-%.3f), text %.3f s (%.3f-%.3f); "
                  "keventd's memory %.0f bytes a row" % (
                      name, statistics.median(j), min(j), max(j), statistics.median(t), min(t),
                      max(t), daemons[b][2]))
        if PEER:
            print("    --json, this build / peer: %.2f (goal < 100 ms for 100,000 rows)" % (
                statistics.median(got[(BUILD, "json")]) / statistics.median(got[(PEER, "json")])))
    finally:
        for s, d, _ in daemons.values():
            d.kill()
            s.cleanup()
        use(BUILD)


def main():
    table()
    s = kdtest.Scratch()
    try:
        latency(s)
        runs = {0: [], 10000: []}
        for _ in range(3):
            for n in (0, 10000):
                runs[n].append(intake(s, n))
        none, many = statistics.median(runs[0]), statistics.median(runs[10000])
        print("  intake, %d events: %.0f events/s with no condition declared, %.0f with "
              "10,000 (ratio %.2f; goal >= 0.95; medians of 3, in turns)"
              % (EVENTS, none, many, many / none))
    finally:
        s.cleanup()


if __name__ == "__main__":
    main()

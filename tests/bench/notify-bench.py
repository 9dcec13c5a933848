#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The figures of telling people (keventd.yaml(5), NOTIFICATIONS and
ALERTMANAGER), by hand, on this machine:
  - a condition's set -> the notification received by a loopback web hook
    (keventd's queue on disk, libcurl, HTTP POST), p50/p99 over ROUNDS
    sets, beside the raw limit measured in the same run: the same POST
    made by this script to the same receiver;
  - a condition's set -> the alert firing in the real Alertmanager
    (Debian's prometheus-alertmanager, polled every 5 ms), p50/p99 over
    ROUNDS / 5 sets;
  - keventd's RSS with 10,000 rules, without and with the notify: and
    alertmanager: sections (libcurl and TLS loaded), medians of 3 starts.
The time of a set is when `keventctl send` is started (a process, its
connection, keventd journaling the event: all counted).  Goals: notification p99 <= 1 s, Alertmanager <= 2 s.
Usage: tests/bench/notify-bench.py BUILD_DIR [ROUNDS]   (default 200)"""
import http.server
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
if not BUILD:
    sys.exit(__doc__)
os.environ.setdefault("KEVENTD", os.path.join(BUILD, "keventd", "keventd"))
os.environ.setdefault("KEVENTCTL", os.path.join(BUILD, "keventd", "keventctl"))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kdtest  # noqa: E402
from test_alertmanager import Alertmanager, free_port  # noqa: E402

RULES = """conditions:
  - name: bench
    set: {source: socket, signal: up}
    clear: {source: socket, signal: down}
rules:
  - name: tell
    match: {source: condition, signal: set}
    notify: [hook]
"""


class Receiver(http.server.BaseHTTPRequestHandler):
    got = {}  # object: when its POST came (time.time())
    cv = threading.Condition()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        now = time.time()
        try:
            obj = json.loads(body).get("object", "")
        except ValueError:
            obj = ""
        with Receiver.cv:
            Receiver.got.setdefault(obj, now)
            Receiver.cv.notify_all()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def ms(v):
    return "p50 %.1f ms, p99 %.1f ms" % (pct(v, 50) * 1e3, pct(v, 99) * 1e3)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    s = kdtest.Scratch()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    hook = "http://127.0.0.1:%d/hook" % srv.server_address[1]
    am = Alertmanager(s, free_port(), s.mkdir("am")).start()
    conf = s.path("keventd.yaml")
    with open(conf, "w") as f:
        f.write("notify:\n  hook:\n    webhook: %s\nalertmanager:\n  url: %s\n"
                % (hook, am.url))
    s.write_rule("50-bench.yaml", RULES)
    d = kdtest.Daemon(s, ["--config", conf, "--sources", "socket,condition"]).start()
    try:
        note, alert, raw = [], [], []
        for i in range(ROUNDS):
            obj = "/bench/%d" % i
            t0 = time.time()
            d.ctl("send", "general", obj, "up", check=0)
            with Receiver.cv:
                Receiver.cv.wait_for(lambda: obj in Receiver.got, timeout=30)
            note.append(Receiver.got[obj] - t0)
            if i % 5 == 0:
                while not any(a["labels"].get("object") == obj for a in am.alerts()):
                    if time.time() - t0 > 30:
                        raise SystemExit("no alert for %s in 30 s" % obj)
                    time.sleep(0.005)  # polling Alertmanager's API: the figure's resolution
                alert.append(time.time() - t0)
            # the raw limit: the same POST, from here
            t1 = time.time()
            body = json.dumps({"object": obj + "/raw"}).encode()
            urllib.request.urlopen(urllib.request.Request(hook, body, method="POST")).read()
            with Receiver.cv:
                raw.append(Receiver.got[obj + "/raw"] - t1)
        d.stop()
        print("notify-bench: %d sets, this machine, one run" % ROUNDS)
        print("  set -> web hook received:      %s   (goal p99 <= 1000 ms)" % ms(note))
        print("  raw POST to the same receiver:  %s   (ratio p50 %.1fx)"
              % (ms(raw), pct(note, 50) / max(pct(raw, 50), 1e-6)))
        print("  set -> Alertmanager firing:     %s   (goal <= 2000 ms; %d sets)"
              % (ms(alert), len(alert)))
    finally:
        d.kill()
        am.stop()
    # RSS with 10,000 rules, without and with the sections
    s.write_rule("50-bench.yaml", "rules:\n" + "".join(
        "  - name: r%d\n    match: {object: /bench/%d}\n    run: [/bin/true]\n" % (i, i)
        for i in range(10000)))
    plain = s.path("plain.yaml")
    with open(plain, "w") as f:
        f.write("history: 16\n")
    figures = {}
    for name, cfg in (("without", plain), ("with", conf)):
        v = []
        for _ in range(3):
            d = kdtest.Daemon(s, ["--config", cfg]).start()
            v.append(rss_kb(d.proc.pid))
            d.stop()
            d.kill()
        figures[name] = statistics.median(v)
    print("  RSS, 10,000 rules: without notify:/alertmanager: %d kB, with %d kB "
          "(medians of 3 starts)" % (figures["without"], figures["with"]))
    srv.shutdown()
    s.cleanup()


if __name__ == "__main__":
    main()

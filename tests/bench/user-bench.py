#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The user instance's figures (keventd(8), USER INSTANCE), by hand, as
root, alone on the machine:
  - an event the system instance takes as udev's (keventctl test --run
    --source udev: the path of a uevent after its socket) -> the system
    rule's handler start and the user rule's handler start for the same
    event, in the same run (bench-stamp, CLOCK_MONOTONIC, from the moment
    the script starts keventctl), p50/p99 over ROUNDS events
    (goal: user <= system + 10 ms at p99);
  - a user instance stopped (SIGSTOP) while FLOOD events shared with users
    pass: the system instance's RSS before and after (goal: growth
    <= 1 MiB), and the events dropped for it.
Usage: tests/bench/user-bench.py BUILD_DIR [ROUNDS] [FLOOD]
(defaults 300 and 20,000)."""
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if len(sys.argv) < 2:
    sys.exit(__doc__)
BUILD = os.path.abspath(sys.argv[1])
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 300
FLOOD = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
os.environ.setdefault("KEVENTD", os.path.join(BUILD, "keventd", "keventd"))
os.environ.setdefault("KEVENTCTL", os.path.join(BUILD, "keventd", "keventctl"))
STAMP = os.path.join(BUILD, "tests", "bench", "bench-stamp")
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kdtest  # noqa: E402
import test_users  # noqa: E402

RULE = """rules:
  - name: %s
    match: {source: udev, object: "/bench/*"}
    run: [%s, %s, "0"]
  - name: flood
    match: {signal: flood}
    share: users
"""


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [int(x) for x in f.read().split()]


class Harness:
    """What test_users.User needs of a test."""

    def __init__(self, s):
        self.s = s
        self.users_socket = s.path("users")

    def assertEqual(self, a, b, msg=None):
        if a != b:
            raise AssertionError("%r != %r: %s" % (a, b, msg))


def main():
    import grp
    import pwd
    s = kdtest.Scratch()
    os.chmod(s.path(), 0o755)
    h = Harness(s)
    u = test_users.User(h, pwd.getpwnam("nobody").pw_uid, grp.getgrnam("nogroup").gr_gid, "a")
    sys_out, user_out = s.path("system.ns"), os.path.join(u.home, "user.ns")
    s.write_rule("10-system.yaml", RULE % ("system", STAMP, sys_out))
    d = kdtest.Daemon(s, ["--sources", "socket,condition", "--history", "16"]).start()
    try:
        p = s.write_rule("10-mine.yaml", "rules:\n  - name: user\n"
                         "    match: {source: udev, object: \"/bench/*\"}\n"
                         "    run: [%s, %s, \"0\"]\n" % (STAMP, user_out), dir=u.rules)
        u.own(p)
        u.start()
        d.wait_status(lambda st: st["users"]["instances"] == 1, "the user instance")
        sent, sys_ns, user_ns = [], [], []
        for i in range(ROUNDS):
            sent.append(time.monotonic_ns())
            d.ctl("test", "--run", "--source", "udev", "hotplug", "/bench/%d" % i, "change",
                  check=0)
            while len(lines(sys_out)) <= i or len(lines(user_out)) <= i:
                time.sleep(0.0005)  # polling the handlers' files: one event at a time
        sys_ns = [t - s0 for t, s0 in zip(lines(sys_out), sent)]
        user_ns = [t - s0 for t, s0 in zip(lines(user_out), sent)]
        print("user-bench: %d events, each handled by a system rule and forwarded to one "
              "user instance (nobody) whose rule runs too" % ROUNDS)
        for what, v in (("the system rule's handler start", sys_ns),
                        ("the user rule's handler start", user_ns)):
            print("  send -> %-32s p50 %6.2f ms, p99 %6.2f ms"
                  % (what + ":", pct(v, 50) / 1e6, pct(v, 99) / 1e6))
        diff = [b - a for a, b in zip(sys_ns, user_ns)]
        print("  user - system, per event: p50 %+.2f ms, p99 %+.2f ms   (goal p99 <= +10 ms)"
              % (pct(diff, 50) / 1e6, pct(diff, 99) / 1e6))

        # a user instance that stops reading
        rss0 = test_users.rss(d.proc.pid)
        u.proc.send_signal(signal.SIGSTOP)
        batch = "".join("general\t/flood/%d\tflood\n" % (i % 1000) for i in range(FLOOD))
        before = d.status()["events"]["received"]
        d.ctl("send", "--batch", "-", input=batch, check=0, timeout=600)
        st = d.wait_idle(before + FLOOD, timeout=600)
        rss1 = test_users.rss(d.proc.pid)
        users = st["users"]
        print("  a stopped user instance, %d shared events: system RSS %d -> %d kB (%+d kB; "
              "goal <= +1024), dropped for it: %s" % (FLOOD, rss0, rss1, rss1 - rss0,
                                                     users.get("dropped")))
        u.proc.send_signal(signal.SIGCONT)
        u.stop()
        d.stop()
    finally:
        if u.proc and u.proc.poll() is None:
            u.proc.kill()
        d.kill()
        s.cleanup()


if __name__ == "__main__":
    main()

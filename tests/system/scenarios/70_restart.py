# SPDX-License-Identifier: GPL-2.0-or-later
"""systemctl restart keventd while events flow: the old keventd stops
cleanly, keeping the events it had queued in its journal, the new one
comes up and handles them again first, so every event keventctl send had
delivered runs its handler exactly once, and those kept carry
KEVENT_REDELIVERED=1 (keventd(8), The journal; SIGNALS).

The handlers wait on a gate the scenario holds (flock on
/run/systest/flow.gate, released through a FIFO) until the old keventd
has begun to stop, so events are always queued at the stop: at least one
is kept, and every kept one must run again flagged."""
import re

from systest import Fail

KERNELS = ("6.1", "6.12")
MAX = 1000


def count(vm):
    return int(vm.sh("cat /run/systest/flow.sent 2>/dev/null | wc -l"))


def run(vm):
    vm.sh("rm -rf /run/systest/events /run/systest/flow.*; mkdir -p /run/systest")
    pid0 = vm.show("keventd.service", "MainPID")["MainPID"]
    cur = vm.cursor()
    # the gate: held by flock until a line is written to the FIFO
    vm.sh("mkfifo /run/systest/flow.fifo && "
          "setsid flock /run/systest/flow.gate cat /run/systest/flow.fifo "
          "</dev/null >/dev/null 2>&1 &")
    vm.wait("flock -n -s /run/systest/flow.gate true; [ $? -eq 1 ]", 10, "the gate to be held")
    # the sender, until told to stop: each event keventctl send delivered
    # is noted, each one it could not deliver (keventd restarting) too
    vm.sh("setsid bash -c 'for i in $(seq %d); do [ -e /run/systest/flow.stop ] && break; "
          "if keventctl send general /org/kernel/test/flow e$i \"N: $i\" >/dev/null 2>&1; "
          "then echo $i >> /run/systest/flow.sent; else echo $i >> /run/systest/flow.refused; fi; "
          "done; touch /run/systest/flow.done' </dev/null >/dev/null 2>&1 &" % MAX)
    # more events than handlers may run at once: the rest wait in the queue
    vm.wait("[ \"$(wc -l < /run/systest/flow.sent)\" -ge 40 ]", 60, "40 events sent")
    vm.sh("systemctl restart --no-block keventd", 30, "systemctl restart keventd")
    vm.wait_journal(cur, "stopping; handlers running", 60, "the old keventd to begin its stop",
                    "_PID=%s" % pid0)
    vm.sh("echo open > /run/systest/flow.fifo", 10, "opening the gate")
    vm.wait("[ \"$(systemctl show -p MainPID --value keventd)\" != %s ] && "
            "systemctl is-active -q keventd" % pid0, 120, "the new keventd to be active")
    after = count(vm)
    vm.wait("[ \"$(wc -l < /run/systest/flow.sent)\" -ge %d ]" % (after + 5), 60,
            "5 more events sent to the new keventd")
    vm.sh("touch /run/systest/flow.stop")
    vm.wait("test -e /run/systest/flow.done", 60, "the sender to stop")
    p = vm.show("keventd.service", "MainPID", "ActiveState", "SubState")
    if p["MainPID"] == pid0 or (p["ActiveState"], p["SubState"]) != ("active", "running"):
        raise Fail("expected a new keventd, active (running), got %r (old pid %s)" % (p, pid0))
    vm.wait_journal(cur, "keventd.service: Deactivated successfully", 10,
                    "the old keventd to stop cleanly (exit 0)", "_PID=1")

    # the old keventd's account of what it kept at the stop, and the new
    # one's of what it handled again
    stop = vm.wait_journal(cur, "stopping; handlers running", 10,
                           "the old keventd's stopping line", "_PID=%s" % pid0)
    m = re.search(r"kept in the journal for the next start: (\d+) \(socket (\d+)\)",
                  stop["MESSAGE"])
    kept = int(m.group(2)) if m else 0
    if "dropped" in stop["MESSAGE"]:
        raise Fail("expected no event dropped at the stop, got %r" % stop["MESSAGE"])
    named = set()
    for e in vm.journal(cur, "_PID=%s" % pid0):
        n = re.match(r"not run: socket seq \d+: general /org/kernel/test/flow e(\d+) .*"
                     r"kept in the journal", e.get("MESSAGE") or "")
        if n:
            named.add(int(n.group(1)))
    if kept < 1:
        raise Fail("expected events queued behind the gate to be kept at the stop, got %r"
                   % stop["MESSAGE"])
    if kept:
        vm.wait_journal(cur, "journal: %d unfinished events handled again" % kept, 30,
                        "the new keventd to handle the kept events again")

    sent = sorted(int(x) for x in vm.sh("cat /run/systest/flow.sent").split())
    refused = vm.sh("cat /run/systest/flow.refused 2>/dev/null | wc -l").strip()
    # each handler run writes its file once it has run: wait for the last
    vm.wait("[ \"$(ls /run/systest/events | grep -c '^systest-flow-')\" -ge %d ]" % len(sent),
            60, "a handler run for each of the %d events sent" % len(sent))
    runs = vm.events("systest-flow-*").values()
    got = sorted(int(e["KEVENT_N"]) for e in runs)
    if got != sent:
        raise Fail("expected exactly one handler run for each event sent: sent %r, handled %r"
                   % (sent, got))
    again = sorted(int(e["KEVENT_N"]) for e in runs if e.get("KEVENT_REDELIVERED") == "1")
    if len(again) != kept or not named <= set(again) or len(named) != min(kept, 10):
        raise Fail("expected the %d kept events (the log names %r) to run flagged "
                   "KEVENT_REDELIVERED=1, got %r" % (kept, sorted(named), again))
    vm.figure("restart while events flow", "%d events delivered: each ran once, %d of them "
              "kept in the journal at the stop and run by the new keventd, %s refused while "
              "keventd restarted" % (len(sent), kept, refused))

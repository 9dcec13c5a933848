# SPDX-License-Identifier: GPL-2.0-or-later
"""systemctl restart keventd while events flow: the old keventd stops
cleanly, the new one comes up, and every event keventctl send had
delivered either runs its handler or is one of those the old keventd
logged as dropped, not run (keventd(8), SIGNALS: on SIGTERM the running
handlers finish and the queued events are dropped and logged)."""
import re

from systest import Fail

KERNELS = ("6.1",)
MAX = 1000


def count(vm):
    return int(vm.sh("cat /run/systest/flow.sent 2>/dev/null | wc -l"))


def run(vm):
    vm.sh("rm -rf /run/systest/events /run/systest/flow.*; mkdir -p /run/systest")
    pid0 = vm.show("keventd.service", "MainPID")["MainPID"]
    cur = vm.cursor()
    # the sender, until told to stop: each event keventctl send delivered
    # is noted, each one it could not deliver (keventd restarting) too
    vm.sh("setsid bash -c 'for i in $(seq %d); do [ -e /run/systest/flow.stop ] && break; "
          "if keventctl send general /org/kernel/test/flow e$i \"N: $i\" >/dev/null 2>&1; "
          "then echo $i >> /run/systest/flow.sent; else echo $i >> /run/systest/flow.refused; fi; "
          "done; touch /run/systest/flow.done' </dev/null >/dev/null 2>&1 &" % MAX)
    vm.wait("[ \"$(wc -l < /run/systest/flow.sent)\" -ge 5 ]", 60, "5 events sent")
    vm.sh("systemctl restart keventd", 120, "systemctl restart keventd")
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

    # the old keventd's account of what it dropped at the stop: a count,
    # and the oldest ones by name ("socket seq N: general OBJECT eI (rule ...)")
    stop = vm.wait_journal(cur, "stopping; handlers running", 10,
                           "the old keventd's stopping line", "_PID=%s" % pid0)
    m = re.search(r"dropped: (\d+) \(socket (\d+)\)", stop["MESSAGE"])
    dropped = int(m.group(2)) if m else 0
    named = set()
    for e in vm.journal(cur, "_PID=%s" % pid0):
        n = re.match(r"not run: socket seq \d+: general /org/kernel/test/flow e(\d+) ",
                     e.get("MESSAGE") or "")
        if n:
            named.add(int(n.group(1)))

    sent = sorted(int(x) for x in vm.sh("cat /run/systest/flow.sent").split())
    refused = vm.sh("cat /run/systest/flow.refused 2>/dev/null | wc -l").strip()
    # each handler run writes its file once it has run: wait for the last
    vm.wait("[ \"$(ls /run/systest/events | grep -c '^systest-flow-')\" -ge %d ]"
            % (len(sent) - dropped), 60,
            "a handler run for each of the %d events sent and not dropped" % (len(sent) - dropped))
    got = sorted(int(e["KEVENT_N"]) for e in vm.events("systest-flow-*").values())
    if len(set(got)) != len(got) or not set(got) <= set(sent):
        raise Fail("expected at most one handler run for each event sent: sent %r, handled %r"
                   % (sent, got))
    if len(got) + dropped != len(sent):
        raise Fail("expected the %d events sent = %d handled + %d logged as dropped; not handled:"
                   " %r" % (len(sent), len(got), dropped, sorted(set(sent) - set(got))))
    if named & set(got) or len(named) != min(dropped, 10):
        raise Fail("expected the dropped events the log names (%r) to be %d of those not"
                   " handled (%r)" % (sorted(named), min(dropped, 10),
                                      sorted(set(sent) - set(got))))
    vm.figure("restart while events flow", "%d events delivered: %d handled, %d dropped at the"
              " stop (logged), %s refused while keventd restarted"
              % (len(sent), len(got), dropped, refused))

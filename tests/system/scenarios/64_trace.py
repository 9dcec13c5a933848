# SPDX-License-Identifier: GPL-2.0-or-later
"""The trace source on a booted Debian: keventd.yaml's `trace:` names the
kernel's oom/mark_victim tracepoint, and a unit over its MemoryMax= is
marked as the OOM killer's victim: one event, object
/org/kernel/trace/oom, signal mark_victim, with the victim's pid (and,
from 6.8 on, where the tracepoint carries it, its comm), through no
module and no BPF (docs/trace-recipes.md, "A program run on an OOM
kill")."""
import time

from systest import Fail

KERNELS = ("6.1", "6.12")
UNIT = "trace-hog"
RULES = """\
rules:
  - name: systest-trace-oom
    match: {object: /org/kernel/trace/oom, signal: mark_victim}
    run: [/usr/local/lib/systest/record.sh]
"""


def run(vm):
    vm.sh("rm -rf /run/systest/events && mkdir -p /etc/keventd && "
          "printf 'trace:\\n  - event: oom/mark_victim\\n' >/etc/keventd/keventd.yaml && "
          "keventctl verify --config /etc/keventd/keventd.yaml && "
          "cat > /etc/keventd/rules.d/64-systest-trace.yaml <<'EOF'\n%sEOF\n"
          "systemctl restart keventd" % RULES)
    try:
        t0 = time.monotonic()
        vm.sh("systemd-run -p MemoryMax=32M --unit %s "
              "dd if=/dev/zero of=/dev/null bs=256M count=1" % UNIT)
        evs = vm.wait_event_file("systest-trace-oom-*", 30, "a mark_victim event")
        vm.figure("systemd-run -> mark_victim recorded (s, %s)" % vm.kver,
                  round(time.monotonic() - t0, 2))
        vm.wait("systemctl show -p Result --value %s.service | grep -qx oom-kill" % UNIT, 30,
                "systemd to see the unit's end as oom-kill")
        pid = vm.show(UNIT + ".service", "ExecMainPID")["ExecMainPID"]
        if len(evs) != 1:
            raise Fail("expected one mark_victim event for one kill, got %r" % evs)
        e = list(evs.values())[0]
        got = {k: e.get("KEVENT_" + k) for k in ("SOURCE", "TYPE", "OBJECT", "SIGNAL", "PID")}
        want = {"SOURCE": "trace", "TYPE": "general", "OBJECT": "/org/kernel/trace/oom",
                "SIGNAL": "mark_victim", "PID": pid}
        if got != want:
            raise Fail("expected %r, got %r (event %r)" % (want, got, e))
        comm = vm.sh("grep -c 'field:.*comm' /sys/kernel/tracing/events/oom/mark_victim/format"
                     " || true").strip()
        if comm != "0" and e.get("KEVENT_COMM") != "dd":
            raise Fail("expected the victim's comm dd where the tracepoint has it, got %r" % e)
    finally:
        vm.run("rm -f /etc/keventd/rules.d/64-systest-trace.yaml /etc/keventd/keventd.yaml; "
               "systemctl restart keventd; systemctl stop %s; systemctl reset-failed %s"
               % (UNIT, UNIT))

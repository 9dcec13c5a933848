# SPDX-License-Identifier: GPL-2.0-or-later
"""transient: true (keventd.rules(5), Transient units): the handler runs as
a transient systemd service that keventd starts over D-Bus; the object's
later events are handled while it runs, and keventd logs the unit's end as
a run's record; a unit over its MemoryMax is killed and counted; a unit
systemd refuses is a failed run, logged with systemd's D-Bus error."""
import re

from systest import Fail

KERNELS = ("6.1",)
OBJ = "/org/kernel/test/transient"


def send_wait(vm, signal, want_rc):
    rc, out, err = vm.run("keventctl send --wait --timeout 60 general %s %s" % (OBJ, signal), 90)
    if rc != want_rc:
        raise Fail("expected keventctl send --wait ... %s to exit %d, got %d: %r %r"
                   % (signal, want_rc, rc, out, err))
    m = re.search(r"^event seqnum (\d+)$", out, re.M)
    if not m:
        raise Fail("expected 'event seqnum N' from send --wait, got %r" % out)
    return m.group(1), out


def unit_of(out, rule):
    """The unit send --wait names: keventd-RULE-INSTANCE-RUN.service."""
    m = re.search(r"%s: running as (keventd-%s-[0-9a-f]{16}-\d+\.service)$" % (rule, rule), out,
                  re.M)
    if not m:
        raise Fail("expected send --wait to say the rule runs as its unit, got %r" % out)
    return m.group(1)


def run(vm):
    st0 = vm.keventctl_status()["runs"]
    cur = vm.cursor()

    # a unit that runs 20 s; send --wait is over once it has started
    seq, out = send_wait(vm, "long", 0)
    unit = unit_of(out, "systest_transient_long")
    show = vm.show(unit, "ActiveState", "Description", "RuntimeMaxUSec", "ExecStart")
    if show.get("ActiveState") != "active":
        raise Fail("expected %s active, got %r" % (unit, show))
    if show.get("Description") != "keventd rule systest_transient_long, seq %s" % seq or \
            show.get("RuntimeMaxUSec") != "3min" or "argv[]=sleep 60" not in show.get("ExecStart", ""):
        raise Fail("expected the unit's properties from the rule, got %r" % show)

    # ten later events of the same object, each handled while the unit runs
    vm.sh("for i in $(seq 10); do keventctl send general %s next; done" % OBJ)
    vm.wait("[ $(ls /run/systest/events/ | grep -c '^systest-transient-next-socket-') = 10 ]",
            40, "the handlers of the 10 later events")
    still = vm.show(unit, "ActiveState").get("ActiveState")
    if still != "active":
        raise Fail("expected %s still active after the 10 later events, got %r" % (unit, still))
    ev = vm.sh("keventctl events")
    if "systest_transient_long: running as %s" % unit not in ev:
        raise Fail("expected keventctl events to show the run as its unit, got:\n%s" % ev)

    # its end, logged by keventd as a run's record
    e = vm.wait_journal(cur, "rule systest_transient_long[%s]: exited 0 after" % unit, 90,
                        "keventd's record of the unit's end")
    if e.get("KEVENT_UNIT") != unit or e.get("KEVENT_EXIT") != "0" or \
            e.get("KEVENT_SEQNUM") != seq:
        raise Fail("expected KEVENT_UNIT, KEVENT_EXIT, KEVENT_SEQNUM in the record, got %r" % e)
    ms = int(e.get("KEVENT_DURATION_MS", "0"))
    if not 59000 <= ms <= 120000:
        raise Fail("expected the unit's run time about 60 s, got %d ms" % ms)
    ev = vm.sh("keventctl events")
    if not re.search(r"systest_transient_long: exited 0 after \d+ ms \(%s\)" % re.escape(unit), ev):
        raise Fail("expected keventctl events to show the unit's end, got:\n%s" % ev)
    vm.figure("transient", "%s ran %d ms while 10 later events were handled" % (unit, ms))

    # MemoryMax: 20M, 100 MB wanted: killed by systemd's OOM handling, counted
    seq, out = send_wait(vm, "oom", 0)
    unit = unit_of(out, "systest_transient_oom")
    vm.wait_journal(cur, "rule systest_transient_oom[%s]: the unit's result is oom-kill" % unit,
                    60, "keventd's line about the unit's OOM kill")
    rec = vm.wait_journal(cur, "rule systest_transient_oom[%s]: " % unit, 5,
                          "keventd's record of the OOM-killed unit's end", "KEVENT_UNIT=" + unit)
    # the shell the kernel killed, or the unit systemd stopped on the kill
    oom_failed = not re.search(r"\]: exited 0 after ", rec.get("MESSAGE", ""))

    # a property value only systemd checks: refused, a failed run
    seq, out = send_wait(vm, "refused", 1)
    e = vm.wait_journal(cur, "systemd refused the unit: org.freedesktop.DBus.Error.InvalidArgs",
                        20, "keventd's line with systemd's D-Bus error")
    if e.get("KEVENT_SEQNUM") != seq:
        raise Fail("expected the refusal's record for seqnum %s, got %r" % (seq, e))

    runs = vm.keventctl_status()["runs"]
    if runs["transient"] - st0["transient"] != 2:
        raise Fail("expected 2 transient runs started (the refused one is not), got %d"
                   % (runs["transient"] - st0["transient"]))
    if runs["oom_kills"] - st0["oom_kills"] != 1:
        raise Fail("expected one oom kill counted, got %d" % (runs["oom_kills"] - st0["oom_kills"]))
    # the refused unit is a failure, and so is the OOM-killed one if it did not exit 0
    want = 1 + oom_failed
    if runs["failures"] - st0["failures"] != want:
        raise Fail("expected %d failures (refused, OOM: %s), got %d"
                   % (want, rec.get("MESSAGE"), runs["failures"] - st0["failures"]))
    vm.figure("transient failures", "oom-kill and a refused unit (%s) counted" % e.get("MESSAGE"))

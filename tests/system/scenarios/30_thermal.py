# SPDX-License-Identifier: GPL-2.0-or-later
"""The shipped CPU-overheat rule fires from a real ACPI thermal zone (the
SSDT of tests/kernel/thermal) crossing its trip point: its logger line is
in the journal at warning priority, and back to normal at notice."""
from systest import Fail

KERNELS = ("6.1",)
Z = "/sys/class/thermal/thermal_zone0"


def set_temp(vm, celsius):
    """CMOS byte 0x7D (index port 0x70 = 112, data port 0x71 = 113) is the
    zone's temperature in degrees Celsius (tests/kernel/thermal/tz.asl).
    Index and value go in one write(); the kernel's own CMOS reads (the
    RTC's, the zone's polling) move the index too, and one landing between
    the two bytes sends the value elsewhere: so it is written again until
    the zone reads it."""
    vm.wait("printf \"\\175\\\\$(printf %%o %d)\" | dd of=/dev/port bs=2 seek=56 count=1 "
            "conv=notrunc 2>/dev/null; grep -qx %d000 %s/temp" % (celsius, celsius, Z), 20,
            "the zone to read %d C" % celsius)


def logged(vm, cur, text, priority):
    e = vm.wait_journal(cur, text, 30, "the cpu-overheat rule's logger line",
                        "SYSLOG_IDENTIFIER=keventd")
    if e.get("PRIORITY") != priority or e.get("SYSLOG_FACILITY") != "3":
        raise Fail("expected %r at daemon.%s, got priority %s facility %s"
                   % (text, priority, e.get("PRIORITY"), e.get("SYSLOG_FACILITY")))
    # logger was the handler keventd ran: keventd logged that run, same pid
    rule = "cpu-overheat" if priority == "4" else "cpu-temperature-normal"
    vm.wait_journal(cur, "rule %s[%s]: exited 0" % (rule, e.get("_PID")), 20,
                    "keventd to log the run of %s that wrote it" % rule,
                    "_SYSTEMD_UNIT=keventd.service")
    return e["MESSAGE"]


def run(vm):
    if vm.sh("cat %s/type" % Z).strip() != "acpitz":
        raise Fail("expected the SSDT's acpitz thermal zone at %s" % Z)
    set_temp(vm, 40)
    vm.sh("rm -rf /run/systest/events")
    cur = vm.cursor()
    set_temp(vm, 95)
    msg = logged(vm, cur, "CPU temperature high:", "4")
    if "zone=0" not in msg or "temperature=95000" not in msg:
        raise Fail("expected zone=0 temperature=95000 in %r" % msg)
    ev = vm.wait_event_file("systest-thermal-thermal-*", 20, "the admin's rule to see it too")
    env = next(iter(ev.values()))
    if (env.get("KEVENT_SIGNAL"), env.get("KEVENT_TRIPTYPE"), env.get("KEVENT_ZONETYPE")) != \
            ("high", "hot", "acpitz"):
        raise Fail("expected a high event of the acpitz zone's hot trip, got %r" % env)
    cur = vm.cursor()
    set_temp(vm, 40)
    msg = logged(vm, cur, "CPU temperature back to normal:", "5")
    if "temperature=40000" not in msg:
        raise Fail("expected temperature=40000 in %r" % msg)

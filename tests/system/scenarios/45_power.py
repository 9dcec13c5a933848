# SPDX-License-Identifier: GPL-2.0-or-later
"""What acpid's users script, on the booted system: the host presses the
ACPI power button (QMP system_powerdown) and keventd hears it twice, as
the acpi source's event (with acpid's own line) and as the input source's
power key, each running its shipped rule; a suspend (to idle, with
pm_test) runs the shipped sleep and wake rules from kevent.ko's pm bridge.
logind, which owns the power key, is held off by an inhibitor lock, as an
admin who lets keventd handle the key would configure it."""
import re

from systest import Fail

KERNELS = ("6.1", "6.12")


def logged(vm, cur, text, what, priority):
    e = vm.wait_journal(cur, text, 30, what, "SYSLOG_IDENTIFIER=keventd")
    if e.get("PRIORITY") != priority:
        raise Fail("expected %r at priority %s, got %s" % (text, priority, e.get("PRIORITY")))
    return e["MESSAGE"]


def run(vm):
    # the input source has the ACPI power button's input device open
    vm.wait("grep -qx 'Power Button' /sys/class/input/event*/device/name", 20,
            "the ACPI power button's input device")
    vm.sh("setsid systemd-inhibit --what=handle-power-key --who=systest --why='keventd handles it'"
          " sleep 300 </dev/null >/dev/null 2>&1 &")
    vm.wait("systemd-inhibit --list --no-pager | grep -q handle-power-key", 20,
            "the inhibitor lock on the power key")
    cur = vm.cursor()
    vm.qmp.cmd("system_powerdown")
    msg = logged(vm, cur, "power button pressed (", "the shipped power-button rule (acpi)", "5")
    # acpid's line: class, bus id (LNXPWRBN:00 for the fixed-feature button
    # QEMU has), event 0x80, data
    if not re.fullmatch(r"power button pressed \(button/power \S+ 00000080 00000001\)", msg):
        raise Fail("expected acpid's line for the power button in %r" % msg)
    msg = logged(vm, cur, "power key pressed (", "the shipped power-key rule (input)", "5")
    if "Power Button" not in msg or "/dev/input/event" not in msg:
        raise Fail("expected the input device's name and node in %r" % msg)
    st = vm.sh("systemctl is-system-running || true").strip()
    if st not in ("running", "degraded"):
        raise Fail("expected the system still up after the press, got %r" % st)
    vm.figure("power button", "acpi and input events, both rules ran; system %s" % st)

    # a suspend to idle that the kernel's pm_test turns back at the devices
    if vm.run("test -w /sys/power/pm_test && grep -qw freeze /sys/power/state")[0] != 0:
        raise Fail("expected /sys/power/pm_test and the freeze state on this kernel")
    cur = vm.cursor()
    vm.sh("echo 1 > /sys/module/suspend/parameters/pm_test_delay || true; "
          "echo devices > /sys/power/pm_test; echo freeze > /sys/power/state; "
          "echo none > /sys/power/pm_test", 120, "a pm_test suspend to idle")
    logged(vm, cur, "system going to sleep: suspend", "the shipped sleep rule", "6")
    logged(vm, cur, "system woke up: resume", "the shipped wake rule", "6")
    vm.figure("suspend (pm_test devices)", "sleep and wake rules ran from kevent.ko's pm bridge")

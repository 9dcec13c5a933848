# SPDX-License-Identifier: GPL-2.0-or-later
"""What keventd could not see, it reports when it can (keventd(8), The
journal; docs/sources.md, "Devices that came and went unseen"):

- a restart with nothing changed reports nothing;
- a udev overrun made on purpose (a 4 KiB receive buffer, keventd stopped
  while udevd sends 200 uevents): the loop device added meanwhile, whose
  uevent the full buffer dropped, is reported "add" with
  KEVENT_SYNTHETIC=1, and counted in resynced;
- a thermal zone that was high when keventd stopped and cooled while it
  was down gets its "normal" at the next start, flagged the same way."""
import importlib.util
import os

from systest import Fail

KERNELS = ("6.1",)
LOOP = 123  # a loop device no one else makes
DROPIN = "/run/systemd/system/keventd.service.d/74-resync.conf"
RULES = "/etc/keventd/rules.d/74-resync.yaml"
# LOOP_CTL_ADD / LOOP_CTL_REMOVE on /dev/loop-control, with perl (in every
# Debian system) for the ioctl
LOOPCTL = ("perl -e 'open(my $f, \"+<\", \"/dev/loop-control\") or die $!; "
           "defined(ioctl($f, %s, %d)) or die $!'")


def thermal():
    """30_thermal's helpers: the zone and how its temperature is set."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "30_thermal.py")
    spec = importlib.util.spec_from_file_location("scenario_30_thermal_helpers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def loop_added_in_an_overrun(vm):
    cur = vm.cursor()
    vm.sh("mkdir -p %s && printf '[Service]\\nEnvironment=KEVENTD_UDEV_RCVBUF=4096\\n' > %s && "
          "systemctl daemon-reload && systemctl restart keventd"
          % (DROPIN.rsplit("/", 1)[0], DROPIN), 120, "keventd with a 4 KiB udev buffer")
    # nothing came or went over that restart: the boot's uevents of
    # modules, drivers and subsystems, which name no device, are not
    # taken for devices that went away
    pid = vm.show("keventd.service", "MainPID")["MainPID"]
    vm.wait_journal(cur, " running: ", 20, "the new keventd's start-up line", "_PID=%s" % pid)
    e = [e.get("MESSAGE") for e in vm.journal(cur, "_PID=%s" % pid)
         if "devices changed while not watched" in (e.get("MESSAGE") or "")]
    if e:
        raise Fail("expected no device reported changed over a restart, got %r" % e)
    vm.sh("cat > %s <<'EOF'\nrules:\n  - name: systest-resync\n    match:\n"
          "      source: udev\n      object: /org/kernel/devices/virtual/block/loop%d\n"
          "    run: [/usr/local/lib/systest/record.sh]\nEOF" % (RULES, LOOP))
    vm.wait("keventctl status --json | grep -q '\"name\":\"systest-resync\"'", 30,
            "the rule file to be loaded")
    vm.sh("rm -rf /run/systest/events")
    before = vm.keventctl_status()["sources"]["udev"]
    # keventd stopped: udevd's uevents fill its socket, then the loop
    # device's add finds it full and is dropped there
    vm.sh("modprobe loop && kill -STOP %s && for i in $(seq 200); do echo change > "
          "/sys/devices/virtual/block/loop0/uevent; done && udevadm settle -t 60 && "
          "%s && udevadm settle -t 60; kill -CONT %s"
          % (pid, LOOPCTL % ("0x4C80", LOOP), pid), 120, "the overrun and the loop device")
    ev = vm.wait_event_file("systest-resync-udev-*", 60,
                            "the loop device's add, reported after the overrun")
    if len(ev) != 1:
        raise Fail("expected one event of loop%d, got %r" % (LOOP, ev))
    env = next(iter(ev.values()))
    want = {"KEVENT_SIGNAL": "add", "KEVENT_SYNTHETIC": "1",
            "DEVPATH": "/devices/virtual/block/loop%d" % LOOP, "SUBSYSTEM": "block"}
    bad = {k: (v, env.get(k)) for k, v in want.items() if env.get(k) != v}
    if bad:
        raise Fail("expected in the loop device's event (var: (want, got)) %r\n%r" % (bad, env))
    after = vm.keventctl_status()["sources"]["udev"]
    if after["overruns"] <= before["overruns"] or after["resynced"] <= before["resynced"]:
        raise Fail("expected overruns and resynced to grow, got %r then %r" % (before, after))
    vm.figure("udev overrun: uevents overrun / devices resynced",
              "%d / %d" % (after["overruns"] - before["overruns"],
                           after["resynced"] - before["resynced"]))


def zone_cooled_while_stopped(vm):
    t = thermal()
    t.set_temp(vm, 40)
    vm.sh("rm -rf /run/systest/events")
    t.set_temp(vm, 95)
    ev = vm.wait_event_file("systest-thermal-thermal-*", 30, "the zone's high")
    if [e.get("KEVENT_SIGNAL") for e in ev.values()] != ["high"]:
        raise Fail("expected one high event, got %r" % ev)
    vm.sh("systemctl stop keventd", 120, "systemctl stop keventd")
    vm.sh("rm -rf /run/systest/events")
    t.set_temp(vm, 40)
    vm.sh("systemctl start keventd", 120, "systemctl start keventd")
    ev = vm.wait_event_file("systest-thermal-thermal-*", 30,
                            "the normal of the zone that cooled while keventd was stopped")
    got = [(e.get("KEVENT_SIGNAL"), e.get("KEVENT_SYNTHETIC")) for e in ev.values()]
    if got != [("normal", "1")]:
        raise Fail("expected one normal with KEVENT_SYNTHETIC=1, got %r" % ev)
    if vm.keventctl_status()["sources"]["thermal"]["resynced"] != 1:
        raise Fail("expected the thermal source's resynced at 1: %r"
                   % vm.keventctl_status()["sources"]["thermal"])


def run(vm):
    try:
        loop_added_in_an_overrun(vm)
    finally:
        vm.run("%s; rm -f %s %s; systemctl daemon-reload; systemctl restart keventd"
               % (LOOPCTL % ("0x4C81", LOOP), RULES, DROPIN), 120)
    zone_cooled_while_stopped(vm)

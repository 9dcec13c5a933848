# SPDX-License-Identifier: GPL-2.0-or-later
"""systemctl restart keventd amid a storm of 2,000 uevents and three ACPI
power-button presses: at SIGTERM the old keventd hands its sockets to
systemd's file-descriptor store and stops reading them; a running handler
holds it in its stop while the presses and part of the storm arrive; the
new keventd takes the sockets back.  Every uevent udevd sent runs its
rule exactly once (the SEQNUMs run against those the kernel sent, from
udevadm monitor), and each press runs its acpi rule and its input rule
(keventd(8), Sockets across a restart).  systemd 252 keeps the store
across the restart."""
import shlex
import time

from systest import Fail

KERNELS = ("6.1", "6.12")
ROUNDS = 500
DEVS = ("null", "zero", "full", "urandom")  # four objects: their runs go in parallel
N = ROUNDS * len(DEVS)
PRESSES = 3
D = "/run/systest/fds"
RULES = """rules:
  - name: fds-storm
    match: {source: udev, type: hotplug, object: "/org/kernel/devices/virtual/mem/*",
            signal: change}
    shell: 'echo "$SEQNUM" >> %(d)s/storm'
  - name: fds-hold
    match: {source: socket, object: /org/systest/fds/hold}
    run: [/bin/sleep, "15"]
    timeout: 30s
  - name: fds-acpi
    match: {source: acpi, object: /org/kernel/acpi/button/power, signal: pressed}
    shell: 'echo "acpi $KEVENT_SEQNUM" >> %(d)s/presses'
  - name: fds-input
    match: {source: input, object: /org/kernel/input/key/power, signal: press}
    shell: 'echo "input $KEVENT_SEQNUM" >> %(d)s/presses'
""" % {"d": D}
RULE_FILE = "/etc/keventd/rules.d/73-fdstore.yaml"


def lines(vm, path):
    return vm.sh("cat %s 2>/dev/null || true" % path).split("\n")


def run(vm):
    if vm.show("keventd.service", "FileDescriptorStoreMax")["FileDescriptorStoreMax"] != "64":
        raise Fail("expected the shipped unit's FileDescriptorStoreMax=64")
    vm.sh("rm -rf %(d)s; mkdir -p %(d)s\n"
          "cat > /etc/keventd/rules.d/.fds.tmp <<'EOF'\n%(rules)sEOF\n"
          "chmod 644 /etc/keventd/rules.d/.fds.tmp && mv /etc/keventd/rules.d/.fds.tmp %(f)s"
          % {"d": D, "rules": RULES, "f": RULE_FILE})
    vm.wait("keventctl status --json | grep -q fds-input", 30, "keventd to load the rules")
    vm.wait("grep -qx 'Power Button' /sys/class/input/event*/device/name", 20,
            "the ACPI power button's input device")
    # logind would power off at the press
    vm.sh("setsid systemd-inhibit --what=handle-power-key --who=systest --why='keventd handles it'"
          " sleep 600 </dev/null >/dev/null 2>&1 & echo $! > %s/inhibit.pid" % D)
    vm.wait("systemd-inhibit --list --no-pager | grep -q handle-power-key", 20,
            "the inhibitor lock on the power key")
    # what the kernel sends: a monitor of its own, its buffer udevadm's 128 MiB
    vm.sh("setsid stdbuf -oL udevadm monitor --kernel --property --subsystem-match=mem "
          "> %s/monitor 2>&1 </dev/null & echo $! > %s/monitor.pid" % (D, D))
    vm.wait("grep -q 'KERNEL - the kernel uevent' %s/monitor" % D, 20, "udevadm monitor")
    pid0 = vm.show("keventd.service", "MainPID")["MainPID"]
    cur = vm.cursor()
    vm.sh("setsid bash -c 'for i in $(seq %d); do for d in %s; do "
          "echo change > /sys/devices/virtual/mem/$d/uevent || exit 1; done; "
          "echo $i > %s/sent; sleep 0.01; done; touch %s/storm.done' "
          "</dev/null >/dev/null 2>&1 &" % (ROUNDS, " ".join(DEVS), D, D))
    vm.wait("[ \"$(cat %s/sent 2>/dev/null)\" -ge 50 ]" % D, 60, "the storm under way")
    # a handler running: the old keventd stops only once it ends, 15 s on
    vm.sh("keventctl send general /org/systest/fds/hold go")
    vm.sh("systemctl restart --no-block keventd")
    vm.wait("journalctl -q -o cat --after-cursor=%s | grep -q 'descriptors handed to the "
            "service manager'" % shlex.quote(cur), 30, "the old keventd to hand its sockets over")
    at_stop = int(vm.sh("cat %s/sent" % D))
    stored = vm.sh("systemctl show -p NFileDescriptorStore --value keventd").strip()
    for _ in range(PRESSES):
        vm.qmp.cmd("system_powerdown")
        time.sleep(0.5)  # distinct presses, not a race
    p = vm.show("keventd.service", "MainPID", "ActiveState")
    if p["MainPID"] != pid0 or p["ActiveState"] != "deactivating":
        raise Fail("expected the presses while the old keventd was still stopping, "
                   "got %r (old pid %s)" % (p, pid0))
    vm.wait("[ \"$(systemctl show -p ActiveState --value keventd)\" = active ]", 60,
            "the new keventd")
    at_start = int(vm.sh("cat %s/sent" % D))
    vm.wait("test -e %s/storm.done" % D, 180, "the storm to end")
    vm.wait("[ \"$(sort -u %s/storm | wc -l)\" -ge %d ]" % (D, N), 180,
            "a run for each of the %d uevents" % N)
    if not vm.ok("end=$((SECONDS + 60)); until [ \"$(grep -c . %s/presses 2>/dev/null)\" "
                 "-ge %d ]; do [ $SECONDS -lt $end ] || exit 1; sleep 0.2; done"
                 % (D, 2 * PRESSES), 70):
        raise Fail("expected the presses' runs within 60 s; runs:\n%s\nkeventd said:\n%s"
                   % (vm.sh("cat %s/presses 2>/dev/null || true" % D),
                      vm.sh("journalctl -q -o cat --after-cursor=%s | grep -v fds-storm | "
                            "tail -80 || true" % shlex.quote(cur))))
    vm.sh("kill $(cat %s/monitor.pid)" % D)

    sent, props = [], {}
    for line in lines(vm, D + "/monitor"):
        if not line.strip():
            if props.get("ACTION") == "change" and \
                    props.get("DEVPATH", "").startswith("/devices/virtual/mem/"):
                sent.append(int(props["SEQNUM"]))
            props = {}
        elif "=" in line:
            k, v = line.split("=", 1)
            props[k] = v
    if props:
        raise Fail("expected udevadm monitor's output to end with a blank line: %r" % props)
    ran = [int(l) for l in lines(vm, D + "/storm") if l.strip()]
    if len(sent) != N:
        raise Fail("expected udevadm monitor to see the %d uevents sent, it saw %d"
                   % (N, len(sent)))
    missing = sorted(set(sent) - set(ran))
    twice = sorted(s for s in set(ran) if ran.count(s) > 1)
    if missing or twice or sorted(ran) != sorted(sent):
        raise Fail("expected each of the %d uevents run once; missing %d %r, more than once "
                   "%r" % (N, len(missing), missing[:20], twice[:20]))
    presses = [l.split()[0] for l in lines(vm, D + "/presses") if l.strip()]
    key_runs = presses.count("input")
    if presses.count("acpi") != PRESSES or key_runs != PRESSES:
        raise Fail("expected %d acpi and %d input runs of the presses, got %r"
                   % (PRESSES, PRESSES, presses))
    said = vm.sh("journalctl -q -o cat --after-cursor=%s | grep 'fd store: ' || true"
                 % shlex.quote(cur)).strip().split("\n")
    taken = [l for l in said if "descriptors taken back" in l]
    refused = [l for l in said if "not taken back" in l]
    if len(taken) != 1 or refused:
        raise Fail("expected every descriptor handed over taken back, keventd said:\n%s"
                   % "\n".join(said))
    taken = taken[0]
    for name in ("udev", "genl-acpi", "input-event"):
        if name not in taken:
            raise Fail("expected %s among the descriptors taken back: %r" % (name, taken))
    st = vm.keventctl_status()["sources"]
    if st["udev"]["overruns"] or st["udev"]["lost"]:
        raise Fail("expected no overrun, nothing lost: %r" % st["udev"])
    vm.sh("rm -f %s; kill $(cat %s/inhibit.pid) || true" % (RULE_FILE, D))
    vm.figure("uevents and presses across systemctl restart (fd store)",
              "%d uevents, the stop after %d, the start after %d: each run once; "
              "%d power-button presses while stopping: acpi ran %d, input (evdev) %d; "
              "systemd held %s descriptors; %s"
              % (N, at_stop * len(DEVS), at_start * len(DEVS), PRESSES, PRESSES, key_runs,
                 stored or "?",
                 taken))

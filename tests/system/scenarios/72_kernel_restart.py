# SPDX-License-Identifier: GPL-2.0-or-later
"""systemctl restart keventd while the kernel sends: every event kevent.ko
sent is handled exactly once, those sent while keventd was away (and those
its stop left queued) fetched from the module's ring by the new keventd
and flagged KEVENT_RECOVERED=1; nothing is counted lost (keventd(8), the
kernel source; send_kevent(9), the ring)."""
from systest import Fail

KERNELS = ("6.1", "6.12")
N = 600
EMIT = "/sys/kernel/debug/kevent/emit"


def run(vm):
    vm.sh("rm -rf /run/systest/kflow /run/systest/kflow.*; mkdir -p /run/systest/kflow")
    if vm.run("test -d /sys/module/kevent")[0] != 0:
        cur = vm.cursor()  # loaded at boot, but a scenario before may have unloaded it
        vm.sh("modprobe kevent")
        vm.wait_journal(cur, "subscribed to the kevent family", 30,
                        "keventd to subscribe to kevent.ko", "SYSLOG_IDENTIFIER=keventd")
    vm.wait("test -w %s" % EMIT, 20, "kevent.ko's debugfs emit file")
    pid0 = vm.show("keventd.service", "MainPID")["MainPID"]
    # the sender: kernel events from kevent.ko's emit file, on 4 objects,
    # paced (about 100 a second) so that the restart falls amid them
    vm.sh("setsid bash -c 'for i in $(seq %d); do "
          "printf \"general /org/kernel/test/kflow$((i %% 4)) e N: $i\" > %s || exit 1; "
          "echo $i > /run/systest/kflow.sent; sleep 0.01; done; touch /run/systest/kflow.done' "
          "</dev/null >/dev/null 2>&1 &" % (N, EMIT))
    vm.wait("[ \"$(cat /run/systest/kflow.sent 2>/dev/null)\" -ge 50 ]", 60, "50 events sent")
    vm.sh("systemctl restart keventd", 120, "systemctl restart keventd")
    at_restart = int(vm.sh("cat /run/systest/kflow.sent"))
    vm.wait("test -e /run/systest/kflow.done", 120, "the sender to finish")
    if at_restart >= N:
        raise Fail("expected the restart to fall amid the %d events, it came after them" % N)
    p = vm.show("keventd.service", "MainPID", "ActiveState")
    if p["MainPID"] == pid0 or p["ActiveState"] != "active":
        raise Fail("expected a new keventd, active, got %r (old pid %s)" % (p, pid0))
    vm.wait("[ \"$(ls /run/systest/kflow | wc -l)\" -ge %d ]" % N, 120,
            "a handler run for each of the %d kernel events" % N)
    # one process for all the files ("N:SEQNUM RECOVERED", a line a run)
    out = vm.sh("cd /run/systest/kflow && grep -H '' -- *")
    runs, recovered = {}, 0
    for line in out.splitlines():
        n, run_line = line.split(":", 1)
        runs[int(n)] = runs.get(int(n), 0) + 1
        recovered += run_line.split()[1] == "1"
    if sorted(runs) != list(range(1, N + 1)):
        missing = sorted(set(range(1, N + 1)) - set(runs))
        raise Fail("expected a run for every event 1..%d; missing %r" % (N, missing[:20]))
    twice = sorted(n for n, c in runs.items() if c != 1)
    if twice:
        raise Fail("expected each event run once; run more than once: %r" % twice[:20])
    if recovered == 0:
        raise Fail("expected the events sent while keventd restarted to be recovered "
                   "(KEVENT_RECOVERED=1), none were")
    k = vm.keventctl_status()["sources"]["kernel"]
    if k["lost"] != 0:
        raise Fail("expected nothing lost, status says %r" % k)
    vm.figure("kernel events across systemctl restart",
              "%d sent, restart after %d: each run once, %d recovered from the ring, 0 lost"
              % (N, at_restart, recovered))

# SPDX-License-Identifier: GPL-2.0-or-later
"""Containment with the shipped unit's Delegate=yes (keventd(8),
Containment): keventd runs each handler in a cgroup of its own, so a
daemon a handler leaves behind with setsid() is killed when the handler
exits, a handler over its memory_max is killed by the OOM killer and
counted, and a fork bomb, held alive on a gate, stays within its
tasks_max while keventd goes on serving."""
import re

from systest import Fail

KERNELS = ("6.1",)
CG = "/sys/fs/cgroup/system.slice/keventd.service"


def send_wait(vm, signal, want_rc):
    rc, out, err = vm.run("keventctl send --wait --timeout 60 general /org/kernel/test/contain "
                          + signal, 90)
    if rc != want_rc:
        raise Fail("expected keventctl send --wait ... %s to exit %d, got %d: %r %r"
                   % (signal, want_rc, rc, out, err))
    m = re.search(r"^event seqnum (\d+)$", out, re.M)
    if not m:
        raise Fail("expected 'event seqnum N' from send --wait, got %r" % out)
    return m.group(1), out


def run(vm):
    st = vm.keventctl_status()
    if not st["runs"]["containment_cgroup"]:
        raise Fail("expected containment: cgroup under the shipped unit, got %r" % st["runs"])

    # setsid() and a second fork: out of the process group, not out of the cgroup
    send_wait(vm, "escape", 0)
    pid = vm.sh("cat /run/systest/escapee").strip()
    if not pid.isdigit():
        raise Fail("expected the escapee's pid in /run/systest/escapee, got %r" % pid)
    vm.wait("! kill -0 %s" % pid, 20, "the escaped sleep 1000 (pid %s) killed with its run's "
            "cgroup" % pid)
    vm.wait("[ $(ls -d %s/systest-escape-* 2>/dev/null | wc -l) = 0 ]" % CG, 20,
            "the escape run's cgroup removed")

    # 100 MB under memory_max: 20M
    before = vm.keventctl_status()["runs"]["oom_kills"]
    cur = vm.cursor()
    seq, out = send_wait(vm, "memory", 1)
    vm.wait_journal(cur, "killed by the OOM killer (seq %s)" % seq, 30,
                    "keventd's line about the OOM kill of systest-memory")
    after = vm.keventctl_status()["runs"]["oom_kills"]
    if after != before + 1:
        raise Fail("expected oom_kills %d after the run, got %d" % (before + 1, after))

    # a fork bomb under tasks_max: 8, its processes held on the gate
    rc, out, err = vm.run("keventctl send general /org/kernel/test/bomb bomb")
    if rc != 0:
        raise Fail("keventctl send bomb: %d %r" % (rc, err))
    vm.wait("grep -q '^max [1-9]' %s/systest-bomb-*/pids.events" % CG, 30,
            "the bomb's cgroup to refuse forks past its pids.max")
    if vm.sh("cat %s/systest-bomb-*/pids.max" % CG).strip() != "8":
        raise Fail("expected pids.max 8 in the bomb's cgroup")

    def bomb_tasks(when):
        n = vm.sh("cat %s/systest-bomb-*/pids.current" % CG).strip()
        # the handler and at least one process of the bomb, at most the limit
        if not n.isdigit() or not 1 < int(n) <= 8:
            raise Fail("expected the held bomb's pids.current in 2..8 %s, got %r" % (when, n))
        return int(n)

    held = bomb_tasks("before the other run")
    # keventd serves meanwhile: status answers and another rule runs, the
    # bomb alive all along
    vm.sh("keventctl status >/dev/null")
    send_wait(vm, "escape", 0)
    held_after = bomb_tasks("after the other run")
    vm.sh("timeout 20 sh -c 'echo go > /run/systest/bomb-gate'", 30, "the bomb's gate opened")
    vm.wait("! pgrep -f 'systest-[b]omb'", 40, "nothing of the bomb left once its handler ended")
    vm.wait("[ $(ls -d %s/systest-* 2>/dev/null | wc -l) = 0 ]" % CG, 20,
            "every run's cgroup removed")
    vm.figure("containment", "escapee killed, oom_kills %d -> %d, bomb held at pids.max 8 "
              "(%d tasks, %d after the other run)" % (before, after, held, held_after))

# SPDX-License-Identifier: GPL-2.0-or-later
"""keventd.service comes up through Type=notify, with kevent.ko loaded at
boot by the package and keventd subscribed to it."""
from systest import Fail

KERNELS = ("6.1", "6.12")


def run(vm):
    state = vm.sh("timeout 120 systemctl is-system-running --wait || true", 130).strip()
    vm.figure("systemctl is-system-running", state)
    if state not in ("running", "degraded"):
        raise Fail("expected the system to finish booting, it is %r" % state)
    failed = vm.sh("systemctl list-units --failed --plain --no-legend")
    if failed.strip():
        raise Fail("expected no failed unit, got:\n" + failed)

    p = vm.show("keventd.service", "Type", "ActiveState", "SubState", "NotifyAccess",
                "ExecMainStartTimestampMonotonic", "ActiveEnterTimestampMonotonic",
                "MainPID", "UnitFileState")
    if (p["Type"], p["ActiveState"], p["SubState"]) != ("notify", "active", "running"):
        raise Fail("expected keventd.service Type=notify, active (running); got %r" % p)
    if p["UnitFileState"] != "enabled":
        raise Fail("expected the package to enable keventd.service, it is %r" % p["UnitFileState"])
    start = int(p["ExecMainStartTimestampMonotonic"])
    ready = int(p["ActiveEnterTimestampMonotonic"])
    vm.figure("keventd ready (READY=1), since the kernel started", "%.1f s" % (ready / 1e6))
    vm.figure("keventd start to READY=1", "%.2f s" % ((ready - start) / 1e6))
    vm.figure("systemd-analyze", vm.sh("systemd-analyze").splitlines()[0])

    # The module: built by DKMS for this kernel, loaded by the package at boot.
    if not vm.ok("dkms status -k \"$(uname -r)\" kevent | grep -q ': installed'"):
        raise Fail("expected dkms status to show kevent installed for %s:\n%s"
                   % (vm.kver, vm.sh("dkms status")))
    if not vm.ok("test -d /sys/module/kevent"):
        raise Fail("expected kevent.ko loaded at boot (/sys/module/kevent)")
    path = vm.sh("modinfo -n kevent").strip()
    if "/updates/dkms/" not in path:
        raise Fail("expected the kevent.ko DKMS installed, got %s" % path)

    # keventd subscribed to the kevent family: it says so, and its status
    # shows the kernel source.
    pid = p["MainPID"]
    vm.wait("journalctl -b -u keventd _PID=%s | grep -q 'kernel: subscribed to the kevent family'"
            % pid, 20, "keventd to say it subscribed to the kevent family")
    # Once: the module registers its family while keventd starts, and the
    # controller's notice of it must not make keventd subscribe again (a
    # fresh socket would lose what the first one holds).
    said = vm.sh("journalctl -b -u keventd _PID=%s -o cat | grep 'subscribed to the kevent family'"
                 " || true" % pid).splitlines()
    if len(said) != 1:
        raise Fail("expected keventd to subscribe to the kevent family once, it said so %d "
                   "times:\n%s" % (len(said), "\n".join(said)))
    st = vm.keventctl_status()
    if "kernel" not in st.get("sources", {}):
        raise Fail("expected the kernel source in keventctl status --json: %r" % st)

# SPDX-License-Identifier: GPL-2.0-or-later
"""apt-get install of a newer build of the daemon (keventd_<v>-2, a new
debian/changelog entry) over the running service: keventd restarts, the
admin's files in /etc are kept, and kevent-dkms, which keventd does not tie
to its own version, stays as it was, and kevent.ko with it, not rebuilt.
(An upgrade of kevent-dkms rebuilds the module, as dh_dkms's scripts do;
that one is dkms-upgrade.sh's: under TCG it would take minutes.)"""
import os

from systest import Fail

KERNELS = ("6.1",)
ADMIN = ("find /etc/keventd /etc/systemd/system/keventd.service.d -type f | LC_ALL=C sort | "
         "xargs sha256sum")
MODULES = "stat -c '%n %i %Y' /lib/modules/*/updates/dkms/kevent.ko*"


def run(vm):
    version = vm.debs["VERSION"]
    deb = "/var/lib/systest/" + os.path.basename(vm.debs["REVISION_DEB"])
    pid0 = vm.show("keventd.service", "MainPID")["MainPID"]
    admin0, modules0 = vm.sh(ADMIN), vm.sh(MODULES)
    dkms0 = vm.sh("dkms status kevent")
    cur = vm.cursor()
    rc, out, err = vm.run("time apt-get install -y -o Dpkg::Use-Pty=0 %s 2>&1" % deb, 600)
    if rc != 0:
        raise Fail("expected apt-get install %s to succeed, exit %d:\n%s%s" % (deb, rc, out, err))
    vm.figure("upgrade over the running service (apt-get install)",
              err.strip().splitlines()[0] if err.strip() else "?")
    for bad in ("write error", "Broken pipe", "failed", "Error!"):
        if bad in out:
            raise Fail("expected nothing like %r in what the upgrade printed:\n%s" % (bad, out))
    if vm.sh("dpkg-query -W -f='${Version}' keventd") != version + "-2":
        raise Fail("expected keventd %s-2 installed" % version)
    if vm.sh("dpkg-query -W -f='${Version}' kevent-dkms") != version + "-1":
        raise Fail("expected kevent-dkms %s-1 left as it was" % version)

    p = vm.show("keventd.service", "MainPID", "ActiveState", "SubState")
    if p["MainPID"] == pid0 or (p["ActiveState"], p["SubState"]) != ("active", "running"):
        raise Fail("expected the upgrade to restart keventd (old pid %s), got %r" % (pid0, p))
    vm.wait_journal(cur, "Started keventd.service", 10, "systemd to start the new keventd", "_PID=1")
    if vm.sh(ADMIN) != admin0:
        raise Fail("expected the admin's files kept as they were:\nbefore:\n%safter:\n%s"
                   % (admin0, vm.sh(ADMIN)))

    # the module: the same DKMS state, the very same files
    if vm.sh("dkms status kevent") != dkms0 or vm.sh(MODULES) != modules0:
        raise Fail("expected kevent.ko kept as it was (kevent-dkms not upgraded):\n"
                   "before:\n%s%safter:\n%s%s" % (dkms0, modules0, vm.sh("dkms status kevent"),
                                                  vm.sh(MODULES)))
    if "kevent-dkms" in out or "Building for" in out:
        raise Fail("expected the daemon's upgrade to leave the module alone:\n" + out)

    # and it works: an admin's rule fires
    vm.sh("rm -rf /run/systest/events; keventctl send general /org/kernel/test/flow after 'N: 1'")
    vm.wait_event_file("systest-flow-socket-*", 20, "the admin's rule to fire after the upgrade")

# SPDX-License-Identifier: GPL-2.0-or-later
"""apt-get install of a newer build of the package (keventd_<v>-2, cpack
-D CPACK_DEBIAN_PACKAGE_RELEASE=2) over the running service: keventd
restarts, the admin's files in /etc are kept, and kevent.ko, whose version
and source did not change, is kept as DKMS built it, not rebuilt.  (The
upgrade that changes the module's version, and so rebuilds it, is
dkms-upgrade.sh's: under TCG it would take minutes.)"""
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

    p = vm.show("keventd.service", "MainPID", "ActiveState", "SubState")
    if p["MainPID"] == pid0 or (p["ActiveState"], p["SubState"]) != ("active", "running"):
        raise Fail("expected the upgrade to restart keventd (old pid %s), got %r" % (pid0, p))
    vm.wait_journal(cur, "Started keventd.service", 10, "systemd to start the new keventd", "_PID=1")
    if vm.sh(ADMIN) != admin0:
        raise Fail("expected the admin's files kept as they were:\nbefore:\n%safter:\n%s"
                   % (admin0, vm.sh(ADMIN)))

    # the module: the same DKMS state, the very same files
    if vm.sh("dkms status kevent") != dkms0 or vm.sh(MODULES) != modules0:
        raise Fail("expected kevent.ko kept as it was (same version, same source):\n"
                   "before:\n%s%safter:\n%s%s" % (dkms0, modules0, vm.sh("dkms status kevent"),
                                                  vm.sh(MODULES)))
    for k in (vm.image["KVER_6_1"], vm.image["KVER_6_12"]):
        if "keventd: kevent.ko for %s is up to date" % k not in out:
            raise Fail("expected the postinst to say kevent.ko for %s is up to date:\n%s" % (k, out))

    # and it works: an admin's rule fires
    vm.sh("rm -rf /run/systest/events; keventctl send general /org/kernel/test/flow after 'N: 1'")
    vm.wait_event_file("systest-flow-socket-*", 20, "the admin's rule to fire after the upgrade")

# SPDX-License-Identifier: GPL-2.0-or-later
"""A rule pack built as docs/packaging.md says (guest/rulepack: its files in
the directory pkg-config names, checked with keventctl verify, packed with
dpkg-deb) is installed with apt-get on the running system: dpkg's trigger
on /usr/lib/keventd/rules.d reloads keventd, and the pack's rule fires with
no reload of the admin's."""
from systest import Fail

KERNELS = ("6.1",)
PACK = "/usr/lib/keventd/rules.d/70-systest-pack.yaml"
DEB = "/var/lib/systest/rulepack/keventd-rules-systest_1.0_all.deb"


def run(vm):
    dirs = vm.sh("pkg-config --variable=rulesdir keventd; pkg-config --variable=confdir keventd")
    if dirs.split() != ["/usr/lib/keventd/rules.d", "/etc/keventd"]:
        raise Fail("expected keventd.pc to name /usr/lib/keventd/rules.d and /etc/keventd, got %r"
                   % dirs)
    pid = vm.show("keventd.service", "MainPID")["MainPID"]
    cur = vm.cursor()
    rc, out, err = vm.run("apt-get install -y -o Dpkg::Use-Pty=0 %s 2>&1" % DEB, 300)
    if rc != 0:
        raise Fail("expected apt-get install %s to succeed, exit %d:\n%s%s" % (DEB, rc, out, err))
    if "Processing triggers for keventd" not in out:
        raise Fail("expected dpkg to run keventd's trigger:\n" + out)
    if PACK not in vm.sh("dpkg -L keventd-rules-systest").split():
        raise Fail("expected keventd-rules-systest to own %s" % PACK)
    # the trigger reloaded the running keventd, through systemd
    reloads = vm.journal(cur, "_PID=1", "UNIT=keventd.service", "JOB_TYPE=reload")
    if not reloads:
        raise Fail("expected systemd to reload keventd.service for the trigger")
    if vm.show("keventd.service", "MainPID")["MainPID"] != pid:
        raise Fail("expected keventd reloaded, not restarted")
    vm.sh("rm -f /run/systest/rulepack && keventctl send general /org/kernel/test/rulepack ping")
    vm.wait("test -s /run/systest/rulepack", 20, "the rule pack's rule to run")
    got = vm.sh("cat /run/systest/rulepack").split()
    if got != ["systest-pack", PACK, "ping"]:
        raise Fail("expected 'systest-pack %s ping', got %r" % (PACK, got))

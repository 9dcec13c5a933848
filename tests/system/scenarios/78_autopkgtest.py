# SPDX-License-Identifier: GPL-2.0-or-later
"""The packages' own autopkgtests (debian/tests) that need a booted system,
run as autopkgtest would on this guest: every test debian/tests/control
lists with the isolation-machine restriction (daemon: keventd.service
enabled, Type=notify, running, reloads; rule-fires: an admin's rule, and a
rule pack installed with dpkg, which the trigger makes keventd reload).
The others run in a chroot (dkms-autopkgtest.sh)."""
import re
import shlex

from autopkgtest_control import ControlError, parse
from systest import Fail

KERNELS = ("6.1",)
# what this runner gives a test: root, the whole machine, a testbed that
# may be left broken (as before this scenario read the control file: the
# ones after it do not need it whole), stderr allowed when asked
KNOWN = {"needs-root", "isolation-machine", "isolation-container", "breaks-testbed",
         "allow-stderr"}


def run(vm):
    control = vm.sh("cat /var/lib/systest/autopkgtest/control")
    if re.search(r"(?mi)^tests-directory:", control):
        raise Fail("debian/tests/control names a Tests-Directory; the guest has debian/tests alone")
    try:
        # the guest has debian/tests as /var/lib/systest/autopkgtest
        tests = [t for t in parse(control, "./autopkgtest")
                 if "isolation-machine" in t.restrictions]
    except ControlError as e:
        raise Fail("debian/tests/control: %s" % e)
    if not tests:
        raise Fail("debian/tests/control lists no test with isolation-machine")
    for t in tests:
        unknown = t.restrictions - KNOWN
        if unknown:
            raise Fail("autopkgtest %s: restrictions this runner does not give: %s"
                       % (t.name, " ".join(sorted(unknown))))
        # its Depends: installed in the image (autopkgtest would install
        # them; the guest has no archive)
        for p in t.depends:
            if p.startswith("@"):
                raise Fail("autopkgtest %s: Depends %s is not handled here" % (t.name, p))
            rc, out, _ = vm.run("dpkg-query -W -f='${Status}' %s" % shlex.quote(p))
            if rc != 0 or out.strip() != "install ok installed":
                raise Fail("autopkgtest %s: its Depends %s is not installed in the image"
                           % (t.name, p))
        # as autopkgtest runs it: from the source tree's top, a scratch
        # AUTOPKGTEST_TMP, as root (needs-root); stderr is a failure
        # without allow-stderr
        rc, out, err = vm.run("d=$(mktemp -d) && cd /var/lib/systest && "
                              "AUTOPKGTEST_TMP=$d sh -c %s; rc=$?; rm -rf $d; exit $rc"
                              % shlex.quote(t.command), 180)
        if rc != 0 or (err.strip() and "allow-stderr" not in t.restrictions):
            raise Fail("expected the autopkgtest %s to pass%s, exit %d:\n"
                       "%s--- stderr:\n%s" % (t.name, "" if "allow-stderr" in t.restrictions
                                              else " with nothing on stderr", rc, out, err))
        vm.figure("autopkgtest %s" % t.name, out.strip().splitlines()[-1] if out.strip() else "")

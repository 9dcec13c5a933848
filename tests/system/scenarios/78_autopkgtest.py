# SPDX-License-Identifier: GPL-2.0-or-later
"""The packages' own autopkgtests (debian/tests) that need a booted system,
run as autopkgtest would on this guest: daemon (keventd.service enabled,
Type=notify, running, reloads) and rule-fires (an admin's rule, and a rule
pack installed with dpkg, which the trigger makes keventd reload)."""
from systest import Fail

KERNELS = ("6.1", "6.12")
TESTS = ("daemon", "rule-fires")


def run(vm):
    control = vm.sh("cat /var/lib/systest/autopkgtest/control")
    for t in TESTS:
        if "Tests: %s\n" % t not in control:
            raise Fail("expected debian/tests/control to name %s" % t)
        # as autopkgtest runs it: from the source tree's top, a scratch
        # AUTOPKGTEST_TMP, as root (needs-root); stderr is a failure
        # (no allow-stderr)
        rc, out, err = vm.run("d=$(mktemp -d) && cd /var/lib/systest && "
                              "AUTOPKGTEST_TMP=$d ./autopkgtest/%s; rc=$?; rm -rf $d; exit $rc" % t,
                              180)
        if rc != 0 or err.strip():
            raise Fail("expected the autopkgtest %s to pass with nothing on stderr, exit %d:\n"
                       "%s--- stderr:\n%s" % (t, rc, out, err))
        vm.figure("autopkgtest %s" % t, out.strip().splitlines()[-1] if out.strip() else "")

# SPDX-License-Identifier: GPL-2.0-or-later
"""systemd-analyze security keventd on the booted system: the exposure is
at most MAX_EXPOSURE, a bound of this test's own, so that a weaker unit
fails here even if docs/systemd-analyze-security.txt is recorded again
(its figure is printed beside the booted one).  (What the sandbox still
lets handlers do, mount a disk and write to /sys, is in 20_hotplug.)"""
import os
import re

from systest import Fail, HERE

KERNELS = ("6.1",)
DOC = os.path.join(HERE, "..", "..", "docs", "systemd-analyze-security.txt")
# The exposure of the unit as shipped (systemd 252): lower it when the
# sandbox tightens, never raise it to make a change pass.
MAX_EXPOSURE = 8.9


def score(text):
    m = re.search(r"Overall exposure level for keventd.service: ([0-9.]+) (\w+)", text)
    return (float(m.group(1)), m.group(2)) if m else None


def run(vm):
    out = vm.sh("systemd-analyze security --no-pager keventd.service", 120)
    got = score(out)
    with open(DOC) as f:
        want = score(f.read())
    vm.figure("systemd-analyze security keventd (booted guest)", "%s %s" % got if got else out)
    vm.figure("docs/systemd-analyze-security.txt", "%s %s" % want if want else "no score")
    if not got:
        raise Fail("expected an overall exposure level from systemd-analyze; got:\n%s" % out)
    if got[0] > MAX_EXPOSURE:
        raise Fail("expected an exposure of at most %.1f, got %.1f %s:\n%s"
                   % (MAX_EXPOSURE, got[0], got[1], out))

# SPDX-License-Identifier: GPL-2.0-or-later
"""systemd-analyze security keventd on the booted system: the score is
the one docs/systemd-analyze-security.txt records.  (What the sandbox
still lets handlers do, mount a disk and write to /sys, is in 20_hotplug.)"""
import os
import re

from systest import Fail, HERE

KERNELS = ("6.1",)
DOC = os.path.join(HERE, "..", "..", "docs", "systemd-analyze-security.txt")


def score(text):
    m = re.search(r"Overall exposure level for keventd.service: ([0-9.]+) (\w+)", text)
    return (float(m.group(1)), m.group(2)) if m else None


def run(vm):
    out = vm.sh("systemd-analyze security --no-pager keventd.service", 120)
    got = score(out)
    with open(DOC) as f:
        want = score(f.read())
    vm.figure("systemd-analyze security keventd (booted guest)", "%s %s" % got if got else out)
    vm.figure("docs/systemd-analyze-security.txt", "%s %s" % want)
    if not got or got != want:
        raise Fail("expected the exposure docs/systemd-analyze-security.txt records, %r; got %r:\n%s"
                   % (want, got, out))

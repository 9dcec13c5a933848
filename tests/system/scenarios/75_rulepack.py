# SPDX-License-Identifier: GPL-2.0-or-later
"""A rule pack built as docs/packaging.md says (guest/rulepack: its files in
the directory pkg-config names, checked with keventctl verify, packed with
dpkg-deb) is installed and its rule fires."""
from systest import Fail

KERNELS = ("6.1",)
PACK = "/usr/lib/keventd/rules.d/70-systest-pack.yaml"


def run(vm):
    dirs = vm.sh("pkg-config --variable=rulesdir keventd; pkg-config --variable=confdir keventd")
    if dirs.split() != ["/usr/lib/keventd/rules.d", "/etc/keventd"]:
        raise Fail("expected keventd.pc to name /usr/lib/keventd/rules.d and /etc/keventd, got %r"
                   % dirs)
    if PACK not in vm.sh("dpkg -L keventd-rules-systest").split():
        raise Fail("expected keventd-rules-systest to own %s" % PACK)
    vm.sh("rm -f /run/systest/rulepack && keventctl send general /org/kernel/test/rulepack ping")
    vm.wait("test -s /run/systest/rulepack", 20, "the rule pack's rule to run")
    got = vm.sh("cat /run/systest/rulepack").split()
    if got != ["systest-pack", PACK, "ping"]:
        raise Fail("expected 'systest-pack %s ping', got %r" % (PACK, got))

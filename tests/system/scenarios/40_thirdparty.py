# SPDX-License-Identifier: GPL-2.0-or-later
"""A third-party module, built through DKMS against the kevent.ko DKMS
built (guest/kevent-thirdparty), calls send_kevent() and
send_kevent_atomic() when loaded: the admin's rule runs for both."""
from systest import Fail

KERNELS = ("6.1", "6.12")


def run(vm):
    if not vm.ok("dkms status kevent-thirdparty/1.0 -k %s | grep -q ': installed$'" % vm.kver):
        raise Fail("expected kevent-thirdparty installed by DKMS for %s:\n%s"
                   % (vm.kver, vm.sh("dkms status")))
    deps = vm.sh("modinfo -F depends kevent_thirdparty").strip()
    if deps != "kevent":
        raise Fail("expected kevent_thirdparty.ko to depend on kevent, modinfo says %r" % deps)
    vm.sh("rm -rf /run/systest/events")
    cur = vm.cursor()
    vm.sh("modprobe kevent_thirdparty", what="modprobe kevent_thirdparty")
    try:
        vm.wait("[ $(ls /run/systest/events/ | grep -c '^systest-thirdparty-kernel-') = 2 ]", 30,
                "the systest-thirdparty rule to run for the module's two events")
        ev = vm.events("systest-thirdparty-kernel-*")
        got = sorted((e.get("KEVENT_SIGNAL"), e.get("KEVENT_TYPE"), e.get("KEVENT_MODULE"))
                     for e in ev.values())
        if got != [("atomic", "general", "kevent_thirdparty"), ("loaded", "general", "kevent_thirdparty")]:
            raise Fail("expected the loaded and atomic events of kevent_thirdparty, got %r" % ev)
        loaded = [e for e in ev.values() if e["KEVENT_SIGNAL"] == "loaded"][0]
        if loaded.get("KEVENT_ANSWER") != "42" or loaded.get("KEVENT_SOURCE") != "kernel":
            raise Fail("expected Answer: 42 from the kernel source, got %r" % loaded)
        vm.wait_journal(cur, "kevent_thirdparty: send_kevent: 0, send_kevent_atomic: 0", 20,
                        "both calls to return 0, in the kernel log", "_TRANSPORT=kernel")
        # built against kevent's Module.symvers: its symbols carry versions
        bad = [e["MESSAGE"] for e in vm.journal(cur, "_TRANSPORT=kernel")
               if "no symbol version" in str(e.get("MESSAGE")) or "disagrees" in str(e.get("MESSAGE"))]
        if bad:
            raise Fail("expected kevent's symbols versioned in kevent_thirdparty.ko: %r" % bad)
    finally:
        # rmmod, not modprobe -r, which would take the unused kevent.ko too
        vm.run("rmmod kevent_thirdparty")

# SPDX-License-Identifier: GPL-2.0-or-later
"""apt-get install of keventd, kevent-dkms and keventd-dev (at image-build
time, in a chroot) said nothing wrong, built kevent.ko through DKMS (dh_dkms's
postinst) for both kernels, and left the programs, the man pages, the UAPI
header and the headers for other modules in place."""
from systest import Fail

KERNELS = ("6.1",)


def run(vm):
    version = vm.debs["VERSION"]
    log = vm.sh("cat /var/lib/systest/install.log")
    for pkg in ("keventd", "kevent-dkms", "keventd-dev"):
        if "Setting up %s (%s-1)" % (pkg, version) not in log:
            raise Fail("expected dpkg to set up %s %s-1 in the install log:\n%s"
                       % (pkg, version, log))
    for bad in ("write error", "Broken pipe", "failed", "Error!"):
        if bad in log:
            raise Fail("expected nothing like %r in what apt-get install printed:\n%s" % (bad, log))

    # DKMS, for each kernel of the image, though the chroot ran another one
    status = vm.sh("dkms status kevent").splitlines()
    for k in (vm.image["KVER_6_1"], vm.image["KVER_6_12"]):
        if "kevent/%s, %s, x86_64: installed" % (version, k) not in status:
            raise Fail("expected kevent/%s installed for %s:\n%s" % (version, k, "\n".join(status)))
        # what a module calling send_kevent() builds against (send_kevent(9))
        vm.sh("test -s /var/lib/dkms/kevent/kernel-%s-x86_64/Module.symvers && "
              "test -s /var/lib/dkms/kevent/kernel-%s-x86_64/include/linux/kevent.h" % (k, k),
              what="kevent's Module.symvers and headers kept by DKMS for %s" % k)

    if vm.sh("keventctl --version").split() != ["keventctl", version]:
        raise Fail("expected keventctl --version to say %s" % version)
    # the man pages: each where man finds it, keventd(8) rendered
    for page, sect in (("keventd", 8), ("keventctl", 8), ("keventd.rules", 5), ("send_kevent", 9)):
        path = vm.sh("man -w %s" % page, what="man -w %s" % page).strip()
        if path != "/usr/share/man/man%d/%s.%d.gz" % (sect, page, sect):
            raise Fail("expected man to find %s(%d) in the package, got %r" % (page, sect, path))
    # the UAPI header, for listeners: <kevent/kevent.h>, not in the kernel's
    # directory
    vm.sh("test \"$(dpkg -S /usr/include/kevent/kevent.h)\" = "
          "'keventd-dev: /usr/include/kevent/kevent.h' && ! test -e /usr/include/linux/kevent.h",
          what="the header in keventd-dev, not in /usr/include/linux")
    out = vm.sh("MANPAGER=cat MANWIDTH=80 man keventd 2>&1 | head -n 5", what="man keventd")
    if "KEVENTD(8)" not in out:
        raise Fail("expected man keventd to render its page:\n%s" % out)

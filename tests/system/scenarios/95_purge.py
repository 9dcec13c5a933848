# SPDX-License-Identifier: GPL-2.0-or-later
"""apt-get purge of keventd, kevent-dkms, keventd-dev (and the rule pack
that depends on keventd) leaves no file, unit, module or user behind: only
the admin's own files in /etc/keventd, as dpkg leaves every file a package
did not install."""
from systest import Fail

KERNELS = ("6.1",)


def run(vm):
    pkgs = "keventd kevent-dkms keventd-dev keventd-rules-systest"
    files = vm.sh("dpkg -L %s" % pkgs).split()
    # kevent-thirdparty stays in DKMS: its owner's to remove (under TCG each
    # DKMS removal costs a depmod per kernel, about a minute each)
    rc, out, err = vm.run("apt-get purge -y -o Dpkg::Use-Pty=0 %s 2>&1" % pkgs, 600)
    if rc != 0:
        raise Fail("expected apt-get purge to succeed, exit %d:\n%s%s" % (rc, out, err))
    for bad in ("write error", "Broken pipe", "Error!"):
        if bad in out:
            raise Fail("expected nothing like %r in what the purge printed:\n%s" % (bad, out))

    # every file; directories (/lib, /usr/share/man/man8...) are shared
    left = vm.sh("for f in %s; do { [ -e \"$f\" ] || [ -L \"$f\" ]; } && [ ! -d \"$f\" ] && "
                 "echo \"$f\"; done; true"
                 % " ".join(files)).split()
    if left:
        raise Fail("expected every file of the packages gone, left: %r" % left)
    for d in ("/usr/lib/keventd", "/var/lib/dkms/kevent", "/run/keventd",
              "/lib/systemd/system/keventd.service",
              "/etc/systemd/system/multi-user.target.wants/keventd.service",
              "/var/lib/systemd/deb-systemd-helper-enabled/keventd.service",
              "/var/lib/systemd/deb-systemd-helper-masked/keventd.service"):
        if vm.ok("test -e %s || test -L %s" % (d, d)):
            raise Fail("expected %s gone after the purge" % d)
    srcs = vm.sh("ls -d /usr/src/kevent-[0-9]* 2>/dev/null; true").split()
    if srcs:
        raise Fail("expected no /usr/src/kevent-*, found %r" % srcs)
    admin = vm.sh("find /etc/keventd -type f 2>/dev/null | LC_ALL=C sort").split()
    if admin != ["/etc/keventd/rules.d/80-systest.yaml"]:
        raise Fail("expected only the admin's own file left in /etc/keventd, found %r" % admin)

    # no unit, no process, no module
    load = vm.show("keventd.service", "LoadState")["LoadState"]
    if load != "not-found":
        raise Fail("expected keventd.service not found after the purge, it is %r" % load)
    if vm.ok("pgrep -x keventd"):
        raise Fail("expected no keventd process left")
    mods = vm.sh("find /lib/modules -name 'kevent.ko*'; dkms status kevent").strip()
    if mods:
        raise Fail("expected no kevent.ko and no DKMS entry left, found:\n" + mods)
    left = vm.sh("dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' %s 2>/dev/null; true"
                 % pkgs).split("\n")
    left = [l for l in left if l.strip() and not l.startswith("un ")]
    if left:
        raise Fail("expected dpkg to know nothing more of the packages, it says %r" % left)
    if vm.ok("test -e /sys/module/kevent"):
        raise Fail("expected kevent.ko unloaded by the removal (nothing uses it any more)")
    # no user, no group
    if not vm.ok("cmp /etc/passwd /var/lib/systest/passwd.before && "
                 "cmp /etc/group /var/lib/systest/group.before"):
        raise Fail("expected /etc/passwd and /etc/group as before the install:\n"
                   + vm.sh("diff /var/lib/systest/passwd.before /etc/passwd; "
                           "diff /var/lib/systest/group.before /etc/group; true"))

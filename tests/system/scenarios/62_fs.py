# SPDX-License-Identifier: GPL-2.0-or-later
"""The fs source on a booted Debian: the root file system is reported as
/org/kernel/fs/ (already past a threshold at start-up: Initial; a remount),
and a user over the quota of an ext4 with the quota feature becomes the
kernel's VFS_DQUOT warnings as fs events: soft, hard and below, for blocks
and inodes, with the user's id, name and the caller's uid."""
from systest import Fail

KERNELS = ("6.1", "6.12")

UID = 2345
IMG = "/var/tmp/systest-quota.img"
MNT = "/mnt/quota"
RULES = """\
rules:
  - name: systest-fs-root
    match: {source: fs, object: /org/kernel/fs/}
    run: [/usr/local/lib/systest/record.sh]
  - name: systest-fs-quota
    match: {source: fs, object: /org/kernel/fs/mnt/quota}
    run: [/usr/local/lib/systest/record.sh]
"""


def by_seq(events):
    """The recorded events in keventd's order (its seqnum)."""
    return sorted(events.values(), key=lambda e: int(e["KEVENT_SEQNUM"]))


def expect(env, **want):
    got = {k: env.get("KEVENT_" + k.upper()) for k in want}
    if got != want:
        raise Fail("expected %r, got %r (event %r)" % (want, got, env))


def wait_signal(vm, rule, signal, what):
    """The first event of rule with signal, waited for (bounded)."""
    vm.wait("grep -lx KEVENT_SIGNAL=%s /run/systest/events/%s-fs-*" % (signal, rule), 30, what)
    for e in by_seq(vm.events("%s-fs-*" % rule)):
        if e.get("KEVENT_SIGNAL") == signal:
            return e
    raise Fail("the event file of %s vanished" % signal)


def root(vm):
    # at start-up, past a threshold: one event with Initial, object "/org/kernel/fs/"
    vm.sh("mkdir -p /etc/keventd && printf 'fs:\\n  /: {space_low: 99%%}\\n' "
          ">/etc/keventd/keventd.yaml && rm -rf /run/systest/events && "
          "systemctl restart keventd")
    e = wait_signal(vm, "systest-fs-root", "space-low", "the root file system's space-low")
    dev = vm.sh("findmnt -no SOURCE /").strip()
    expect(e, object="/org/kernel/fs/", type="fs", source="fs", mountpoint="/",
           device=dev, fstype="ext4", initial="yes")
    if not 0 <= int(e["KEVENT_AVAIL_PERCENT"]) < 99:
        raise Fail("expected Avail-Percent under 99, got %r" % e)
    vm.sh("rm -f /etc/keventd/keventd.yaml && rm -rf /run/systest/events && "
          "systemctl restart keventd")
    # a remount of "/" is the root file system's too
    try:
        vm.sh("mount -o remount,noatime /")
        e = wait_signal(vm, "systest-fs-root", "remount", "the root file system's remount")
    finally:
        vm.sh("mount -o remount,relatime /")
    expect(e, object="/org/kernel/fs/", mountpoint="/", device=dev)
    if "noatime" not in e["KEVENT_OPTIONS"] or "relatime" not in e["KEVENT_PREVIOUS_OPTIONS"]:
        raise Fail("expected noatime now and relatime before, got %r" % e)


def quota(vm):
    vm.sh("journalctl -b -u keventd --no-pager | grep -q \"VFS_DQUOT family's quota warnings\"",
          what="keventd to have subscribed to the VFS_DQUOT family")
    vm.sh("rm -rf /run/systest/events\n"
          "id qtest >/dev/null 2>&1 || useradd -M -u %d qtest\n"
          "truncate -s 64M %s && mkfs.ext4 -q -F -O quota -E quotatype=usrquota:grpquota %s\n"
          "mkdir -p %s && mount -o loop,usrquota,grpquota %s %s\n"
          "install -d -o qtest %s/qtest\n"
          # blocks in KiB: soft 4 MiB, hard 8 MiB; inodes: soft 3, hard 5
          "setquota -u qtest 4096 8192 3 5 %s\n" % (UID, IMG, IMG, MNT, IMG, MNT, MNT, MNT))
    wait_signal(vm, "systest-fs-quota", "mount", "the quota file system's mount event")
    d = MNT + "/qtest"
    as_user = "runuser -u qtest -- "
    # blocks: over the soft limit, then the hard one (refused), then freed
    vm.sh(as_user + "fallocate -l 6M %s/a" % d)
    wait_signal(vm, "systest-fs-quota", "block-soft", "block-soft")
    rc, out, err = vm.run(as_user + "fallocate -l 4M %s/b" % d)
    if rc == 0 or "quota" not in err.lower():
        raise Fail("expected the hard limit to refuse 4 MiB more, got %d %r" % (rc, err))
    wait_signal(vm, "systest-fs-quota", "block-hard", "block-hard")
    vm.sh(as_user + "rm -f %s/a %s/b" % (d, d))
    wait_signal(vm, "systest-fs-quota", "block-below-soft", "block-below-soft")
    # inodes: the directory is one; the fourth is over the soft limit, the
    # sixth refused; then one by one back below hard and soft
    vm.sh(as_user + "touch %s/i1 %s/i2 %s/i3" % (d, d, d))
    wait_signal(vm, "systest-fs-quota", "inode-soft", "inode-soft")
    vm.sh(as_user + "touch %s/i4" % d)
    if vm.ok(as_user + "touch %s/i5" % d):
        raise Fail("expected the inode hard limit (5) to refuse a sixth inode")
    wait_signal(vm, "systest-fs-quota", "inode-hard", "inode-hard")
    vm.sh(as_user + "rm %s/i4" % d)
    wait_signal(vm, "systest-fs-quota", "inode-below-hard", "inode-below-hard")
    vm.sh(as_user + "rm %s/i3" % d)
    wait_signal(vm, "systest-fs-quota", "inode-below-soft", "inode-below-soft")

    loop = vm.sh("findmnt -no SOURCE %s" % MNT).strip()
    majmin = vm.sh("findmnt -no MAJ:MIN %s" % MNT).strip()
    warnings = [e for e in by_seq(vm.events("systest-fs-quota-fs-*"))
                if e["KEVENT_SIGNAL"] not in ("mount", "umount")]
    order = [e["KEVENT_SIGNAL"] for e in warnings]
    want = ["block-soft", "block-hard", "block-below-soft", "inode-soft", "inode-hard",
            "inode-below-hard", "inode-below-soft"]
    if order != want:
        raise Fail("expected the warnings %r in this order, got %r" % (want, order))
    for e in warnings:
        expect(e, type="fs", object="/org/kernel/fs/mnt/quota", mountpoint=MNT,
               device="%s %s" % (majmin, loop), fstype="ext4", quota_type="user",
               id=str(UID), name="qtest", caller_uid=str(UID))
    vm.sh("umount %s && rm -f %s" % (MNT, IMG))


def run(vm):
    vm.sh("cat > /etc/keventd/rules.d/62-systest-fs.yaml <<'EOF'\n%sEOF\nkeventctl reload" % RULES)
    try:
        root(vm)
        quota(vm)
    finally:
        # the quota's user goes too: the purge scenario finds /etc/passwd
        # and /etc/group as they were before the packages came
        vm.run("umount %s; rm -f %s /etc/keventd/rules.d/62-systest-fs.yaml "
               "/etc/keventd/keventd.yaml; keventctl reload; userdel qtest"
               % (MNT, IMG))

# SPDX-License-Identifier: GPL-2.0-or-later
"""The fs source on a booted Debian: the root file system is reported as
/org/kernel/fs/ (already past a threshold at start-up: Initial; a remount),
and a user over the quota of an ext4 with the quota feature becomes the
kernel's VFS_DQUOT warnings as fs events: soft, hard and below, for blocks
and inodes, with the user's id, name and the caller's uid; an ext4 error
(trigger_fs_error) with errors=remount-ro is the fs source's `error`
(EUCLEAN), then its `remount-ro` within a second or so.  The quota
warnings reach the user instance of the user they concern (keventd(8),
USER INSTANCE) and not another user's."""
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
  - name: systest-fs-err
    match: {source: fs, object: /org/kernel/fs/mnt/fserr}
    run: [/usr/local/lib/systest/record.sh]
"""
# each user's instance records the quota warnings it gets
QUOTA_RULES = """rules:
  - name: systest-quota
    match: {source: fs, object: /org/kernel/fs/mnt/quota, signal: "[bi]*"}
    shell: 'echo "$KEVENT_SIGNAL" >>"$HOME/quota"'
"""
OTHER_UID = 40124  # a user of no account, with no quota here
ERR_IMG = "/var/tmp/systest-fserr.img"
ERR_MNT = "/mnt/fserr"


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
    homes = {}
    for unit, uid in (("systest-uq", UID), ("systest-uo", OTHER_UID)):
        homes[unit] = vm.user_instance(unit, uid, QUOTA_RULES)
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
    # the user's own instance got them, in order; the other user's none
    vm.wait("[ $(cat %s/quota 2>/dev/null | wc -l) -ge %d ]" % (homes["systest-uq"][0], len(want)),
            30, "the warnings at qtest's own instance")
    got = vm.sh("cat %s/quota 2>/dev/null || true" % homes["systest-uq"][0]).split()
    if got != want:
        raise Fail("expected qtest's own instance to get the warnings %r, got %r" % (want, got))
    vm.user_idle(homes["systest-uo"][1], "the other user's instance idle")
    if vm.ok("test -e %s/quota" % homes["systest-uo"][0]):
        raise Fail("expected no quota warning of qtest's at another user's instance")
    vm.figure("quota warnings to users", "qtest's instance got all %d; uid %d's none"
              % (len(want), OTHER_UID))
    for unit in homes:
        vm.stop_user_instance(unit)
    vm.sh("umount %s && rm -f %s" % (MNT, IMG))


def fs_error(vm):
    vm.sh("rm -rf /run/systest/events && truncate -s 32M %s && mkfs.ext4 -q -F %s && "
          "mkdir -p %s && mount -o loop,errors=remount-ro %s %s"
          % (ERR_IMG, ERR_IMG, ERR_MNT, ERR_IMG, ERR_MNT))
    wait_signal(vm, "systest-fs-err", "mount", "the error file system's mount event")
    dev = vm.sh("basename $(findmnt -no SOURCE %s)" % ERR_MNT).strip()
    vm.sh("echo 1 > /sys/fs/ext4/%s/trigger_fs_error" % dev)
    e = wait_signal(vm, "systest-fs-err", "error", "the error event")
    expect(e, type="fs", object="/org/kernel/fs/mnt/fserr", mountpoint=ERR_MNT, error="EUCLEAN")
    r = wait_signal(vm, "systest-fs-err", "remount-ro", "the remount-ro after the error")
    if int(r["KEVENT_SEQNUM"]) <= int(e["KEVENT_SEQNUM"]):
        raise Fail("expected the remount-ro after the error, got %r then %r" % (e, r))
    vm.sh("umount %s && rm -f %s" % (ERR_MNT, ERR_IMG))


def run(vm):
    vm.sh("cat > /etc/keventd/rules.d/62-systest-fs.yaml <<'EOF'\n%sEOF\nkeventctl reload" % RULES)
    try:
        root(vm)
        quota(vm)
        fs_error(vm)
    finally:
        # the quota's user goes too: the purge scenario finds /etc/passwd
        # and /etc/group as they were before the packages came
        vm.stop_user_instance("systest-uq")
        vm.stop_user_instance("systest-uo")
        vm.run("umount %s; umount %s; rm -f %s %s /etc/keventd/rules.d/62-systest-fs.yaml "
               "/etc/keventd/keventd.yaml; keventctl reload; userdel qtest"
               % (MNT, ERR_MNT, IMG, ERR_IMG))

# SPDX-License-Identifier: GPL-2.0-or-later
"""A RAID1 array on two hot-plugged virtio disks, driven with mdadm: a
failed member is failed-device and degraded; a member added again is a
recovery with every 10 % step, its end, the member active and the array
whole; a check is check-start, its steps and check-done with its
mismatch count; keventd restarted while the array is degraded says so
once with Initial: yes.  The object is the array's udev object.  The
shipped condition md-degraded (30-conditions.yaml) holds from the failure,
clears within a second of optimal, and holds across keventd's restart with
the same since and count (the start-up check confirms it, no new set)."""
import datetime
import json
import os
import subprocess
import time

from systest import Fail

KERNELS = ("6.1", "6.12")
SERIALS = ("KEVENT-MD-1", "KEVENT-MD-2")
DISK_MB = 48
# KiB/s: a sync of the 48 MB member takes some 25 s, each 10 % step
# seconds apart, whatever the host's speed
SPEED = 2000
STEPS = ["%d" % p for p in range(10, 100, 10)]

def md_events(vm):
    """The md source's events recorded so far, in keventd's order."""
    ev = vm.events("systest-md-md-*")
    return [e for _, e in sorted(ev.items(), key=lambda kv: (int(kv[1]["KEVENT_SEQNUM"]),
                                                             kv[0]))]


def wait_signal(vm, signal, timeout, what, **props):
    """Waits for an md event with signal (and the KEVENT_ props given)."""
    deadline = time.monotonic() + timeout
    while True:
        evs = md_events(vm)
        for e in evs:
            if e.get("KEVENT_SIGNAL") == signal and \
                    all(e.get("KEVENT_" + k) == v for k, v in props.items()):
                return evs
        if time.monotonic() > deadline:
            raise Fail("expected %s (md %s %r) within %d s; md events: %r"
                       % (what, signal, props, timeout,
                          [(e.get("KEVENT_SIGNAL"), e.get("KEVENT_PERCENT"),
                            e.get("KEVENT_MEMBER")) for e in evs]))
        time.sleep(0.5)


def md_row(vm, obj, all_rows=False):
    """keventctl conditions --json's md-degraded row of obj, or None."""
    out = vm.sh("keventctl conditions --json%s" % (" --all" if all_rows else ""))
    rows = [r for r in map(json.loads, out.splitlines())
            if r.get("condition") == "md-degraded" and r.get("object") == obj]
    return rows[-1] if rows else None


def utc_s(text):
    """A time of keventctl conditions --json (UTC, to the second)."""
    t = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp())


def signals(evs):
    return [e["KEVENT_SIGNAL"] + (":" + e["KEVENT_PERCENT"] if "KEVENT_PERCENT" in e else "")
            for e in evs]


def expect_sequence(evs, want, what):
    got = signals(evs)
    if got != want:
        raise Fail("expected the md events of %s to be\n  %s\ngot\n  %s" % (what, want, got))


def run(vm):
    imgs = []
    for i, serial in enumerate(SERIALS):
        img = os.path.join(vm.workdir, "md%d.img" % i)
        subprocess.run(["truncate", "-s", "0", img], check=True)
        subprocess.run(["truncate", "-s", "%dM" % DISK_MB, img], check=True)
        vm.qmp.cmd("blockdev-add", driver="raw", **{"node-name": "md%d" % i},
                   file={"driver": "file", "filename": img})
        vm.qmp.cmd("device_add", driver="virtio-blk-pci", id="mddisk%d" % i,
                   drive="md%d" % i, serial=serial)
        imgs.append(img)
    for serial in SERIALS:
        vm.wait("test -b /dev/disk/by-id/virtio-%s" % serial, 60, "the disk %s" % serial)
    b, c = (vm.sh("basename $(readlink -f /dev/disk/by-id/virtio-%s)" % s).strip()
            for s in SERIALS)

    # the rule systest-md (80-systest.yaml) records every md event; the md
    # driver is loaded here, after keventd started: the source begins then
    vm.sh("rm -rf /run/systest/events && modprobe raid1 && "
          "echo %d > /proc/sys/dev/raid/speed_limit_max && "
          "echo %d > /proc/sys/dev/raid/speed_limit_min" % (SPEED, SPEED // 2))
    # two blank disks are the same: no first resync needed
    vm.sh("mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --bitmap=none "
          "--assume-clean /dev/%s /dev/%s </dev/null" % (b, c), timeout=60)
    vm.wait("grep -q '^md0 : active raid1' /proc/mdstat", 30, "md0 in /proc/mdstat")
    udev_obj = "/org/kernel" + vm.sh("udevadm info -q path /dev/md0").strip()
    if udev_obj != "/org/kernel/devices/virtual/block/md0":
        raise Fail("expected md0 at /devices/virtual/block/md0, udev says %r" % udev_obj)

    # a member fails
    cur = vm.cursor()
    t0 = time.monotonic()
    vm.sh("mdadm /dev/md0 --fail /dev/%s" % c)
    evs = wait_signal(vm, "degraded", 30, "degraded after mdadm --fail")
    evs = wait_signal(vm, "failed-device", 5, "failed-device after mdadm --fail", MEMBER=c)
    vm.figure("mdadm --fail -> degraded recorded (s, %s)" % vm.kver, round(time.monotonic() - t0, 2))
    expect_sequence(evs, ["failed-device", "degraded"], "mdadm --fail")
    for e in evs:
        if e["KEVENT_OBJECT"] != udev_obj or e["KEVENT_TYPE"] != "storage":
            raise Fail("expected storage %s, got %s %s"
                       % (udev_obj, e["KEVENT_TYPE"], e["KEVENT_OBJECT"]))
        for k, v in (("LEVEL", "raid1"), ("RAID_DISKS", "2"), ("DEGRADED", "1")):
            if e.get("KEVENT_" + k) != v:
                raise Fail("expected %s: %s in %s, got %r" % (k, v, e["KEVENT_SIGNAL"], e))
        if not e.get("KEVENT_ARRAY_STATE"):
            raise Fail("expected Array-State: in %r" % e)
    # the shipped rules (56-md.yaml) log it
    e = vm.wait_journal(cur, "md0 (raid1): member %s failed" % c, 30,
                        "the shipped rule md-failed-device's log line",
                        "SYSLOG_IDENTIFIER=keventd")
    if e.get("PRIORITY") != "3":
        raise Fail("expected the failed member logged at daemon.err, got priority %s"
                   % e.get("PRIORITY"))
    vm.wait_journal(cur, "md0 (raid1) is degraded: 1 of 2 members missing", 30,
                    "the shipped rule md-degraded's log line", "SYSLOG_IDENTIFIER=keventd")
    # the condition holds: critical, so the plugin check says 2
    row = md_row(vm, udev_obj)
    if not row or not row["holds"] or row["severity"] != "critical":
        raise Fail("expected md-degraded to hold for %s, critical, got %r" % (udev_obj, row))
    rc, out, _ = vm.run("keventctl conditions --check md-degraded")
    if rc != 2:
        raise Fail("expected conditions --check md-degraded to exit 2, got %d: %s" % (rc, out))

    # taken out and added again: a recovery, each step, and the array whole
    vm.sh("mdadm /dev/md0 --remove /dev/%s && mdadm --zero-superblock /dev/%s" % (c, c))
    n0 = len(md_events(vm))
    t0 = time.monotonic()
    vm.sh("mdadm /dev/md0 --add /dev/%s" % c)
    evs = wait_signal(vm, "optimal", 180, "optimal after the recovery")
    vm.figure("recovery of %d MB at %d KiB/s (s, %s)" % (DISK_MB, SPEED, vm.kver),
              round(time.monotonic() - t0, 1))
    rec = evs[n0:]
    expect_sequence(rec, ["recovery-start"] + ["progress:" + p for p in STEPS]
                    + ["recovery-done", "spare-active", "optimal"], "mdadm --add")
    if any(e.get("KEVENT_ACTION") != "recover" for e in rec[:11]):
        raise Fail("expected Action: recover in the recovery's events: %r" % rec[:11])
    if rec[10].get("KEVENT_RESULT") != "done" or rec[11].get("KEVENT_MEMBER") != c:
        raise Fail("expected recovery-done Result: done and spare-active Member: %s: %r"
                   % (c, rec[10:12]))
    # whole again: the condition cleared by the optimal event, at once
    row = md_row(vm, udev_obj, all_rows=True)
    if not row or row["holds"] or not row.get("cleared"):
        raise Fail("expected md-degraded cleared after optimal, got %r" % row)
    # to the second: the table's times are whole seconds
    lag = utc_s(row["cleared"]) - int(rec[-1]["KEVENT_TIMESTAMP"]) // 1000000000
    if not 0 <= lag <= 1:
        raise Fail("expected md-degraded cleared within a second of optimal, got %r after the "
                   "optimal event of %s" % (row, rec[-1]["KEVENT_TIMESTAMP"]))
    vm.figure("optimal -> md-degraded cleared (whole s, %s)" % vm.kver, lag)
    vm.figure("progress events of the recovery (%s)" % vm.kver,
              "%d of 9" % sum(1 for e in rec if e["KEVENT_SIGNAL"] == "progress"))

    # a check
    n0 = len(md_events(vm))
    vm.sh("echo check > /sys/block/md0/md/sync_action")
    evs = wait_signal(vm, "check-done", 180, "check-done after echo check")
    chk = evs[n0:]
    expect_sequence(chk, ["check-start"] + ["progress:" + p for p in STEPS] + ["check-done"],
                    "a check")
    done = chk[-1]
    want = vm.sh("cat /sys/block/md0/md/mismatch_cnt").strip()
    if done.get("KEVENT_MISMATCH_COUNT") != want or done.get("KEVENT_RESULT") != "done":
        raise Fail("expected check-done with Mismatch-Count: %s and Result: done, got %r"
                   % (want, done))

    # degraded when keventd starts: said once, Initial: yes
    vm.sh("mdadm /dev/md0 --fail /dev/%s" % c)
    wait_signal(vm, "degraded", 30, "degraded after the second mdadm --fail")
    before = md_row(vm, udev_obj)
    if not before or not before["holds"]:
        raise Fail("expected md-degraded to hold again, got %r" % before)
    vm.sh("systemctl stop keventd && rm -rf /run/systest/events && systemctl start keventd")
    evs = wait_signal(vm, "degraded", 30, "degraded at keventd's start", INITIAL="yes")
    if signals(evs) != ["degraded"]:
        raise Fail("expected only degraded (Initial: yes) at keventd's start, got %s"
                   % signals(evs))
    after = md_row(vm, udev_obj)
    if not after or not after["holds"] or (after["since_ns"], after["count"]) != \
            (before["since_ns"], before["count"]):
        raise Fail("expected md-degraded to hold across the restart with the same since and "
                   "count, got %r before and %r after" % (before, after))

    vm.sh("mdadm --stop /dev/md0")
    for i in range(len(SERIALS)):
        vm.qmp.cmd("device_del", id="mddisk%d" % i)
        vm.qmp.wait_event("DEVICE_DELETED", 60, {"device": "mddisk%d" % i})
        vm.qmp.cmd("blockdev-del", **{"node-name": "md%d" % i})
    for img in imgs:
        os.unlink(img)

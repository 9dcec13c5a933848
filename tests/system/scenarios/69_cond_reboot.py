# SPDX-License-Identifier: GPL-2.0-or-later
"""The condition table across a reboot of the booted Debian (keventd.rules(5),
CONDITIONS; keventd(8), --lib-dir).  A RAID1 array md1 on two virtio
disks that stay in the machine (vm.attach_disk), not in mdadm.conf, loses
a member: the shipped md-degraded holds, a row keyed by the array's UUID.
After a clean reboot the array is assembled degraded under another name
(md127, as an array left out of mdadm.conf is), and the md source's
start-up report confirms the row: the same since and count, the object
now md127's, no set told again.  The member added back, the
row clears within a second of the optimal event.  Two small ext4 file systems, both
past keventd.yaml's space_low, hold the shipped condition fs-space-low:
/mnt/full is in /etc/fstab, /mnt/gone is mounted by hand.  /mnt/full's
row is acknowledged.  After a clean reboot, keventd's start-up check
(the fs source reports what it finds at start) confirms /mnt/full's row
as it was (same since, count and acknowledgement; no set told again) and
clears /mnt/gone's, no longer mounted, once: its clear is the one
condition event told after the reboot."""
import json
import time

from systest import Fail, utc_seconds

KERNELS = ("6.1", "6.12")

CONFIG = """fs:
  /mnt/full: {space_low: 50%}
  /mnt/gone: {space_low: 50%}
"""
RULES = """rules:
  - name: systest-cond
    match: {source: condition, payload: {Condition: [fs-space-low, md-degraded]}}
    run: [/usr/local/lib/systest/record.sh]
"""
FULL, GONE = "/org/kernel/fs/mnt/full", "/org/kernel/fs/mnt/gone"
# md1: 57_md's md0 may have left its row
MD = "/org/kernel/devices/virtual/block/md1"
MD_PREFIX = "/org/kernel/devices/virtual/block/md"
MD_DISKS = (("mdr0", "KEVENT-MDR-1"), ("mdr1", "KEVENT-MDR-2"))
CHECK_DONE = "conditions: start-up check done"


def rows(vm, name="fs-space-low"):
    """name's rows, all of them (also the cleared), by object."""
    out = vm.sh("keventctl conditions --json --all")
    return {r["object"]: r for r in map(json.loads, out.splitlines())
            if r.get("condition") == name}


def told(vm, uuid=None):
    """The condition events of the two file systems (and of the array of
    that UUID) recorded since the boot: (signal, object)."""
    ev = vm.events("systest-cond-condition-*")
    return sorted((e["KEVENT_SIGNAL"], e["KEVENT_OBJECT"]) for e in ev.values()
                  if e["KEVENT_OBJECT"] in (FULL, GONE)
                  or (uuid and e.get("KEVENT_KEY") == uuid))


def wait_told(vm, signal, obj, timeout, what, uuid=None):
    """Waits until the rule systest-cond has recorded (signal, obj)."""
    deadline = time.monotonic() + timeout
    while (signal, obj) not in told(vm, uuid):
        if time.monotonic() > deadline:
            raise Fail("expected %s within %d s; recorded %r" % (what, timeout, told(vm, uuid)))
        time.sleep(0.5)  # polling the recorded events, not a synchronisation


def run(vm):
    try:
        before = setup(vm)
        md_before = setup_md(vm)
        vm.reboot()
        vm.wait("journalctl -b -u keventd -o cat | grep -q '%s'" % CHECK_DONE, 120,
                "keventd's start-up check of the conditions done")
        check(vm, before)
        check_md(vm, md_before)
    finally:
        vm.run("umount /mnt/full /mnt/gone; sed -i '/systest-full/d' /etc/fstab; "
               "mdadm --stop --scan; "
               "rm -f /var/tmp/systest-full.img /var/tmp/systest-gone.img "
               "/etc/keventd/keventd.yaml /etc/keventd/rules.d/69-systest-cond.yaml; "
               "systemctl restart keventd")
        for dev, _ in MD_DISKS:
            if dev in vm.disks:
                vm.detach_disk(dev)


def setup(vm):
    vm.sh("set -e\n"
          "for n in full gone; do\n"
          "  truncate -s 0 /var/tmp/systest-$n.img; truncate -s 32M /var/tmp/systest-$n.img\n"
          "  mkfs.ext4 -q -F -L systest-$n /var/tmp/systest-$n.img; mkdir -p /mnt/$n\n"
          "done\n"
          "echo '/var/tmp/systest-full.img /mnt/full ext4 loop 0 0' >>/etc/fstab\n"
          "systemctl daemon-reload\n"
          "mount /mnt/full; mount -o loop /var/tmp/systest-gone.img /mnt/gone\n"
          "for n in full gone; do dd if=/dev/zero of=/mnt/$n/fill bs=1M count=24 status=none; "
          "done; sync\n"
          "cat >/etc/keventd/keventd.yaml <<'EOF'\n%sEOF\n"
          "cat >/etc/keventd/rules.d/69-systest-cond.yaml <<'EOF'\n%sEOF\n"
          "rm -rf /run/systest/events; systemctl restart keventd" % (CONFIG, RULES),
          timeout=120)
    # (the table may hold rows of other scenarios: only these two count)
    deadline = time.monotonic() + 30
    while not all(r.get(o, {}).get("holds") for r in [rows(vm)] for o in (FULL, GONE)):
        if time.monotonic() > deadline:
            raise Fail("expected fs-space-low holding for /mnt/full and /mnt/gone within 30 s, "
                       "got %r" % rows(vm))
        time.sleep(0.5)  # polling the table, not a synchronisation
    vm.sh("keventctl ack fs-space-low %s --note 'systest: known'" % FULL)
    r = rows(vm)
    for obj in (FULL, GONE):
        if obj not in r or not r[obj]["holds"]:
            raise Fail("expected fs-space-low to hold for %s before the reboot, got %r"
                       % (obj, r.get(obj)))
    if not r[FULL].get("acked"):
        raise Fail("expected %s's row acknowledged, got %r" % (FULL, r[FULL]))
    return r


def setup_md(vm):
    """md1 on two disks that stay, one member failed and taken out:
    degraded, md-degraded holds for its UUID."""
    for dev, serial in MD_DISKS:
        vm.attach_disk(dev, 32, serial)
    for _, serial in MD_DISKS:
        vm.wait("test -b /dev/disk/by-id/virtio-%s" % serial, 60, "the disk %s" % serial)
    b, c = (vm.disk_name(s) for _, s in MD_DISKS)
    vm.sh("modprobe raid1 && mdadm --create /dev/md1 --run --level=1 --raid-devices=2 "
          "--bitmap=none --assume-clean /dev/%s /dev/%s </dev/null" % (b, c), timeout=60)
    uuid = vm.sh("cat /sys/block/md1/md/uuid").strip()
    vm.sh("mdadm /dev/md1 --fail /dev/%s && mdadm /dev/md1 --remove /dev/%s && "
          "mdadm --zero-superblock /dev/%s" % (c, c, c))
    vm.wait("keventctl conditions --json | grep md-degraded | grep -q '\"key\":\"%s\"'"
            % uuid, 30, "md-degraded holding for md1")
    row = md_row(vm, uuid)
    if not row["holds"] or row["severity"] != "critical" or row["object"] != MD:
        raise Fail("expected md-degraded to hold for md1 (%s), critical, got %r" % (uuid, row))
    return row


def md_row(vm, uuid):
    """md-degraded's row of the array of uuid (also when cleared)."""
    return {r["key"]: r for r in rows(vm, "md-degraded").values()}.get(uuid)


def check(vm, before):
    wait_told(vm, "clear", GONE, 30, "/mnt/gone's clear recorded")
    r = rows(vm)
    full = r.get(FULL)
    keep = ("since_ns", "count", "acked")
    if not full or not full["holds"] or \
            tuple(full.get(k) for k in keep) != tuple(before[FULL].get(k) for k in keep):
        raise Fail("expected /mnt/full's row to hold across the reboot as it was, got %r "
                   "before and %r after" % (before[FULL], full))
    gone = r[GONE]
    if gone["holds"] or gone["since_ns"] != before[GONE]["since_ns"] or not gone.get("reason"):
        raise Fail("expected /mnt/gone's row cleared with a reason, got %r" % gone)
    vm.figure("fs-space-low after the reboot", "kept %s, cleared %s (%s)"
              % (FULL, GONE, gone["reason"]))


def check_md(vm, before):
    uuid = before["key"]
    # the array as it came up: whatever its name, the one of that UUID
    name = vm.sh("for d in /sys/block/md*; do [ \"$(cat $d/md/uuid 2>/dev/null)\" = %s ] && "
                 "basename $d; done; true" % uuid).strip()
    if not name:
        raise Fail("expected the array %s assembled again at boot: %s"
                   % (uuid, vm.sh("cat /proc/mdstat")))
    obj = MD_PREFIX + name[2:]
    row = md_row(vm, uuid)
    keep = ("since_ns", "count", "severity")
    if not row or not row["holds"] or row["object"] != obj or \
            tuple(row.get(k) for k in keep) != tuple(before.get(k) for k in keep):
        raise Fail("expected md-degraded to hold for %s across the reboot as it was, now of %s; "
                   "got %r before and %r after" % (uuid, obj, before, row))
    got = told(vm, uuid)
    if got != [("clear", GONE)]:
        raise Fail("expected one condition event after the reboot, /mnt/gone's clear; got %r"
                   % got)
    vm.figure("md-degraded across the reboot (%s)" % vm.kver,
              "kept, the array now %s" % name)
    # the member back: a recovery, then optimal clears the row at once
    c = vm.disk_name(MD_DISKS[1][1])
    vm.sh("mdadm /dev/%s --add /dev/%s" % (name, c))
    wait_told(vm, "clear", obj, 180, "md-degraded cleared after the member was added back",
              uuid)
    row = md_row(vm, uuid)
    opt = [e for e in vm.events("systest-md-md-*").values()
           if e["KEVENT_SIGNAL"] == "optimal" and e["KEVENT_OBJECT"] == obj]
    if row["holds"] or not row.get("cleared") or len(opt) != 1:
        raise Fail("expected md-degraded cleared by one optimal event, got %r and %r"
                   % (row, opt))
    # to the second: the table's times are whole seconds
    lag = utc_seconds(row["cleared"]) - int(opt[0]["KEVENT_TIMESTAMP"]) // 1000000000
    if not 0 <= lag <= 1:
        raise Fail("expected md-degraded cleared within a second of optimal, got %r after "
                   "the optimal event of %s" % (row, opt[0]["KEVENT_TIMESTAMP"]))
    got = told(vm, uuid)
    if got != sorted([("clear", GONE), ("clear", obj)]):
        raise Fail("expected the clears of /mnt/gone and the array after the reboot and "
                   "nothing else, got %r" % got)
    vm.figure("optimal -> md-degraded cleared (whole s, %s)" % vm.kver, lag)

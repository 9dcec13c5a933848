# SPDX-License-Identifier: GPL-2.0-or-later
"""The kmsg source on a booted Debian: a hot-plugged virtio disk whose
host side fails reads with EIO (QEMU's blkdebug) is the block layer's
"I/O error" record, an io-error event on the disk's udev object with its
Disk, Sector, Op and Error; a unit over its MemoryMax= is the kernel's
OOM kill, an oom-kill event naming the unit's cgroup, the pid and the
command killed.  Across a SIGKILL of keventd (systemd starts it again),
the kernel's own info records (drop_caches) each run their rule: the
exact set of Kmsg-Seqnum the kernel wrote, none lost, and none twice
unless flagged KEVENT_REDELIVERED=1 (keventd(8), kmsg.pos)."""
import os
import subprocess
import time

from systest import Fail

KERNELS = ("6.1", "6.12")

SERIAL = "KEVENT-EIO-1"
DISK_MB = 64
# the one 512-byte sector whose reads fail: far from where the kernel's
# partition scan and udev's blkid look, so only the scenario's own read
# meets it
SECTOR = 40000
UNIT = "kmsg-hog"
RULES = """\
rules:
  - name: systest-kmsg-io
    match: {source: kmsg, signal: io-error}
    run: [/usr/local/lib/systest/record.sh]
  - name: systest-kmsg-oom
    match: {source: kmsg, signal: oom-kill}
    run: [/usr/local/lib/systest/record.sh]
  - name: systest-kmsg-disk
    match:
      type: storage
      signal: add
      payload: {DEVTYPE: disk, ID_SERIAL: "%s"}
    run: [/usr/local/lib/systest/record.sh]
""" % SERIAL


def expect(env, **want):
    got = {k: env.get("KEVENT_" + k.upper()) for k in want}
    if got != want:
        raise Fail("expected %r, got %r (event %r)" % (want, got, env))


def only(vm, pattern, what):
    evs = vm.wait_event_file(pattern, 30, what)
    return sorted(evs.values(), key=lambda e: int(e["KEVENT_SEQNUM"]))


def io_error(vm):
    img = os.path.join(vm.workdir, "eio.img")
    subprocess.run(["truncate", "-s", "0", img], check=True)
    subprocess.run(["truncate", "-s", "%dM" % DISK_MB, img], check=True)
    # raw over blkdebug over the file: raw's reads are blkdebug's read_aio
    # event, and the rule fails those that cover SECTOR with EIO
    vm.qmp.cmd("blockdev-add", driver="raw", **{"node-name": "eio0"},
               file={"driver": "blkdebug",
                     "inject-error": [{"event": "read_aio", "errno": 5, "sector": SECTOR}],
                     "image": {"driver": "file", "filename": img}})
    vm.qmp.cmd("device_add", driver="virtio-blk-pci", id="eiodisk", drive="eio0",
               serial=SERIAL)
    try:
        vm.wait("test -b /dev/disk/by-id/virtio-%s" % SERIAL, 60, "the disk %s" % SERIAL)
        disk = vm.sh("basename $(readlink -f /dev/disk/by-id/virtio-%s)" % SERIAL).strip()
        udev_obj = "/org/kernel" + vm.sh("udevadm info -q path /dev/%s" % disk).strip()
        add = only(vm, "systest-kmsg-disk-*", "the disk's udev add event")[0]
        expect(add, object=udev_obj)

        t0 = time.monotonic()
        rc, _, err = vm.run("dd if=/dev/%s of=/dev/null bs=4096 iflag=direct skip=%d count=1"
                            % (disk, SECTOR // 8))
        if rc == 0 or "Input/output error" not in err:
            raise Fail("expected the read of sector %d to fail with EIO, got %d %r"
                       % (SECTOR, rc, err))
        vm.wait("grep -lx KEVENT_SECTOR=%d /run/systest/events/systest-kmsg-io-kmsg-*" % SECTOR,
                30, "an io-error event of sector %d after the failed read" % SECTOR)
        evs = only(vm, "systest-kmsg-io-kmsg-*", "the io-error event")
        vm.figure("failed read -> io-error recorded (s, %s)" % vm.kver,
                  round(time.monotonic() - t0, 2))
        mine = [e for e in evs if e.get("KEVENT_SECTOR") == str(SECTOR)]
        if not mine:
            raise Fail("expected an io-error of sector %d, got %r" % (SECTOR, evs))
        e = mine[0]
        expect(e, source="kmsg", type="storage", signal="io-error", object=udev_obj,
               disk=disk, op="READ", error="I/O", priority="err", facility="kern")
        if "I/O error, dev %s, sector %d" % (disk, SECTOR) not in e.get("KEVENT_MESSAGE", ""):
            raise Fail("expected the block layer's line in Message:, got %r" % e)
        if e.get("KEVENT_KMSG_SEQNUM") != e.get("KEVENT_SEQNUM"):
            raise Fail("expected Kmsg-Seqnum: to be the event's seqnum, got %r" % e)
    finally:
        vm.qmp.cmd("device_del", id="eiodisk")
        vm.qmp.wait_event("DEVICE_DELETED", 60, {"device": "eiodisk"})
        vm.qmp.cmd("blockdev-del", **{"node-name": "eio0"})
        os.unlink(img)


def oom_kill(vm):
    # dd's 256 MiB buffer, filled from /dev/zero, in a unit allowed 32 MiB
    t0 = time.monotonic()
    vm.sh("systemd-run -p MemoryMax=32M --unit %s dd if=/dev/zero of=/dev/null bs=256M count=1"
          % UNIT)
    e = only(vm, "systest-kmsg-oom-kmsg-*", "an oom-kill event")[0]
    vm.figure("systemd-run -> oom-kill recorded (s, %s)" % vm.kver,
              round(time.monotonic() - t0, 2))
    vm.wait("systemctl show -p Result --value %s.service | grep -qx oom-kill" % UNIT, 30,
            "systemd to see the unit's end as oom-kill")
    pid = vm.show(UNIT + ".service", "ExecMainPID")["ExecMainPID"]
    cg = "/system.slice/%s.service" % UNIT
    expect(e, source="kmsg", signal="oom-kill", object="/org/kernel/mm/oom", memcg=cg,
           task_memcg=cg, constraint="CONSTRAINT_MEMCG", pid=pid, comm="dd", uid="0")


KILL_RULES = """\
rules:
  - name: systest-kmsg-drop
    match:
      source: kmsg
      signal: info
      payload: {Message: "*drop_caches: 1"}
    run: [/usr/local/lib/systest/record.sh]
"""


def kmsg_seqs(vm):
    """The sequence numbers of the kernel's drop_caches records in the
    ring, read with /dev/kmsg's own numbers."""
    out = vm.sh("dd if=/dev/kmsg iflag=nonblock bs=8k 2>/dev/null; true")
    seqs = set()
    for line in out.splitlines():
        head, _, msg = line.partition(";")
        if msg.endswith("drop_caches: 1") and head.count(",") >= 2:
            seqs.add(int(head.split(",")[1]))
    return seqs


def across_a_kill(vm):
    vm.sh("rm -rf /run/systest/events && printf 'kmsg:\\n  priority: info\\n' "
          ">/etc/keventd/keventd.yaml && "
          "cat > /etc/keventd/rules.d/58-systest-kmsg-kill.yaml <<'EOF'\n%sEOF\n"
          "systemctl restart keventd" % KILL_RULES, 90)
    before = kmsg_seqs(vm)
    for i in range(30):
        vm.sh("echo 1 > /proc/sys/vm/drop_caches")
        if i == 15:
            pid = vm.show("keventd.service", "MainPID")["MainPID"]
            vm.sh("kill -9 %s" % pid)
            vm.wait("p=$(systemctl show -p MainPID --value keventd) && [ \"$p\" != %s ] && "
                    "[ \"$p\" != 0 ] && systemctl is-active -q keventd" % pid, 90,
                    "systemd to start keventd again after the kill")
    want = kmsg_seqs(vm) - before
    if len(want) != 30:
        raise Fail("expected the kernel to log 30 drop_caches records, got %d" % len(want))
    vm.wait("[ $(ls /run/systest/events | grep -c '^systest-kmsg-drop-') -ge 30 ]", 60,
            "a run for each of the 30 records")
    runs = vm.events("systest-kmsg-drop-*").values()
    got = [int(e["KEVENT_KMSG_SEQNUM"]) for e in runs]
    if set(got) != want:
        raise Fail("expected exactly the kernel's records %r, got %r"
                   % (sorted(want), sorted(got)))
    twice = [e for e in runs if got.count(int(e["KEVENT_KMSG_SEQNUM"])) > 1
             and e.get("KEVENT_REDELIVERED") != "1" and e.get("KEVENT_SYNTHETIC") != "1"]
    if len(twice) > len(set(int(e["KEVENT_KMSG_SEQNUM"]) for e in twice)):
        raise Fail("expected a record run twice only flagged KEVENT_REDELIVERED=1, got %r"
                   % twice)
    vm.figure("kmsg across SIGKILL (%s)" % vm.kver, "30 records, %d runs, none lost" % len(got))


def run(vm):
    try:
        across_a_kill(vm)
    finally:
        vm.run("rm -f /etc/keventd/rules.d/58-systest-kmsg-kill.yaml /etc/keventd/keventd.yaml; "
               "systemctl restart keventd")
    vm.sh("rm -rf /run/systest/events && "
          "cat > /etc/keventd/rules.d/58-systest-kmsg.yaml <<'EOF'\n%sEOF\nkeventctl reload"
          % RULES)
    try:
        io_error(vm)
        oom_kill(vm)
    finally:
        vm.run("rm -f /etc/keventd/rules.d/58-systest-kmsg.yaml; keventctl reload; "
               "systemctl stop %s; systemctl reset-failed %s" % (UNIT, UNIT))

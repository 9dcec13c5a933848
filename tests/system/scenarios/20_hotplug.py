# SPDX-License-Identifier: GPL-2.0-or-later
"""A disk hot-plugged with QMP device_add fires the shipped storage rule and
the admin's rules with udevd's properties; a handler mounts it, writes on it
and tunes it through /sys, for the whole system to see; device_del fires
the remove rule."""
import os
import subprocess
import tempfile

from systest import Fail

KERNELS = ("6.1",)
SERIAL = "KEVENT-SYSTEST-1"  # virtio-blk: what udev knows as ID_SERIAL


def expect(env, key, value, what):
    if env.get(key) != value:
        raise Fail("expected %s=%s in the %s handler's environment, got %r\n%r"
                   % (key, value, what, env.get(key), env))


def run(vm):
    # a scratch disk with an ext4 file system and a file on it
    img = os.path.join(vm.workdir, "scratch.img")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "hello"), "w") as f:
            f.write("hello from the host\n")
        subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "systest-scratch", "-d", d, img, "16M"],
                       check=True, timeout=60)
    vm.sh("rm -rf /run/systest/events /run/systest/mounted")
    cur = vm.cursor()

    vm.qmp.cmd("blockdev-add", driver="raw", **{"node-name": "scratch"},
               file={"driver": "file", "filename": img})
    vm.qmp.cmd("device_add", driver="virtio-blk-pci", id="scratch0", drive="scratch",
               serial=SERIAL)
    ev = vm.wait_event_file("systest-disk-add-udev-*", 60,
                            "the admin's rule systest-disk-add to run for the hot-plugged disk")
    if len(ev) != 1:
        raise Fail("expected one add event for the disk, got %r" % sorted(ev))
    env = next(iter(ev.values()))
    dev = env.get("KEVENT_DEVNAME", "")
    if not dev.startswith("/dev/vd"):
        raise Fail("expected KEVENT_DEVNAME=/dev/vd?, got %r" % env)
    name = dev[len("/dev/"):]
    for k, v in (("KEVENT_TYPE", "storage"), ("KEVENT_SIGNAL", "add"), ("KEVENT_SOURCE", "udev"),
                 ("KEVENT_ID_SERIAL", SERIAL), ("KEVENT_DEVTYPE", "disk"),
                 ("ACTION", "add"), ("SUBSYSTEM", "block"), ("DEVTYPE", "disk"),
                 ("ID_SERIAL", SERIAL), ("DEVNAME", name)):  # the kernel's, as /sbin/hotplug had it
        expect(env, k, v, "systest-disk-add")
    if not env.get("KEVENT_OBJECT", "").endswith("/block/" + name) or \
            not env["KEVENT_OBJECT"].startswith("/org/kernel/devices/"):
        raise Fail("expected the object /org/kernel/devices/.../block/%s, got %r"
                   % (name, env.get("KEVENT_OBJECT")))

    # the shipped rule (60-storage-hotplug.yaml) logs it with what udev knows
    e = vm.wait_journal(cur, "disk added: %s" % dev, 30, "the shipped rule disk-added's log line",
                        "SYSLOG_IDENTIFIER=keventd")
    want = "disk added: %s id=%s path=%s" % (dev, SERIAL, env.get("KEVENT_ID_PATH"))
    if e["MESSAGE"] != want or e.get("PRIORITY") != "6":
        raise Fail("expected %r at priority 6 (info), got %r at %s"
                   % (want, e["MESSAGE"], e.get("PRIORITY")))

    # an admin's work: mount the disk, write on it, tune it through /sys;
    # the mount is the whole system's (the service makes no namespace)
    vm.wait("test -e /run/systest/mounted", 30, "the systest-disk-mount handler to finish")
    src = vm.sh("findmnt -n -o SOURCE /mnt/systest").strip()
    if src != dev:
        raise Fail("expected %s mounted on /mnt/systest outside keventd's service, got %r"
                   % (dev, src))
    if vm.sh("cat /mnt/systest/hello") != "hello from the host\n":
        raise Fail("expected the scratch disk's file in /mnt/systest")
    ra = vm.sh("cat /sys/block/%s/queue/read_ahead_kb" % name).strip()
    if ra != "4096":
        raise Fail("expected the handler's 4096 in /sys/block/%s/queue/read_ahead_kb, got %s"
                   % (name, ra))
    vm.sh("umount /mnt/systest")

    cur = vm.cursor()
    vm.qmp.cmd("device_del", id="scratch0")
    vm.qmp.wait_event("DEVICE_DELETED", 60, {"device": "scratch0"})
    ev = vm.wait_event_file("systest-disk-remove-udev-*", 60,
                            "the admin's rule systest-disk-remove to run for the unplugged disk")
    env = next(iter(ev.values()))
    for k, v in (("KEVENT_SIGNAL", "remove"), ("ACTION", "remove"), ("KEVENT_DEVNAME", dev),
                 ("KEVENT_ID_SERIAL", SERIAL)):
        expect(env, k, v, "systest-disk-remove")
    vm.wait_journal(cur, "disk removed: %s" % dev, 30, "the shipped rule disk-removed's log line",
                    "SYSLOG_IDENTIFIER=keventd")
    vm.qmp.cmd("blockdev-del", **{"node-name": "scratch"})

    # what the handler wrote is on the disk
    r = subprocess.run(["debugfs", "-R", "cat /handler", img], capture_output=True, text=True,
                       timeout=60)
    if not r.stdout.startswith("written by systest-disk-mount for seqnum "):
        raise Fail("expected the handler's file on the scratch disk, debugfs says %r %r"
                   % (r.stdout, r.stderr))

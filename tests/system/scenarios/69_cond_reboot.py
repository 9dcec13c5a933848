# SPDX-License-Identifier: GPL-2.0-or-later
"""The condition table across a reboot of the booted Debian (keventd.rules(5),
CONDITIONS; keventd(8), --lib-dir).  Two small ext4 file systems, both
past keventd.yaml's space_low, hold the shipped condition fs-space-low:
/mnt/full is in /etc/fstab, /mnt/gone is mounted by hand.  /mnt/full's
row is acknowledged.  After a clean reboot, keventd's start-up check
(the fs source reports what it finds at start) confirms /mnt/full's row
as it was (same since, count and acknowledgement; no set told again) and
clears /mnt/gone's, no longer mounted, once: its clear is the one
condition event told after the reboot."""
import json
import time

from systest import Fail

# Run by name only for now (systest.py ... 69_cond_reboot): it passed alone
# on 6.1, but in the whole sequence /mnt/full's row was never set once
# (tests/system/README.md); until that is understood it stays out of CI.
KERNELS = ()

CONFIG = """fs:
  /mnt/full: {space_low: 50%}
  /mnt/gone: {space_low: 50%}
"""
RULES = """rules:
  - name: systest-cond
    match: {source: condition, payload: {Condition: fs-space-low}}
    run: [/usr/local/lib/systest/record.sh]
"""
FULL, GONE = "/org/kernel/fs/mnt/full", "/org/kernel/fs/mnt/gone"


def rows(vm):
    """fs-space-low's rows, all of them (also the cleared), by object."""
    out = vm.sh("keventctl conditions --json --all")
    return {r["object"]: r for r in map(json.loads, out.splitlines())
            if r.get("condition") == "fs-space-low"}


def told(vm):
    """The condition events of the two file systems recorded since the
    boot: (signal, object)."""
    ev = vm.events("systest-cond-condition-*")
    return sorted((e["KEVENT_SIGNAL"], e["KEVENT_OBJECT"]) for e in ev.values()
                  if e["KEVENT_OBJECT"] in (FULL, GONE))


def run(vm):
    try:
        before = setup(vm)
        vm.reboot()
        check(vm, before)
    finally:
        vm.run("umount /mnt/full /mnt/gone; sed -i '/systest-full/d' /etc/fstab; "
               "rm -f /var/tmp/systest-full.img /var/tmp/systest-gone.img "
               "/etc/keventd/keventd.yaml /etc/keventd/rules.d/69-systest-cond.yaml; "
               "systemctl restart keventd")


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


def check(vm, before):
    vm.wait("keventctl conditions --json --all | grep fs-space-low | grep '\"object\":\"%s\"' | "
            "grep -q '\"holds\":false'" % GONE, 60, "/mnt/gone's row cleared at the start-up check")
    r = rows(vm)
    full = r.get(FULL)
    keep = ("since_ns", "count", "acked")
    if not full or not full["holds"] or \
            tuple(full.get(k) for k in keep) != tuple(before[FULL].get(k) for k in keep):
        raise Fail("expected /mnt/full's row to hold across the reboot as it was, got %r "
                   "before and %r after" % (before[FULL], full))
    gone = r[GONE]
    if gone["since_ns"] != before[GONE]["since_ns"] or not gone.get("reason"):
        raise Fail("expected /mnt/gone's row cleared with a reason, got %r" % gone)
    got = told(vm)
    if got != [("clear", GONE)]:
        raise Fail("expected one condition event after the reboot, /mnt/gone's clear; got %r"
                   % got)
    vm.figure("fs-space-low after the reboot", "kept %s, cleared %s (%s)"
              % (FULL, GONE, gone["reason"]))

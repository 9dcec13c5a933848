# SPDX-License-Identifier: GPL-2.0-or-later
"""The shipped fs conditions on a booted Debian (30-conditions.yaml;
keventd.rules(5), CONDITIONS): a loop ext4 remounted read-only holds
fs-read-only (critical: conditions --check exits 2) until it is remounted
read-write; the same file system filled past keventd.yaml's space_low holds
fs-space-low (warning: --check exits 1) until the file is removed.  Each
row is set once and cleared once, by the fs source's own events, and the
table says what cleared it."""
import json
import time

from systest import Fail

KERNELS = ("6.1", "6.12")

IMG = "/var/tmp/systest-cond.img"
MNT = "/mnt/cond"
OBJ = "/org/kernel/fs/mnt/cond"
CONFIG = """fs:
  %s: {space_low: 50%%}
""" % MNT
RULES = """rules:
  - name: systest-fscond
    match: {source: condition, object: %s}
    run: [/usr/local/lib/systest/record.sh]
""" % OBJ


def row(vm, name):
    """name's row of the file system (also when cleared), or None."""
    out = vm.sh("keventctl conditions --json --all")
    got = [r for r in map(json.loads, out.splitlines())
           if r.get("condition") == name and r.get("object") == OBJ]
    return got[-1] if got else None


def told(vm):
    """The condition events of the file system: (condition, signal), in order."""
    ev = vm.events("systest-fscond-condition-*")
    return [(e["KEVENT_CONDITION"], e["KEVENT_SIGNAL"])
            for _, e in sorted(ev.items(), key=lambda kv: int(kv[1]["KEVENT_SEQNUM"]))]


def wait_row(vm, name, holds, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        r = row(vm, name)
        if r and r["holds"] == holds:
            return r
        if time.monotonic() > deadline:
            raise Fail("expected %s within %d s, got %r" % (what, timeout, r))
        time.sleep(0.5)  # polling the table, not a synchronisation


def check(vm, name):
    """conditions --check NAME: its exit status, and whether its line
    names the file system."""
    rc, out, _ = vm.run("keventctl conditions --check %s" % name)
    return rc, OBJ in out


def check_exit(vm, name, want, listed):
    """--check NAME exits want (the guest's other rows of NAME, a root
    file system past 10 % say, count too) and names the file system or
    not."""
    rc, named = check(vm, name)
    if (rc, named) != (want, listed):
        raise Fail("expected conditions --check %s to exit %d and %s %s, got %d: %s"
                   % (name, want, "name" if listed else "not name", OBJ, rc,
                      vm.run("keventctl conditions --check %s" % name)[1]))


def read_only(vm):
    base = check(vm, "fs-read-only")[0]
    t0 = time.monotonic()
    vm.sh("mount -o remount,ro %s" % MNT)
    r = wait_row(vm, "fs-read-only", True, 30, "fs-read-only holding after remount,ro")
    vm.figure("remount,ro -> fs-read-only holds (s, %s)" % vm.kver,
              round(time.monotonic() - t0, 2))
    if r["severity"] != "critical" or r["last"]["signal"] != "remount-ro":
        raise Fail("expected fs-read-only critical, set by remount-ro, got %r" % r)
    check_exit(vm, "fs-read-only", 2, True)
    vm.sh("mount -o remount,rw %s" % MNT)
    r = wait_row(vm, "fs-read-only", False, 30, "fs-read-only cleared after remount,rw")
    if r.get("reason") != "remount-rw" or not r.get("cleared"):
        raise Fail("expected fs-read-only cleared by remount-rw, got %r" % r)
    check_exit(vm, "fs-read-only", base, False)


def filled(vm):
    base = check(vm, "fs-space-low")[0]
    t0 = time.monotonic()
    vm.sh("dd if=/dev/zero of=%s/fill bs=1M count=16 status=none && sync" % MNT, timeout=60)
    r = wait_row(vm, "fs-space-low", True, 60, "fs-space-low holding after the fill")
    vm.figure("fill -> fs-space-low holds (s, %s)" % vm.kver, round(time.monotonic() - t0, 2))
    if r["severity"] != "warning" or r["last"]["signal"] != "space-low":
        raise Fail("expected fs-space-low warning, set by space-low, got %r" % r)
    check_exit(vm, "fs-space-low", max(base, 1), True)
    t0 = time.monotonic()
    vm.sh("rm %s/fill && sync" % MNT)
    # a file system past a line is looked at again after as long as it was
    # still, 1 s to 60 s (keventd(8))
    r = wait_row(vm, "fs-space-low", False, 90, "fs-space-low cleared after the removal")
    vm.figure("rm -> fs-space-low cleared (s, %s)" % vm.kver, round(time.monotonic() - t0, 2))
    if r.get("reason") != "space-ok":
        raise Fail("expected fs-space-low cleared by space-ok, got %r" % r)
    check_exit(vm, "fs-space-low", base, False)


def run(vm):
    vm.sh("set -e\n"
          "truncate -s 0 %s; truncate -s 32M %s; mkfs.ext4 -q -F %s; mkdir -p %s\n"
          "mount -o loop %s %s\n"
          "cat >/etc/keventd/keventd.yaml <<'EOF'\n%sEOF\n"
          "cat >/etc/keventd/rules.d/63-systest-fscond.yaml <<'EOF'\n%sEOF\n"
          "rm -rf /run/systest/events; systemctl restart keventd"
          % (IMG, IMG, IMG, MNT, IMG, MNT, CONFIG, RULES), timeout=120)
    try:
        read_only(vm)
        filled(vm)
        # each row set once and cleared once, nothing else told
        vm.wait("test $(ls /run/systest/events/ | grep -c systest-fscond-condition-) -ge 4",
                30, "the four condition events recorded")
        got = told(vm)
        want = [("fs-read-only", "set"), ("fs-read-only", "clear"),
                ("fs-space-low", "set"), ("fs-space-low", "clear")]
        if got != want:
            raise Fail("expected the condition events %r, got %r" % (want, got))
    finally:
        vm.run("umount %s; rm -f %s /etc/keventd/keventd.yaml "
               "/etc/keventd/rules.d/63-systest-fscond.yaml; systemctl restart keventd"
               % (MNT, IMG))

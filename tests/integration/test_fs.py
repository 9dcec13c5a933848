#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The fs source on loop-mounted ext4 images: mount, remount ro and rw and
umount, one event each; space past space_low then space_critical and freed,
one event per crossing; a file system already low at start-up (Initial:
yes); what changed while keventd was stopped or killed, reported at the
next start (KEVENT_SYNTHETIC=1); a FUSE file system that never answers,
which the loop must not wait on; an error from /sys/fs/ext4/DEV/trigger_fs_error, and with
errors=remount-ro the remount-ro that follows; a bad fs: section refused
with FILE:LINE:COLUMN by keventd and keventctl verify."""
import ctypes
import json
import os
import shutil
import subprocess
import time

import kdtest
from kdtest import DaemonTest, TIMEOUT

SIZE_MB = 64
HANDLER = r"""#!/bin/sh
p=$(printf 'Synthetic: %s\n%s' "${KEVENT_SYNTHETIC:-0}" "$KEVENT_PAYLOAD" | tr '\n' '|')
printf '%s %s %s\n' "$KEVENT_SIGNAL" "$KEVENT_OBJECT" "$p" > FIFO
"""


def sh(*argv):
    return subprocess.run(list(argv), check=True, capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def payload(line):
    return dict(kv.split(": ", 1) for kv in line.split(" ", 2)[2].split("|") if ": " in kv)


class FsSource(DaemonTest):
    def setUp(self):
        if not kdtest.IS_ROOT:
            self.skipTest("loop mounts need root")
        for tool in ("mkfs.ext4", "losetup", "mount", "umount", "dd"):
            if not shutil.which(tool):
                self.skipTest("needs " + tool)
        super().setUp()
        self.mounted = []
        self.addCleanup(self.umount_all)

    def umount_all(self):
        for mnt in reversed(self.mounted):
            subprocess.run(["umount", "-l", mnt], capture_output=True)
        self.mounted = []

    def image(self, name):
        img = self.s.path(name + ".img")
        with open(img, "wb") as f:
            f.truncate(SIZE_MB << 20)
        sh("mkfs.ext4", "-q", "-F", "-m", "0", img)
        mnt = self.s.mkdir(name)
        return img, mnt

    def mount(self, img, mnt, *opts):
        o = ",".join(("loop",) + opts)
        sh("mount", "-o", o, img, mnt)
        self.mounted.append(mnt)

    def umount(self, mnt):
        sh("umount", mnt)
        self.mounted.remove(mnt)

    def private_mounts(self):
        """A mount namespace of this test's own (the rest of this process
        stays in it): its mounts are not seen by other keventds on the
        machine, nor theirs by this test's keventd."""
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
            self.skipTest("cannot unshare the mount namespace: "
                          + os.strerror(ctypes.get_errno()))
        sh("mount", "--make-rprivate", "/")
        return libc

    def fill_to(self, mnt, name, free):
        """Writes mnt/name until about free (a share) of mnt is free."""
        st = os.statvfs(mnt)
        mb = (st.f_bavail * st.f_frsize - int(st.f_blocks * st.f_frsize * free)) >> 20
        sh("dd", "if=/dev/zero", "of=" + os.path.join(mnt, name), "bs=1M", "count=%d" % mb,
           "conv=fsync")

    def start_fs(self, conf_text="", state_dir=None, *extra, sources="fs,socket"):
        handler = self.s.script("fs-handler", HANDLER.replace("FIFO", self.s.fifo.path))
        self.s.write_rule("10-fs.yaml", (
            "rules:\n"
            "  - name: fs\n"
            "    match:\n"
            "      source: fs\n"
            "      type: fs\n"
            "    run: [%s]\n") % kdtest.yq(handler))
        conf = self.s.path("keventd.yaml")
        with open(conf, "w") as f:
            f.write("fs:\n  mounts: block\n" + conf_text)
        os.chmod(conf, 0o644)
        args = ("--sources", sources, "--config", conf)
        if state_dir:
            args += ("--state-dir", state_dir)
        d = self.start(*(args + extra))
        d.wait_log("fs: watching")
        return d

    def next_for(self, mnt, timeout=TIMEOUT):
        """The next handler line about mount point mnt (others' loop mounts
        on this machine are left aside)."""
        obj = "/org/kernel/fs" + mnt
        deadline = time.monotonic() + timeout
        while True:
            line = self.s.fifo.line(timeout=max(0.1, deadline - time.monotonic()))
            if line.split(" ", 2)[1] == obj:
                return line

    def test_mount_remount_umount(self):
        img, mnt = self.image("a")
        self.start_fs()
        self.mount(img, mnt)
        line = self.next_for(mnt)
        self.assertTrue(line.startswith("mount /org/kernel/fs%s " % mnt), line)
        p = payload(line)
        self.assertEqual(p["Mountpoint"], mnt)
        self.assertEqual(p["Fstype"], "ext4")
        self.assertTrue(p["Device"].startswith("/dev/loop"), p)
        self.assertTrue(p["Mount-Id"].isdigit())
        self.assertIn("rw", p["Options"].split(","))
        sh("mount", "-o", "remount,ro", mnt)
        line = self.next_for(mnt)
        self.assertTrue(line.startswith("remount-ro "), line)
        self.assertIn("rw", payload(line)["Previous-Options"].split(","))
        sh("mount", "-o", "remount,rw", mnt)
        self.assertTrue(self.next_for(mnt).startswith("remount-rw "))
        sh("mount", "-o", "remount,noatime", mnt)
        self.assertTrue(self.next_for(mnt).startswith("remount "))
        self.umount(mnt)
        self.assertTrue(self.next_for(mnt).startswith("umount "))

    def test_space_crossings(self):
        img, mnt = self.image("b")
        self.mount(img, mnt)
        self.start_fs("  space_low: 40%\n  space_critical: 20%\n")
        fill = os.path.join(mnt, "fill")
        size = os.statvfs(mnt).f_blocks * os.statvfs(mnt).f_frsize
        avail = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        # past 40% free, then past 20%
        low_mb = (avail - int(size * 0.35)) >> 20
        t0 = time.monotonic()
        sh("dd", "if=/dev/zero", "of=" + fill, "bs=1M", "count=%d" % low_mb, "conv=fsync")
        line = self.next_for(mnt)
        print("space-low %.3f s after dd started" % (time.monotonic() - t0))
        self.assertTrue(line.startswith("space-low "), line)
        p = payload(line)
        self.assertNotIn("Initial", p)
        self.assertLess(int(p["Avail-Percent"]), 40)
        for k in ("Size", "Avail", "Files", "Files-Avail"):
            self.assertTrue(p[k].isdigit(), p)
        crit_mb = (os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize - int(size * 0.15)) >> 20
        sh("dd", "if=/dev/zero", "of=" + fill + "2", "bs=1M", "count=%d" % crit_mb,
           "conv=fsync")
        self.assertTrue(self.next_for(mnt).startswith("space-critical "))
        os.unlink(fill)
        os.unlink(fill + "2")
        os.sync()
        self.assertTrue(self.next_for(mnt).startswith("space-ok "))
        # once per crossing: nothing more about this mount
        with self.assertRaises(AssertionError):
            self.next_for(mnt, 2)

    def test_initial(self):
        img, mnt = self.image("c")
        self.mount(img, mnt)
        size = os.statvfs(mnt).f_blocks * os.statvfs(mnt).f_frsize
        avail = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        sh("dd", "if=/dev/zero", "of=" + os.path.join(mnt, "fill"), "bs=1M",
           "count=%d" % ((avail - int(size * 0.3)) >> 20), "conv=fsync")
        self.start_fs("  space_low: 50%\n")
        line = self.next_for(mnt)
        self.assertTrue(line.startswith("space-low "), line)
        self.assertEqual(payload(line)["Initial"], "yes")

    def test_reload(self):
        """fs: is applied at a reload, without a restart: a file system
        past its new line is one crossing (not Initial), a file with a
        mistake keeps the current settings, and a lower line again is
        space-ok."""
        img, mnt = self.image("r")
        self.mount(img, mnt)
        size = os.statvfs(mnt).f_blocks * os.statvfs(mnt).f_frsize
        avail = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        sh("dd", "if=/dev/zero", "of=" + os.path.join(mnt, "fill"), "bs=1M",
           "count=%d" % ((avail - int(size * 0.3)) >> 20), "conv=fsync")
        d = self.start_fs()  # the defaults: 10%, and about 30% is free
        conf = self.s.path("keventd.yaml")

        def reload(text):
            with open(conf, "w") as f:
                f.write("fs:\n  mounts: block\n" + text)
            return d.ctl("reload", check=0).stdout

        out = reload("  %s: {space_low: 50%%}\n" % mnt)
        self.assertIn("keventd.yaml: fs settings changed: applied", out)
        line = self.next_for(mnt)
        self.assertTrue(line.startswith("space-low "), line)
        self.assertNotIn("Initial", payload(line))
        self.assertLess(int(payload(line)["Avail-Percent"]), 50)
        # a mistake: said at the reload, and nothing changes
        out = reload("  %s: {space_low: 20%%, space_critical: lots}\n" % mnt)
        self.assertIn("%s:3:" % conf, out)
        self.assertIn("space_critical wants a percentage", out)
        self.assertIn("keventd.yaml: keeping the current trace entries and fs settings", out)
        with self.assertRaises(AssertionError):
            self.next_for(mnt, 2)
        out = reload("  %s: {space_low: 20%%}\n" % mnt)
        self.assertIn("keventd.yaml: fs settings changed: applied", out)
        self.assertTrue(self.next_for(mnt).startswith("space-ok "))
        # the same again: nothing to apply
        self.assertNotIn("keventd.yaml", reload("  %s: {space_low: 20%%}\n" % mnt))

    def trigger_error(self, img, mnt, *opts):
        self.mount(img, mnt, *opts)
        with open("/proc/self/mountinfo") as f:
            dev = [l.split()[2] for l in f if l.split()[4] == mnt][-1]
        name = os.path.basename(os.path.realpath("/sys/dev/block/" + dev))
        trig = "/sys/fs/ext4/%s/trigger_fs_error" % name
        if not os.path.exists(trig):
            self.skipTest("no " + trig)
        return trig

    def test_error_and_remount_ro(self):
        img, mnt = self.image("e")
        self.start_fs()
        trig = self.trigger_error(img, mnt, "errors=remount-ro")
        self.assertTrue(self.next_for(mnt).startswith("mount "))
        t0 = time.monotonic()
        with open(trig, "w") as f:
            f.write("1")
        line = self.next_for(mnt)
        self.assertTrue(line.startswith("error "), line)
        p = payload(line)
        self.assertEqual(p["Error"], "EUCLEAN")
        self.assertTrue(p["Error-Count"].isdigit())
        line = self.next_for(mnt)
        print("remount-ro %.3f s after the error" % (time.monotonic() - t0))
        self.assertTrue(line.startswith("remount-ro "), line)
        # "ro", or ext4's "emergency_ro" on newer kernels
        sup = payload(line)["Super-Options"].split(",")
        self.assertTrue("ro" in sup or "emergency_ro" in sup, sup)

    def test_error_continue(self):
        img, mnt = self.image("f")
        self.start_fs()
        trig = self.trigger_error(img, mnt, "errors=continue")
        self.assertTrue(self.next_for(mnt).startswith("mount "))
        with open(trig, "w") as f:
            f.write("1")
        line = self.next_for(mnt)
        self.assertTrue(line.startswith("error "), line)
        self.assertEqual(payload(line)["Error"], "EUCLEAN")
        # errors=continue: the file system stays writable, nothing follows
        with self.assertRaises(AssertionError):
            self.next_for(mnt, 2)
        with open(os.path.join(mnt, "still-writable"), "w") as f:
            f.write("x")

    def events_at_start(self, d, mnts, n):
        """The n events of a start (submitted before keventd says READY),
        once their handlers are done, as {(signal, mount point):
        payload}; their mounts are all in mnts, and nothing else came."""
        d.wait_idle(n)
        got = {}
        for line in (self.s.fifo.lines(n) if n else []):
            sig, obj = line.split(" ", 2)[:2]
            mnt = obj[len("/org/kernel/fs"):]
            self.assertIn(mnt, mnts, line)
            got[(sig, mnt)] = payload(line)
        with self.assertRaises(AssertionError):  # handlers are done: drains
            self.s.fifo.line(timeout=0.2)
        return got

    def while_down(self, kill):
        """What happened to the file systems while keventd was not running
        is reported at the next start, flagged KEVENT_SYNTHETIC=1, and only
        that: a mount gone, one come, a remount read-only, a space state
        that cleared and one that crossed.  A start with nothing changed
        reports nothing; the first start reports what it always did (a
        file system already low, Initial: yes, not synthetic)."""
        self.private_mounts()
        state = self.s.mkdir("fs-state")
        m = {}
        for name in ("gone", "come", "ro", "freed", "filled"):
            m[name] = self.image(name)
        for name in ("gone", "ro", "freed", "filled"):
            self.mount(*m[name])
        mnt = {k: v[1] for k, v in m.items()}
        self.fill_to(mnt["freed"], "fill", 0.3)
        conf = ("  space_low: off\n  space_critical: off\n  inodes_low: off\n"
                "  %s: {space_low: 40%%}\n  %s: {space_low: 40%%}\n"
                % (mnt["freed"], mnt["filled"]))
        mnts = set(mnt.values())

        d = self.start_fs(conf, state)
        got = self.events_at_start(d, mnts, 1)
        p = got[("space-low", mnt["freed"])]
        self.assertEqual((p["Initial"], p["Synthetic"]), ("yes", "0"))
        self.assertTrue(os.path.exists(os.path.join(state, "fs.state")))
        if kill:
            d.kill()
        else:
            d.stop_ok(self)

        self.umount(mnt["gone"])
        self.mount(*m["come"])
        sh("mount", "-o", "remount,ro", mnt["ro"])
        os.unlink(os.path.join(mnt["freed"], "fill"))
        os.sync()
        self.fill_to(mnt["filled"], "fill", 0.3)

        d = self.start_fs(conf, state)
        got = self.events_at_start(d, mnts, 5)
        self.assertEqual(sorted(got), sorted([
            ("umount", mnt["gone"]), ("mount", mnt["come"]), ("remount-ro", mnt["ro"]),
            ("space-ok", mnt["freed"]), ("space-low", mnt["filled"])]))
        for k, p in got.items():
            self.assertEqual(p["Synthetic"], "1", k)
            self.assertNotIn("Initial", p, k)
        self.assertIn("ro", got[("remount-ro", mnt["ro"])]["Options"].split(","))
        self.assertIn("rw", got[("remount-ro", mnt["ro"])]["Previous-Options"].split(","))
        d.wait_log("fs: 5 change(s) while not watched (reported, synthetic)")
        if kill:
            d.kill()
        else:
            d.stop_ok(self)

        d = self.start_fs(conf, state)
        self.events_at_start(d, mnts, 0)
        d.stop_ok(self)
        return d, conf, state, mnt, mnts

    def test_while_stopped(self):
        d, conf, state, mnt, mnts = self.while_down(kill=False)
        # a damaged file costs only itself: said, dropped, a first start
        with open(os.path.join(state, "fs.state"), "r+") as f:
            f.seek(0)
            f.write("garbage")
        d = self.start_fs(conf, state)
        d.wait_log("fs.state is damaged")
        got = self.events_at_start(d, mnts, 1)
        p = got[("space-low", mnt["filled"])]
        self.assertEqual((p["Initial"], p["Synthetic"]), ("yes", "0"))
        d.stop_ok(self)
        with open(os.path.join(state, "fs.state")) as f:
            self.assertTrue(f.read().startswith("keventd-fs 1\n"))

    def test_while_killed(self):
        self.while_down(kill=True)

    def test_thresholds_changed_while_stopped(self):
        """A state judged by other thresholds is not compared: a start with
        a new line reports a file system already past it as Initial, as a
        first start does (not as a crossing, nor as nothing)."""
        d, conf, state, mnt, mnts = self.while_down(kill=False)
        conf = conf.replace("%s: {space_low: 40%%}" % mnt["filled"],
                            "%s: {space_low: 50%%}" % mnt["filled"])
        d = self.start_fs(conf, state)
        got = self.events_at_start(d, mnts, 1)
        p = got[("space-low", mnt["filled"])]
        self.assertEqual((p["Initial"], p["Synthetic"]), ("yes", "0"))
        d.stop_ok(self)

    def test_condition_confirmed_at_start(self):
        """A condition set by a file system's space-low holds across a
        restart that finds it still low: the fs source reports afresh at
        that start (its fs.state gone), and its Initial event confirms the
        row; it is no new set (the same since, the same count)."""
        self.private_mounts()
        state, lib = self.s.mkdir("fs-state"), self.s.mkdir("fs-lib")
        img, mnt = self.image("cond")
        self.mount(img, mnt)
        self.fill_to(mnt, "fill", 0.3)
        self.s.write_rule("20-cond.yaml", (
            "conditions:\n"
            "  - name: fs-low\n"
            "    set: {source: fs, signal: space-low}\n"
            "    clear: {source: fs, signal: space-ok}\n"))
        conf = ("  space_low: off\n  space_critical: off\n  inodes_low: off\n"
                "  %s: {space_low: 40%%}\n" % mnt)
        obj = "/org/kernel/fs" + mnt

        def row(d):
            out = d.ctl("conditions", "--json", check=0).stdout
            rows = [r for r in map(json.loads, out.splitlines())
                    if r["condition"] == "fs-low" and r["object"] == obj]
            return rows[0] if rows else None

        cond = "fs,socket,condition"
        d = self.start_fs(conf, state, "--lib-dir", lib, sources=cond)
        self.assertTrue(self.next_for(mnt).startswith("space-low "))
        first = row(d)
        self.assertTrue(first and first["holds"], first)
        self.assertEqual(first["count"], 1)
        d.stop_ok(self)
        os.unlink(os.path.join(state, "fs.state"))
        d = self.start_fs(conf, state, "--lib-dir", lib, sources=cond)
        line = self.next_for(mnt)
        self.assertTrue(line.startswith("space-low "), line)
        self.assertEqual(payload(line)["Initial"], "yes")
        again = row(d)
        self.assertEqual((again["holds"], again["since_ns"], again["count"]),
                         (True, first["since_ns"], 1), again)
        d.stop_ok(self)

    def test_fuse_that_never_answers(self):
        """A FUSE file system whose daemon never answers (this test holds
        /dev/fuse and reads nothing, so every statfs() on it waits), with a
        source that looks like a disk: keventd reports its mount and goes
        on, since its loop neither statfs()es it nor marks it (a fanotify
        mark takes the fsid through statfs()); a disk mounted after it is
        reported too, and keventctl status answers."""
        if not os.path.exists("/dev/fuse"):
            self.skipTest("no /dev/fuse")
        # other keventds on the machine never see the mount
        libc = self.private_mounts()
        mnt = self.s.mkdir("hang")
        d = self.start_fs()
        fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
        try:
            opts = "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fd
            if libc.mount(b"/dev/sda1", mnt.encode(), b"fuse.hang", 0, opts.encode()) != 0:
                self.skipTest("cannot mount FUSE: " + os.strerror(ctypes.get_errno()))
            line = self.next_for(mnt)
            self.assertTrue(line.startswith("mount "), line)
            self.assertEqual(payload(line)["Fstype"], "fuse.hang")
            img, disk = self.image("after-fuse")
            self.mount(img, disk)
            self.assertTrue(self.next_for(disk).startswith("mount "))
            d.ctl("status", check=0)
        finally:
            # aborts the connection: whatever waits on it returns
            os.close(fd)
            subprocess.run(["umount", "-l", mnt], capture_output=True)

    def test_bad_section(self):
        conf = self.s.path("bad.yaml")
        with open(conf, "w") as f:
            f.write("fs:\n  space_low: lots\n  mounts: some\n")
        os.chmod(conf, 0o644)
        r = subprocess.run([kdtest.KEVENTD, "--config", conf, "--control", self.s.ctl,
                            "--rules-dir", self.s.rules], capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("%s:2:14: error: fs: space_low wants a percentage" % conf, r.stderr)
        self.assertIn("%s:3:11: error: fs: mounts is 'block' or 'all'" % conf, r.stderr)
        r = subprocess.run([kdtest.KEVENTCTL, "verify", "--config", conf, self.s.rules],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 1)
        self.assertIn("%s:2:14: error: fs: space_low" % conf, r.stdout)


if __name__ == "__main__":
    kdtest.main()

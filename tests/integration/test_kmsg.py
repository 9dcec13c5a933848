#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The kmsg source with the real /dev/kmsg: a process that segfaults
gives segfault with its Comm: and Pid:; a line written to /dev/kmsg from
user space never becomes an event, whatever it says; a restart with
kernel records in between goes on after kmsg.pos, none lost, none twice;
keventd killed right after it saved kmsg.pos loses no record: the
position follows the journal;
a first start begins at the end of the log (backlog: yes at its start);
a program of an unprivileged user whose name and file name spell an
I/O error or a hung task makes a segfault, nothing else;
a reload changes the priority; a bad kmsg: section is refused with
FILE:LINE:COLUMN.

The kernel records are the segfaults of helper processes, each named by
the test (prctl PR_SET_NAME), so other processes' records on this machine
are told apart.  The kernel rate-limits segfault messages (10 in 5 s,
for the whole machine): the test reads /dev/kmsg itself and makes another
helper when the kernel kept no record of one."""
import collections
import errno
import os
import random
import select
import shutil
import subprocess
import tempfile
import time

import kdtest
from kdtest import DaemonTest, TIMEOUT

HANDLER = r"""#!/bin/sh
p=$(printf '%s' "$KEVENT_PAYLOAD" | tr '\n' '|')
printf '%s %s %sRedelivered: %s\n' "$KEVENT_SIGNAL" "$KEVENT_OBJECT" "$p" \
    "${KEVENT_REDELIVERED:-0}" > FIFO
"""

# a run on the segfaults' object that waits for the test (a line on the
# FIFO $KEVENT_GATE, while it is there); it says it started
HOLD = r"""#!/bin/sh
printf 'hold %s Hold: 1\n' "$KEVENT_OBJECT" > FIFO
[ -p "$KEVENT_GATE" ] && read -r x < "$KEVENT_GATE"
exit 0
"""
KMSG_SEGFAULT_OBJECT = "/org/kernel/log/segfault"


def release(gate):
    """Lets a run waiting on the FIFO gate go (if one waits), and removes
    the gate, so that the run's event handled again does not wait."""
    try:
        fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"go\n")
        os.close(fd)
    except OSError as e:
        if e.errno != errno.ENXIO:  # no one waits
            raise
    os.unlink(gate)


# a process that names itself and reads address 0
SEGV = ("import ctypes, sys\n"
        "libc = ctypes.CDLL(None)\n"
        "libc.prctl(15, sys.argv[1].encode(), 0, 0, 0)\n"
        "ctypes.string_at(0)\n")

PREFIX = "ktsv%04d" % random.randrange(10000)  # this run's helpers
_count = [0]


def payload(line):
    return dict(kv.split(": ", 1) for kv in line.split(" ", 2)[2].split("|") if ": " in kv)


# a program that names itself (its comm, at most 15 bytes) and writes to
# address 0 in its own code, so that the kernel's line names its file
FORGER_C = r"""#include <sys/prctl.h>
int main(int argc, char **argv)
{
	if (argc > 1)
		prctl(PR_SET_NAME, argv[1], 0, 0, 0);
	*(volatile int *)0 = 0;
	return 0;
}
"""


class Kmsg:
    """The test's own reader of /dev/kmsg, from its end."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def wait(self, pred, timeout):
        """The first record (seq, facility, text) for which pred(text) is
        true, or None after timeout."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                rec = os.read(self.fd, 8192).decode(errors="replace")
            except BlockingIOError:
                left = kdtest.deadline_left(deadline)
                if not left:
                    return None
                select.select([self.fd], [], [], left)
                continue
            except OSError as e:
                if e.errno == errno.EPIPE:
                    continue
                raise
            head, text = rec.split(";", 1)
            fields = head.split(",")
            text = text.split("\n", 1)[0]
            if pred(text):
                return int(fields[1]), int(fields[0]) >> 3, text

    def close(self):
        os.close(self.fd)


class KmsgSource(DaemonTest):
    def setUp(self):
        if not kdtest.IS_ROOT:
            self.skipTest("reading and writing /dev/kmsg needs root")
        try:
            with open("/proc/sys/debug/exception-trace") as f:
                if f.read().strip() == "0":
                    self.skipTest("debug.exception-trace is 0: the kernel logs no segfault")
        except FileNotFoundError:
            pass
        super().setUp()
        self.kmsg = Kmsg()
        self.addCleanup(self.kmsg.close)

    def segfault(self):
        """A helper that segfaults, once the kernel has its record:
        (name, pid, seq)."""
        for _ in range(4):
            _count[0] += 1
            name = "%s-%d" % (PREFIX, _count[0])
            p = subprocess.Popen([kdtest.PYTHON, "-c", SEGV, name], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.assertEqual(p.wait(TIMEOUT), -11)
            want = "%s[%d]: segfault at " % (name, p.pid)
            # the kernel's rate limit holds 5 s: past it, another helper
            rec = self.kmsg.wait(lambda t: t.startswith(want), 6)
            if rec:
                self.assertEqual(rec[1], 0)  # the kernel's facility
                return name, p.pid, rec[0]
        self.fail("the kernel logged none of 4 segfaults")

    def start_kmsg(self, conf_text="", state_dir=None, rule_match="      signal: segfault\n",
                   env=None):
        if not os.path.exists(self.s.path("kmsg-handler")):
            handler = self.s.script("kmsg-handler", HANDLER.replace("FIFO", self.s.fifo.path))
            self.s.write_rule("10-kmsg.yaml", (
                "rules:\n"
                "  - name: kmsg\n"
                "    match:\n"
                "      source: kmsg\n"
                "%s"
                "    run: [%s]\n") % (rule_match, kdtest.yq(handler)))
        args = ["--sources", "kmsg,socket"]
        if conf_text:
            conf = self.s.path("keventd.yaml")
            with open(conf, "w") as f:
                f.write(conf_text)
            os.chmod(conf, 0o644)
            args += ["--config", conf]
        if state_dir:
            args += ["--state-dir", state_dir]
        d = self.start(*args, env=env)
        if not env:
            d.wait_log("kmsg: reading the kernel log")
        return d

    def ours(self, line):
        """The Pid of a handler line about one of this run's helpers, or None."""
        p = payload(line)
        return int(p["Pid"]) if p.get("Comm", "").startswith(PREFIX) else None

    def drain(self):
        """The handler lines written so far and not read yet."""
        f = self.s.fifo
        while select.select([f.r], [], [], 0)[0]:
            f.buf += os.read(f.r, 65536)
        lines, f.buf = f.buf.decode(errors="replace").split("\n"), b""
        return [l for l in lines if l]

    def next_ours(self):
        while True:
            pid = self.ours(self.s.fifo.line())
            if pid is not None:
                return pid

    def test_segfault(self):
        self.start_kmsg()
        name, pid, seq = self.segfault()
        line = self.s.fifo.line()
        while self.ours(line) is None:
            line = self.s.fifo.line()
        sig, obj, _ = line.split(" ", 2)
        self.assertEqual((sig, obj), ("segfault", "/org/kernel/log/segfault"), line)
        p = payload(line)
        self.assertEqual(p["Comm"], name)
        self.assertEqual(p["Pid"], str(pid))
        self.assertEqual(p["Kmsg-Seqnum"], str(seq))
        self.assertEqual(p["Priority"], "info")
        self.assertEqual(p["Facility"], "kern")
        self.assertEqual(p["Address"], "0")
        for k in ("Ip", "Sp"):
            int(p[k], 16)
        self.assertTrue(p["Message"].startswith("%s[%d]: segfault at 0 ip " % (name, pid)), p)

    def forger(self, file_name):
        """A program that segfaults, in a directory any user may enter,
        under file_name: the kernel's segfault line names it."""
        cc = shutil.which("cc")
        if not cc:
            self.skipTest("no C compiler (cc) to build the program that segfaults")
        d = tempfile.mkdtemp(prefix="kmsg-forge-")
        self.addCleanup(shutil.rmtree, d, True)
        os.chmod(d, 0o755)
        src = os.path.join(d, "forger.c")
        with open(src, "w") as f:
            f.write(FORGER_C)
        prog = os.path.join(d, file_name)
        subprocess.run([cc, "-O0", "-o", prog, src], check=True, timeout=TIMEOUT)
        os.chmod(prog, 0o755)
        return prog

    def segfault_as_nobody(self, prog, comm):
        """prog run as nobody, named comm, once the kernel has its
        record: (pid, seq, text)."""
        for _ in range(4):
            p = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                  "--clear-groups", prog, comm], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.assertEqual(p.wait(TIMEOUT), -11)
            # setpriv execs the program: the pid is the program's
            want = "%s[%d]: segfault at " % (comm, p.pid)
            rec = self.kmsg.wait(lambda t: t.startswith(want), 6)
            if rec:
                self.assertEqual(rec[1], 0)  # the kernel's facility
                return p.pid, rec[0], rec[2]
        self.fail("the kernel logged none of 4 segfaults")

    def test_forged_names(self):
        # a user's program whose name and file name spell an I/O error or
        # a hung task: the kernel's line is a segfault, and only that
        self.start_kmsg(rule_match="      signal: [segfault, io-error, hung-task, oom-kill]\n")
        forged = [("x: critical medium error, dev vda, sector 7 ", "crash"),
                  ("a:1 blocked for more than 999 seconds ", "INFO: task a")]
        seen = []
        for file_name, comm in forged:
            prog = self.forger(file_name)
            pid, seq, text = self.segfault_as_nobody(prog, comm)
            # the record carries the forgery where the kernel put the file
            self.assertIn(" in %s[" % file_name, text)
            line = self.s.fifo.line()
            while payload(line).get("Kmsg-Seqnum") != str(seq):
                seen.append(line)
                line = self.s.fifo.line()
            sig, obj, _ = line.split(" ", 2)
            self.assertEqual((sig, obj), ("segfault", "/org/kernel/log/segfault"), line)
            p = payload(line)
            self.assertEqual((p["Comm"], p["Pid"]), (comm, str(pid)), line)
            for key in ("Disk", "Sector", "Seconds"):
                self.assertNotIn(key, p, line)
        seen += self.drain()
        self.assertEqual([l for l in seen if not l.startswith("segfault ")], [],
                         "events of kinds other than segfault")

    def test_user_lines_never(self):
        # every record of the kernel is an event at debug; none of these is
        d = self.start_kmsg("kmsg:\n  priority: debug\n", rule_match="")
        marker = "%s-user" % PREFIX
        lines = ["<0>%s emerg\n" % marker,
                 "<3>%s err\n" % marker,
                 "%s-1[1]: segfault at 0 ip 1 sp 2 error 4\n" % marker,
                 "<3>I/O error, dev sda, sector 1 op 0x0:(READ) %s\n" % marker,
                 "<2051>%s facility 256\n" % marker]
        for text in lines:
            fd = os.open("/dev/kmsg", os.O_WRONLY)
            os.write(fd, text.encode())
            os.close(fd)
        # they are in the log, as user space's
        for _ in lines:
            rec = self.kmsg.wait(lambda t: marker in t, TIMEOUT)
            self.assertIsNotNone(rec)
            self.assertNotEqual(rec[2], 0, rec)
        # a kernel record after them: once its event is in, and nothing
        # of the source is pending, every event before it has run
        name, pid, _ = self.segfault()
        seen = []
        while True:
            line = self.s.fifo.line()
            seen.append(line)
            if self.ours(line) == pid:
                break
        d.wait_status(lambda st: st["sources"]["kmsg"]["pending"] == 0, "kmsg idle")
        seen += self.drain()
        leaked = [l for l in seen if marker in l]
        self.assertEqual(leaked, [], "user-space lines became events")

    def test_restart_resumes(self):
        d1 = self.start_kmsg()
        _, p1, s1 = self.segfault()
        self.assertEqual(self.next_ours(), p1)
        d1.stop_ok(self)
        # kmsg.pos: this boot, and at least the record handled
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        with open(os.path.join(d1.state_dir, "kmsg.pos")) as f:
            pos = f.read().split()
        self.assertEqual(pos[0], boot)
        self.assertGreaterEqual(int(pos[1]), s1)
        # kernel records while keventd is down
        _, p2, _ = self.segfault()
        _, p3, _ = self.segfault()
        d2 = self.start_kmsg(state_dir=d1.state_dir)
        _, p4, _ = self.segfault()
        # one object: the handlers run in the order of the records, so a
        # record handled twice would come before p4
        got = [self.next_ours() for _ in range(3)]
        self.assertEqual(got, [p2, p3, p4])
        st = d2.wait_status(lambda st: st["sources"]["kmsg"]["pending"] == 0, "kmsg idle")
        self.assertEqual(st["sources"]["kmsg"]["lost"], 0)
        self.assertIn("kmsg: going on after record", d2.logtext())

    def test_foreign_position_refused(self):
        """A kmsg.pos that is not keventd's user's (keventd(8),
        --state-dir) is neither believed nor written: the start is a first
        one, and the file is left as found."""
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        state = self.s.path("state-k")
        os.mkdir(state, 0o700)
        pos = os.path.join(state, "kmsg.pos")
        text = "%s %020d\n" % (boot, 0)  # this boot, from its first record
        with open(pos, "w") as f:
            f.write(text)
        os.chown(pos, 65534, 65534)
        d = self.start_kmsg(state_dir=state)
        # both said before the source reads (start_kmsg() waited for that)
        self.assertNotIn("going on after record", d.logtext())
        self.assertIn("kmsg: %s is not a position (not owned by keventd's user: refused); "
                      "starting at the end of the log\n" % pos, d.logtext())
        _, p1, _ = self.segfault()
        self.assertEqual(self.next_ours(), p1)
        d.stop_ok(self)
        self.assertEqual(os.stat(pos).st_uid, 65534)
        with open(pos) as f:
            self.assertEqual(f.read(), text)

    def test_killed_after_position(self):
        # keventd killed each time it has saved kmsg.pos (the fault point
        # "positioned"): kmsg.pos never covers a record whose event the
        # journal does not hold, so every record is handled, at least once,
        # and a second time only flagged redelivered
        hold = self.s.script("hold", HOLD.replace("FIFO", self.s.fifo.path))
        self.s.write_rule("20-hold.yaml", (
            "rules:\n"
            "  - name: hold\n"
            "    match: {source: socket, signal: hold}\n"
            "    run: [%s]\n") % kdtest.yq(hold))
        d = self.start_kmsg()
        state = d.state_dir
        _, pid, seq = self.segfault()
        self.assertEqual(self.next_ours(), pid)
        d.stop_ok(self)
        ours = [seq]
        runs = collections.defaultdict(list)  # seq: the runs' Redelivered
        runs[seq].append("0")

        def collect(line):
            p = payload(line)
            if p.get("Comm", "").startswith(PREFIX):
                runs[int(p["Kmsg-Seqnum"])].append(p["Redelivered"])

        # three kills at least, one of them with the record's event queued
        # behind a run that waits on the segfaults' object (a run that
        # starts at once writes the journal first); a record of another
        # process's may come first and kill keventd before that is set up
        kills, held = 0, False
        while kills < 3 or not held:
            self.assertLess(kills, 8, "the hold was never in place before a kill")
            d = self.restart_kmsg(state, {"KEVENTD_FAULT": "positioned:1"})
            gate = None
            if not held:
                gate = self.s.path("gate")
                os.mkfifo(gate)
                held = self.hold(d, gate, collect)
            # it dies at its first save of kmsg.pos: after this record, or
            # after one of another process's that came first (then no
            # record of ours is made now: the next start would die on it)
            if d.proc.poll() is None:
                _, _, seq = self.segfault()
                ours.append(seq)
            d.proc.wait(TIMEOUT)
            self.assertEqual(d.proc.returncode, -9, d.logtext())
            self.assertIn("fault point reached", d.logtext())
            d.kill()
            kills += 1
            if gate:
                release(gate)
            for line in self.drain():
                collect(line)
        # a keventd that is not killed: the journal's events run again, the
        # records after kmsg.pos are read, then one more record
        d = self.restart_kmsg(state, None)
        _, pid, seq = self.segfault()
        ours.append(seq)
        while True:
            line = self.s.fifo.line()
            collect(line)
            if self.ours(line) == pid:
                break
        d.wait_status(lambda st: st["sources"]["kmsg"]["pending"] == 0
                      and st["events"]["pending"] == 0, "kmsg idle")
        for line in self.drain():
            collect(line)
        d.stop_ok(self)
        never = [s for s in ours if not runs[s]]
        self.assertEqual(never, [], "records never handled (runs: %r)" % dict(runs))
        for s in ours:
            self.assertLessEqual(runs[s].count("0"), 1,
                                 "record %d handled again without KEVENT_REDELIVERED=1: %r"
                                 % (s, runs[s]))

    def hold(self, d, gate, collect):
        """Sends d an event whose run waits on gate, on the segfaults'
        object; whether the run started before d died.  Other lines read
        meanwhile go to collect."""
        r = d.ctl("send", "general", KMSG_SEGFAULT_OBJECT, "hold", "Gate: %s" % gate)
        if r.returncode != 0:
            return False  # killed meanwhile
        deadline = time.monotonic() + TIMEOUT
        while kdtest.deadline_left(deadline):
            try:
                line = self.s.fifo.line(timeout=0.2)
            except AssertionError:  # nothing yet: is d still there?
                if d.proc.poll() is not None:
                    return False
                continue
            if line.startswith("hold "):
                return True
            collect(line)
        self.fail("the run that waits never started")

    def restart_kmsg(self, state, env):
        """A keventd on state.  A handler that the last one forked can hold
        its control socket for the moment between its fork and its exec: a
        start that finds it in use is tried again, at most 5 times."""
        for attempt in range(5):
            try:
                return self.start_kmsg(state_dir=state, env=env)
            except AssertionError as e:
                if env and "fault point reached" in str(e):
                    return self.daemons[-1]  # killed before it was ready
                if "Address already in use" not in str(e) or attempt == 4:
                    raise

    def test_first_start_at_end(self):
        _, p0, _ = self.segfault()
        self.start_kmsg()
        _, p1, _ = self.segfault()
        # the record before the start is not reported: p1 comes first
        self.assertEqual(self.next_ours(), p1)

    def test_backlog(self):
        _, p0, _ = self.segfault()
        self.start_kmsg("kmsg:\n  backlog: yes\n")
        _, p1, _ = self.segfault()
        # the ring from its start: p0 too, and before p1
        got = []
        while p1 not in got:
            got.append(self.next_ours())
        self.assertIn(p0, got)
        self.assertLess(got.index(p0), got.index(p1))

    def test_reload_priority(self):
        # a segfault's record is followed by the kernel's "Code:" line, at
        # info: no event at err, one after a reload to info
        d = self.start_kmsg("kmsg:\n  priority: err\n", rule_match="      signal: [segfault, info]\n")
        _, p1, _ = self.segfault()
        seen = []
        while True:
            line = self.s.fifo.line()
            seen.append(line)
            if self.ours(line) == p1:
                break
        d.wait_status(lambda st: st["sources"]["kmsg"]["pending"] == 0, "kmsg idle")
        seen += self.drain()
        self.assertEqual([l for l in seen if l.startswith("info ")], [])
        with open(self.s.path("keventd.yaml"), "w") as f:
            f.write("kmsg:\n  priority: info\n")
        r = d.ctl("reload", check=0)
        self.assertIn("keventd.yaml: kmsg priority info (was err)", r.stdout + r.stderr)
        _, p2, s2 = self.segfault()
        code = self.kmsg.wait(lambda t: t.startswith("Code: "), TIMEOUT)
        self.assertIsNotNone(code, "the kernel printed no Code: line after the segfault")
        while True:
            line = self.s.fifo.line()
            p = payload(line)
            if line.startswith("info ") and p.get("Kmsg-Seqnum") == str(code[0]):
                break
        self.assertEqual(line.split(" ", 2)[1], "/org/kernel/log")
        self.assertTrue(p["Message"].startswith("Code: "), p)

    def test_bad_section(self):
        conf = self.s.path("bad.yaml")
        with open(conf, "w") as f:
            f.write("kmsg:\n  priority: loud\n  colour: red\n")
        os.chmod(conf, 0o644)
        r = subprocess.run([kdtest.KEVENTD, "--config", conf, "--control", self.s.ctl,
                            "--rules-dir", self.s.rules], capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("%s:2:13: error: kmsg: priority is one of emerg" % conf, r.stderr)
        self.assertIn("%s:3:3: error: kmsg: unknown key 'colour'" % conf, r.stderr)
        r = subprocess.run([kdtest.KEVENTCTL, "verify", "--config", conf, self.s.rules],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 1)
        self.assertIn("%s:2:13: error: kmsg: priority" % conf, r.stdout)


if __name__ == "__main__":
    kdtest.main()

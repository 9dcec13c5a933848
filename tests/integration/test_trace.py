#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The trace source (docs/sources.md, keventd.yaml(5)) on this machine's
kernel: sched/sched_process_exec through a kernel filter on the file name,
exactly one event per matching exec and none for the others, the record's
fields in the payload; a tracepoint the kernel does not have and a filter
it refuses reported at FILE:LINE:COLUMN by keventctl verify and at
keventd's start; no perf descriptor without a trace: entry."""
import os
import shutil
import signal
import subprocess

import kdtest
from kdtest import DaemonTest, TIMEOUT

EXEC = "sched/sched_process_exec"
TRACEFS = "/sys/kernel/tracing"


def run(*argv, timeout=TIMEOUT, **kw):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kw)


def pin():
    # every exec on one CPU: one ring, read in the order the kernel wrote it
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def perf_fds(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[perf_event]":
                n += 1
        except OSError:
            pass
    return n


def payload(text):
    return dict(l.split(": ", 1) for l in text.splitlines() if ": " in l)


class Trace(DaemonTest):
    def setUp(self):
        super().setUp()
        if not kdtest.IS_ROOT:
            self.skipTest("perf_event_open() on tracepoints needs root")
        if not os.path.exists(os.path.join(TRACEFS, "events")) and \
                run("mount", "-t", "tracefs", "nodev", TRACEFS).returncode != 0:
            self.skipTest("no tracefs at %s" % TRACEFS)
        if not os.path.exists(os.path.join(TRACEFS, "events", EXEC)):
            self.skipTest("this kernel has no %s" % EXEC)
        self.match = self.s.path("kdtrace-match")
        self.other = self.s.path("kdtrace-other")
        for p in (self.match, self.other):
            shutil.copy("/bin/true", p)

    def only(self, name):
        # this test's programs alone, under its own directory: another
        # test running at the same time execs programs of the same names
        return 'filename ~ "%s/*%s"' % (self.s.dir, name)

    def conf(self, text):
        path = self.s.path("keventd.yaml")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def exec_conf(self, filter):
        return self.conf("trace:\n  - event: %s\n    filter: %s\n    type: hotplug\n"
                         % (EXEC, kdtest.yq(filter)))

    def test_exec_filtered_in_the_kernel(self):
        conf = self.exec_conf(self.only("kdtrace-match"))
        out = self.s.mkdir("seen", 0o777)
        self.s.write_rule("10-exec.yaml", (
            "rules:\n  - match: {type: hotplug, object: /org/kernel/trace/sched, "
            "signal: sched_process_exec}\n    shell: %s\n")
            % kdtest.yq('printf "%%s\\n" "$KEVENT_PAYLOAD" > %s/$KEVENT_SEQNUM; '
                        'echo "done $KEVENT_SEQNUM" > %s' % (out, self.s.fifo.path)))
        d = self.start("--config", conf, "--sources", "socket,trace")
        d.wait_log("trace: reading %s" % EXEC)
        # the others first, then the matching ones, all on one CPU: when
        # the last matching one is in, an other before it would be too
        for prog in [self.other] * 50 + [self.match] * 50:
            r = run(prog, preexec_fn=pin)
            self.assertEqual(r.returncode, 0)
        done = sorted(int(l.split()[1]) for l in self.s.fifo.lines(50))
        self.assertEqual(done, list(range(1, 51)))
        st = d.status()["sources"]["trace"]
        self.assertEqual((st["received"], st["lost"], st["rejected"]), (50, 0, 0), st)
        for seq in (1, 50):
            with open(os.path.join(out, str(seq))) as f:
                p = payload(f.read())
            self.assertEqual(p["filename"], self.match)
            self.assertEqual(p["pid"], p["Task-Pid"])
            self.assertIn("old_pid", p)
            # no name: not in the sample, and /proc/PID may be another's by now
            self.assertNotIn("Task-Comm", p)
            self.assertIn("Cpu", p)
            self.assertNotIn("common_pid", p)
        # a task still there when its sample is read: its pid, and still no
        # name looked up in /proc
        linger = self.s.mkdir("linger")
        shutil.copy("/bin/sleep", os.path.join(linger, "kdtrace-match"))
        proc = subprocess.Popen([os.path.join(linger, "kdtrace-match"), "60"],
                                preexec_fn=pin)
        self.procs.append(proc)
        self.assertEqual(self.s.fifo.line(), "done 51")
        with open(os.path.join(out, "51")) as f:
            p = payload(f.read())
        self.assertEqual(p["Task-Pid"], str(proc.pid))
        self.assertNotIn("Task-Comm", p)
        d.stop_ok(self)

    def test_lost_counted_exactly(self):
        # keventd stopped: its rings fill and the kernel drops the rest;
        # every matching exec is then received or counted lost, exactly
        n = 3000
        d = self.start("--config", self.exec_conf(self.only("kdtrace-match")),
                       "--sources", "socket,trace")
        d.wait_log("trace: reading %s" % EXEC)
        os.kill(d.proc.pid, signal.SIGSTOP)
        try:
            r = run("sh", "-c", 'i=0; while [ $i -lt %d ]; do "$0" || exit 1; i=$((i+1)); done'
                    % n, self.match, preexec_fn=pin,
                    # 3000 programs on one CPU: a busy machine takes a while
                    timeout=10 * TIMEOUT)
        finally:
            os.kill(d.proc.pid, signal.SIGCONT)
        self.assertEqual(r.returncode, 0, r.stderr)
        # no exec after the burst: the last drops are counted from the
        # counters (PERF_FORMAT_LOST) once the rings are read, without
        # waiting for the kernel's PERF_RECORD_LOST at a next record

        def total(st):
            t = st["sources"]["trace"]
            return t["received"] + t["lost"] >= n
        st = d.wait_status(total, "every exec received or lost")
        t = st["sources"]["trace"]
        print("trace: %d execs, %d received, %d lost" % (n, t["received"], t["lost"]))
        self.assertEqual(t["received"] + t["lost"], n)
        self.assertGreater(t["lost"], 0, "the rings never filled: the test proves nothing")
        self.assertEqual(t["rejected"], 0)
        d.stop_ok(self)

    def test_refused_at_verify_and_at_load(self):
        conf = self.conf("trace:\n"
                         "  - event: sched/no_such_tracepoint\n"
                         "  - event: %s\n"
                         "    filter: 'no_such_field == 1'\n" % EXEC)
        want = ["%s:2:12: error: trace: sched/no_such_tracepoint: the kernel has no such "
                "tracepoint" % conf,
                "%s:4:13: error: trace: %s: the kernel refuses the filter "
                "\"no_such_field == 1\"" % (conf, EXEC)]
        r = run(kdtest.KEVENTCTL, "verify", "--config", conf, self.s.rules)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout.splitlines(), want)
        r = run(kdtest.KEVENTD, "--config", conf, "--control", self.s.ctl,
                "--rules-dir", self.s.rules, "--sources", "socket,trace")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.splitlines(), ["keventd: " + w for w in want])
        # a filter the kernel takes: no error
        conf = self.exec_conf(self.only("kdtrace-match"))
        r = run(kdtest.KEVENTCTL, "verify", "--config", conf, self.s.rules)
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)

    def test_reload_changes_the_entries(self):
        """Each reload's entries alone are read: the exact runs, in order,
        are the execs the current filter matches, and no other."""
        conf = self.exec_conf(self.only("kdtrace-match"))
        # each run appends the exec's program to a file, then says so
        out = self.s.path("out", "runs")
        self.s.write_rule("10-exec.yaml", (
            "rules:\n  - match: {type: hotplug, object: /org/kernel/trace/sched, "
            "signal: sched_process_exec}\n    shell: %s\n")
            % kdtest.yq('printf "%%s\\n" "$KEVENT_PAYLOAD" | sed -n "s|^filename: .*/||p" '
                        '>> %s; echo done > %s' % (out, self.s.fifo.path)))
        d = self.start("--config", conf, "--sources", "socket,trace")
        d.wait_log("trace: reading %s" % EXEC)

        def execs(prog):
            # one exec, and a run (for it, says the file at the end)
            self.assertEqual(run(prog, preexec_fn=pin).returncode, 0)
            self.assertEqual(self.s.fifo.line(), "done")

        execs(self.match)
        # the filter changed: the other program now, not the first one
        self.exec_conf(self.only("kdtrace-other"))
        r = d.ctl("reload", check=0)
        self.assertIn("keventd.yaml: trace entries changed: reading 1 tracepoint", r.stdout)
        run(self.match, preexec_fn=pin)
        execs(self.other)  # the match before it was not counted
        # a filter the kernel refuses: the current entries stay
        self.exec_conf("no_such_field == 1")
        r = d.ctl("reload")
        self.assertIn("the kernel refuses the filter", r.stdout)
        self.assertIn("keeping the current trace entries", r.stdout)
        run(self.match, preexec_fn=pin)
        execs(self.other)
        # no entry left: the source and its descriptors go
        self.assertGreater(perf_fds(d.proc.pid), 0)
        self.conf("trace:\n")
        r = d.ctl("reload", check=0)
        self.assertIn("no trace entry left", r.stdout)
        self.assertEqual(perf_fds(d.proc.pid), 0)
        # and come back with one: the first filter again
        self.exec_conf(self.only("kdtrace-match"))
        d.ctl("reload", check=0)
        self.assertGreater(perf_fds(d.proc.pid), 0)
        run(self.other, preexec_fn=pin)
        execs(self.match)
        # on one CPU, in order: an exec counted that should not have been
        # came before the last run, and is counted here
        st = d.status()
        with open(out) as f:
            self.assertEqual(f.read().split(), ["kdtrace-match", "kdtrace-other",
                                                "kdtrace-other", "kdtrace-match"])
        tr = st["sources"]["trace"]
        self.assertEqual((tr["received"], tr["lost"], tr["rejected"]), (4, 0, 0), tr)
        d.wait_status(lambda st: st["queue"]["pending"] == 0 and st["queue"]["running"] == 0,
                      "the runs over")
        kdtest.assert_accounted(self, d.status())
        d.stop_ok(self)

    def test_no_perf_descriptor_without_an_entry(self):
        for text in ("trace:\n", "max-children: 3\n"):
            d = self.start("--config", self.conf(text), "--sources", "socket,trace")
            self.assertEqual(perf_fds(d.proc.pid), 0, text)
            d.stop_ok(self)
        # with an entry: a descriptor per CPU
        d = self.start("--config", self.exec_conf(self.only("kdtrace-match")),
                       "--sources", "socket,trace")
        d.wait_log("trace: reading %s" % EXEC)
        self.assertGreaterEqual(perf_fds(d.proc.pid), 1)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Handlers that misbehave are contained, logged with their rule's name and
counted, and keventd keeps its other work going: a handler that leaves a
child behind, floods its output, closes it early, names a missing program,
or crashes; and rules that set no_new_privs and resource limits."""
import os
import select

import kdtest
from kdtest import DaemonTest, yq


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return False
    return st[st.rindex(")") + 2] != "Z"


class HandlerFaults(DaemonTest):
    def rule(self, name, shell=None, run=None, extra=""):
        body = "    shell: %s\n" % yq(shell) if shell is not None else "    run: %s\n" % run
        return "  - name: %s\n    match: {signal: %s}\n%s%s" % (name, name, body, extra)

    def ping_rule(self):
        return self.rule("ping", "echo ping > %s" % self.s.fifo.path)

    def test_orphans_do_not_outlive_their_handler(self):
        s = self.s
        s.write_rule("10.yaml", "rules:\n" + self.rule(
            "orphan", "sleep 300 & echo $! > %s/orphan.pid; echo started > %s" % (s.out, s.fifo.path)))
        d = self.start()
        d.send("general", "/f/orphan", "orphan")
        self.assertEqual(s.fifo.line(), "started")
        d.wait_idle(1)
        pid = int(s.read("out", "orphan.pid"))
        # the handler has exited: what it left in its process group is killed;
        # its pidfd says when it has died
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            pidfd = None  # already gone
        if pidfd is not None:
            try:
                r, _, _ = select.select([pidfd], [], [], kdtest.TIMEOUT)
            finally:
                os.close(pidfd)
            self.assertTrue(r, "the handler's background child survived it")
        self.assertFalse(alive(pid), "the handler's background child survived it")
        d.stop_ok(self)

    def test_output_flood_is_bounded_and_others_go_on(self):
        s = self.s
        s.write_rule("10.yaml", "rules:\n" + self.rule(
            "flood", "echo started > %s; exec yes 'a line of output that goes on and on'"
            % s.fifo.path, extra="    timeout: 3s\n") + self.ping_rule())
        d = self.start()
        d.send("general", "/f/flood", "flood")
        self.assertEqual(s.fifo.line(), "started")
        # while it floods, another object's event is handled
        d.send("general", "/f/other", "ping")
        self.assertEqual(s.fifo.line(), "ping")
        st = d.wait_status(lambda st: st["runs"]["timeouts"] == 1, "the flood timed out")
        self.assertGreater(st["runs"]["output_dropped_bytes"], 0)
        log = d.logtext()
        self.assertIn("rule flood[", log)
        self.assertIn("bytes of output not logged", log)
        self.assertLess(log.count("a line of output"), 2000, "logged output is bounded")
        d.stop_ok(self)

    def test_closed_stdout_missing_program_and_crash(self):
        s = self.s
        s.write_rule("10.yaml", "rules:\n"
                     + self.rule("closer", "exec >&- 2>&-; echo closed > %s" % s.fifo.path)
                     + self.rule("missing", run="[/nonexistent/keventd-handler, x]")
                     + self.rule("crash", "echo crashing > %s; kill -SEGV $$" % s.fifo.path)
                     + self.ping_rule())
        d = self.start()
        d.send("general", "/f/a", "closer")
        self.assertEqual(s.fifo.line(), "closed")
        d.send("general", "/f/b", "missing")
        d.send("general", "/f/c", "crash")
        self.assertEqual(s.fifo.line(), "crashing")
        d.send("general", "/f/d", "ping")
        self.assertEqual(s.fifo.line(), "ping")
        st = d.wait_idle(4)
        rules = {r["name"]: r for r in st["rules"]}
        self.assertEqual(rules["closer"]["failures"], 0)
        self.assertEqual(rules["missing"]["failures"], 1)
        self.assertEqual(rules["crash"]["failures"], 1)
        self.assertEqual(rules["ping"]["failures"], 0)
        log = d.logtext()
        self.assertIn("rule missing: cannot run /nonexistent/keventd-handler", log)
        self.assertIn("rule crash[", log)
        self.assertIn("killed by signal 11", log)
        d.stop_ok(self)

    def test_no_new_privs_and_limits(self):
        s = self.s
        out = s.path("out", "limits")
        s.write_rule("10.yaml", "rules:\n" + self.rule(
            "limited", "{ grep NoNewPrivs /proc/self/status; ulimit -n; ulimit -t; ulimit -c; } > %s;"
            " echo done > %s" % (out, s.fifo.path),
            extra="    no_new_privs: true\n    limits: {nofile: 64, cpu: 7s, core: 0}\n")
            + self.rule("plain", "grep NoNewPrivs /proc/self/status > %s.plain; echo done > %s"
                        % (out, s.fifo.path)))
        d = self.start()
        d.send("general", "/f/l", "limited")
        self.assertEqual(s.fifo.line(), "done")
        lines = s.read("out", "limits").split()
        self.assertEqual(lines[:2], ["NoNewPrivs:", "1"])
        self.assertEqual(lines[2:], ["64", "7", "0"])
        d.send("general", "/f/p", "plain")
        self.assertEqual(s.fifo.line(), "done")
        self.assertEqual(s.read("out", "limits.plain").split(), ["NoNewPrivs:", "0"])
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

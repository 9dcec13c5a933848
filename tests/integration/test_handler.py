#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a handler sees (keventd.rules(5)): argv, a clean environment, cwd,
umask, stdin, descriptors, signals; hostile event text stays literal."""
import json
import os
import pwd
import signal

import kdtest
from kdtest import DaemonTest, yq

FIXED = ["PATH", "KEVENT_TYPE", "KEVENT_OBJECT", "KEVENT_SIGNAL", "KEVENT_PAYLOAD",
         "KEVENT_SEQNUM", "KEVENT_TIMESTAMP", "KEVENT_SOURCE", "KEVENT_RULE", "KEVENT_RULE_FILE"]


def env_dict(lst):
    d = {}
    for e in lst:
        k, _, v = e.partition("=")
        assert k not in d, "duplicate variable " + k
        d[k] = v
    return d


class HandlerEnvironment(DaemonTest):
    def report_rule(self, name, tag, extra="", args=()):
        out = self.s.path("out", tag + ".json")
        return ("  - name: %s\n    match: {signal: %s}\n    run: %s\n%s"
                % (name, tag, self.h("report", out, self.s.fifo.path, tag, *args), extra))

    def report(self, tag):
        self.assertEqual(self.s.fifo.line(), "done " + tag)
        with open(self.s.path("out", tag + ".json")) as f:
            return json.load(f)

    def check_process(self, info):
        self.assertEqual(info["cwd"], "/")
        self.assertEqual(info["umask"], 0o022)
        self.assertEqual(info["stdin"], "/dev/null")
        self.assertEqual(info["fds"], [0, 1, 2], "descriptors open in the handler")
        self.assertTrue(info["sid_is_pid"], "handler is not a session leader")

    def test_environment_and_argv(self):
        rule_file = self.s.write_rule("10-env.yaml", "rules:\n" + self.report_rule(
            "env-dump", "env", args=["${KEVENT_CPU}", "lit ${KEVENT_SIGNAL} eral", "${KEVENT_NOPE}",
                                     "$${KEVENT_CPU}", "${KEVENT_FAN_SPEED}"]))
        d = self.start()
        payload = "Cpu: 3\nfan-speed: 1200 rpm\ntype: evil\nPath: /evil\nPATH: /evil2\nnot a property\n"
        d.send("power", "/org/kernel/devices/system/cpu/temperature", "env", payload)
        info = self.report("env")
        self.check_process(info)
        self.assertEqual(info["argv"], ["3", "lit env eral", "", "${KEVENT_CPU}", "1200 rpm"])
        env = env_dict(info["env"])
        self.assertNotIn(kdtest.CANARY, env)
        self.assertNotIn("NOTIFY_SOCKET", env)
        self.assertNotIn("HOME", env)
        self.assertEqual(env["PATH"], kdtest.HANDLER_PATH)
        self.assertEqual(env["KEVENT_TYPE"], "power")
        self.assertEqual(env["KEVENT_OBJECT"], "/org/kernel/devices/system/cpu/temperature")
        self.assertEqual(env["KEVENT_SIGNAL"], "env")
        self.assertEqual(env["KEVENT_PAYLOAD"], payload)
        self.assertEqual(env["KEVENT_SEQNUM"], "1")
        self.assertRegex(env["KEVENT_TIMESTAMP"], r"^[1-9][0-9]{18}$")
        self.assertEqual(env["KEVENT_SOURCE"], "socket")
        self.assertEqual(env["KEVENT_RULE"], "env-dump")
        self.assertEqual(env["KEVENT_RULE_FILE"], rule_file)
        self.assertEqual(env["KEVENT_CPU"], "3")
        self.assertEqual(env["KEVENT_FAN_SPEED"], "1200 rpm")
        self.assertEqual(env["KEVENT_PATH"], "/evil")  # the first of Path/PATH wins
        # exactly these, nothing else
        self.assertEqual(sorted(env), sorted(FIXED + ["KEVENT_CPU", "KEVENT_FAN_SPEED", "KEVENT_PATH"]))
        d.stop_ok(self)

    def test_default_rule_name_and_second_event(self):
        self.s.write_rule("20-anon.yaml", "rules:\n  - match: {signal: anon}\n    run: %s\n"
                          % self.h("report", self.s.path("out", "anon.json"), self.s.fifo.path, "anon"))
        d = self.start()
        d.send("general", "/a", "other")
        d.send("general", "/a", "anon")
        env = env_dict(self.report("anon")["env"])
        self.assertEqual(env["KEVENT_RULE"], "20-anon.yaml:0")
        self.assertEqual(env["KEVENT_SEQNUM"], "2")
        self.assertEqual(env["KEVENT_TYPE"], "general")
        self.assertEqual(env["KEVENT_PAYLOAD"], "")
        self.assertEqual(sorted(env), sorted(FIXED))
        d.stop_ok(self)

    def test_signals_reset(self):
        # keventd blocks SIGTERM/SIGINT/SIGHUP and ignores SIGPIPE; a handler must not
        # inherit that, nor what keventd's own parent left ignored
        out = self.s.path("out", "sig")
        self.s.write_rule("10-sig.yaml", "rules:\n  - match: {signal: sig}\n    shell: %s\n"
                          % yq("grep -E '^Sig(Blk|Ign)' /proc/self/status > %s; echo done > %s"
                               % (out, self.s.fifo.path)))
        inherited = [signal.SIGUSR1, signal.SIGQUIT, signal.SIGRTMIN + 3, signal.SIGRTMAX]

        def ignore():
            for sig in inherited:
                signal.signal(sig, signal.SIG_IGN)
        d = self.start(preexec=ignore)
        with open("/proc/%d/status" % d.proc.pid) as f:
            ign = int(dict(l.split(":\t", 1) for l in f.read().splitlines())["SigIgn"], 16)
        for sig in inherited + [signal.SIGPIPE]:
            self.assertTrue(ign & (1 << (sig - 1)), "keventd itself ignores %d" % sig)
        d.send("general", "/s", "sig")
        self.assertEqual(self.s.fifo.line(), "done")
        lines = dict(l.split(":\t") for l in self.s.read("out", "sig").splitlines())
        self.assertEqual(int(lines["SigBlk"], 16), 0, "blocked signals in the handler")
        # every signal at its default, glibc's internal 32 and 33 included (its
        # posix_spawn would leave those two ignored)
        self.assertEqual(int(lines["SigIgn"], 16), 0,
                         "ignored signals in the handler: " + lines["SigIgn"])
        d.stop_ok(self)

    @staticmethod
    def _nobody():
        try:
            return pwd.getpwnam("nobody")
        except KeyError:
            return None

    def test_user_handler(self):
        if not kdtest.IS_ROOT or not self._nobody():
            self.skipTest("needs root and a 'nobody' user")
        nobody = self._nobody()
        self.s.write_rule("10-user.yaml", "rules:\n" + self.report_rule(
            "as-nobody", "user", extra="    user: nobody\n", args=["${KEVENT_X}"]))
        d = self.start()
        d.send("general", "/u", "user", "X: y")
        info = self.report("user")
        self.check_process(info)
        self.assertEqual(info["uid"], nobody.pw_uid)
        self.assertEqual(info["gid"], nobody.pw_gid)
        self.assertNotIn(0, info["groups"])
        self.assertEqual(info["argv"], ["y"])
        env = env_dict(info["env"])
        self.assertEqual(sorted(env), sorted(FIXED + ["KEVENT_X"]))
        d.stop_ok(self)


class HandlerOutput(DaemonTest):
    def test_output_logged_line_by_line_and_bounded(self):
        s = self.s
        s.write_rule("10-out.yaml", (
            "rules:\n"
            "  - name: talk\n    match: {signal: talk}\n    shell: %s\n"
            "  - name: flood\n    match: {signal: flood}\n    shell: %s\n")
            % (kdtest.yq("echo out-line; echo err-line >&2; echo 'two words'; printf 'no newline'; exit 3"),
               kdtest.yq("head -c 300000 /dev/zero | tr '\\\\0' a; echo; echo tail-line")))
        d = self.start()
        d.send("general", "/o", "talk")
        d.send("general", "/o", "flood")
        st = d.wait_idle(2)
        log = d.logtext()
        for stream, line in (("stdout", "out-line"), ("stderr", "err-line"), ("stdout", "two words"),
                             ("stdout", "no newline")):
            # and the fields that find it (KEVENT_RULE, KEVENT_SEQNUM in the journal)
            self.assertRegex(log, r"rule talk\[\d+\] %s: %s rule=talk seq=1\n" % (stream, line))
        self.assertRegex(log, r"rule talk\[\d+\]: exited 3 after \d+ms \(seq 1\)")
        # the flood is logged up to a bound, in bounded lines, and the rest counted
        flood = [l for l in log.splitlines() if "rule flood[" in l and "stdout: " in l]
        self.assertGreater(len(flood), 10)
        self.assertLessEqual(max(len(l.split("stdout: ", 1)[1]) for l in flood), 4096)
        self.assertLess(sum(len(l) for l in flood), 300000)
        self.assertRegex(log, r"rule flood\[\d+\]: \d+ bytes of output not logged")
        self.assertGreater(st["runs"]["output_dropped_bytes"], 0)
        self.assertEqual(st["runs"]["failures"], 1)
        d.stop_ok(self)

    def test_journal_priority_prefixes(self):
        d = self.start(journal=True)
        d.send("general", "/j", "x")
        d.wait_idle(1)
        d.stop_ok(self)
        lines = d.logtext().splitlines()
        self.assertTrue(lines)
        for l in lines:
            self.assertRegex(l, r"^<[0-7]>[^<]")
        self.assertTrue(any(l.startswith("<6>") for l in lines))


HOSTILE_PAYLOAD = ("Cmd: $(touch {p}/pwned1)\n"
                   "Tick: `touch {p}/pwned2`\n"
                   "Semi: x; touch {p}/pwned3; echo\n"
                   "Var: ${{KEVENT_TYPE}}\n"
                   "Quote: '\"; touch {p}/pwned4 #\n"
                   "Glob: *\n")


class HostilePayloads(DaemonTest):
    def expected(self, p):
        return ["$(touch %s/pwned1)" % p, "`touch %s/pwned2`" % p, "x; touch %s/pwned3; echo" % p,
                "${KEVENT_TYPE}", "'\"; touch %s/pwned4 #" % p, "*"]

    def check_no_pwn(self):
        for i in range(1, 6):
            self.assertFalse(os.path.exists(self.s.path("pwned%d" % i)), "pwned%d exists" % i)

    def test_run_and_shell_keep_text_literal(self):
        p = self.s.dir
        payload = HOSTILE_PAYLOAD.format(p=p)
        obj = "/x/$(touch %s/pwned5)/`id`;ls" % p
        vars_ = ["KEVENT_CMD", "KEVENT_TICK", "KEVENT_SEMI", "KEVENT_VAR", "KEVENT_QUOTE", "KEVENT_GLOB"]
        run_args = ["${%s}" % v for v in vars_] + ["${KEVENT_PAYLOAD}", "${KEVENT_OBJECT}"]
        # the shell rule reaches the text only as variables, quoted as a careful admin would;
        # and an unquoted use must still not execute anything (no eval of data)
        script = ('exec %s report %s %s shell %s "$KEVENT_PAYLOAD" "$KEVENT_OBJECT" $KEVENT_SEMI'
                  % (self.s.handler, self.s.path("out", "shell.json"), self.s.fifo.path,
                     " ".join('"$%s"' % v for v in vars_)))
        self.s.write_rule("10-hostile.yaml", (
            "rules:\n"
            "  - name: argv\n    match: {signal: hostile}\n    run: %s\n"
            "  - name: shell\n    match: {signal: hostile}\n    shell: %s\n")
            % (self.h("report", self.s.path("out", "run.json"), self.s.fifo.path, "run", *run_args),
               yq(script)))
        d = self.start()
        d.send("general", obj, "hostile", payload)
        self.assertEqual(self.s.fifo.lines(2), ["done run", "done shell"])
        exp = self.expected(p) + [payload, obj]
        with open(self.s.path("out", "run.json")) as f:
            self.assertEqual(json.load(f)["argv"], exp)
        with open(self.s.path("out", "shell.json")) as f:
            # unquoted $KEVENT_SEMI is split into words by sh, but never run
            self.assertEqual(json.load(f)["argv"], exp + ["x;", "touch", "%s/pwned3;" % p, "echo"])
        self.check_no_pwn()
        d.stop_ok(self)

    def test_newlines_in_payload(self):
        self.s.write_rule("10-nl.yaml", "rules:\n  - match: {signal: nl}\n    run: %s\n"
                          % self.h("report", self.s.path("out", "nl.json"), self.s.fifo.path, "nl",
                                   "${KEVENT_PAYLOAD}", "${KEVENT_A}"))
        d = self.start()
        payload = "A: one\n\n\nB: two\ntouch %s/pwned1\n" % self.s.dir
        d.send("general", "/nl", "nl", payload)
        self.assertEqual(self.s.fifo.line(), "done nl")
        with open(self.s.path("out", "nl.json")) as f:
            self.assertEqual(json.load(f)["argv"], [payload, "one"])
        self.check_no_pwn()
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

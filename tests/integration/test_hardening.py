#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Handler hardening (keventd.rules(5), ENVIRONMENT; docs/SECURITY.md):
event text never sets what changes the C library, the shells or an
interpreter; keventd started with descriptor 0, 1 or 2 closed fills them
with /dev/null before it opens anything."""
import json
import os

import kdtest
from kdtest import DaemonTest

DANGEROUS = ["GLIBC_TUNABLES", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES",
             "RESOLV_HOST_CONF", "SHELLOPTS", "BASHOPTS", "PS4", "PYTHONPATH",
             "PYTHONSTARTUP", "PERL5OPT", "PERL5LIB", "RUBYOPT", "LD_PRELOAD"]


class Hardening(DaemonTest):
    def report_rule(self, tag):
        out = self.s.path("out", tag + ".json")
        return ("rules:\n  - name: r-%s\n    match: {signal: %s}\n    run: %s\n"
                % (tag, tag, self.h("report", out, self.s.fifo.path, tag)))

    def report(self, tag):
        self.assertEqual(self.s.fifo.line(), "done " + tag)
        with open(self.s.path("out", tag + ".json")) as f:
            return json.load(f)

    def test_payload_never_sets_dangerous_variables(self):
        self.s.write_rule("10-env.yaml", self.report_rule("env"))
        d = self.start()
        payload = "".join("%s: /tmp/evil\n" % n for n in DANGEROUS)
        d.send("general", "/h", "env", payload)
        info = self.report("env")
        names = {e.partition("=")[0]: e.partition("=")[2] for e in info["env"]}
        for n in DANGEROUS:
            self.assertNotIn(n, names)
            self.assertEqual(names["KEVENT_" + n], "/tmp/evil")
        d.stop_ok(self)

    def test_closed_std_descriptors_become_dev_null(self):
        self.s.write_rule("10-env.yaml", self.report_rule("fds"))

        def close_in_out():
            os.close(0)
            os.close(1)

        d = self.start(preexec=close_in_out)
        pid = d.proc.pid
        for fd in (0, 1):
            self.assertEqual(os.readlink("/proc/%d/fd/%d" % (pid, fd)), "/dev/null")
        # stderr is still the log, and keventd serves as before
        self.assertEqual(os.readlink("/proc/%d/fd/2" % pid), os.path.realpath(d.log_path))
        d.send("general", "/h", "fds", "")
        info = self.report("fds")
        self.assertEqual(info["fds"], [0, 1, 2])
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

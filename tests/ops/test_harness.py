# SPDX-License-Identifier: GPL-2.0-or-later
"""The test harness's own pieces, alone: the exit status of kdtest's
run_tests() (what ctest reads: a file that tested nothing never passes),
and the reader of debian/tests/control that the system tier's
78_autopkgtest runs the autopkgtests from.

Environment (ctest sets it): KEVENT_SOURCE_DIR."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("KEVENT_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))
sys.path.insert(0, os.path.join(SRC, "tests", "system"))

import autopkgtest_control as apc  # noqa: E402
import kdtest  # noqa: E402


class RunTests(unittest.TestCase):
    """A test file run through kdtest.run_tests(), and its exit status."""

    def status(self, body, *args):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.py")
            with open(path, "w") as f:
                f.write("import sys, unittest\nsys.path.insert(0, %r)\nimport kdtest\n\n"
                        % os.path.join(SRC, "tests", "integration"))
                f.write(textwrap.dedent(body))
                f.write("\nkdtest.run_tests()\n")
            env = dict(os.environ)
            env.pop("KEVENT_STRICT", None)
            r = subprocess.run([sys.executable, path] + list(args), capture_output=True,
                               text=True, timeout=60, env=env)
            return r.returncode, r.stderr

    PASS = """
        class T(unittest.TestCase):
            def test_a(self):
                pass
    """

    def test_all_ran(self):
        self.assertEqual(self.status(self.PASS)[0], 0)

    def test_none_ran(self):
        rc, err = self.status(self.PASS, "-k", "no_such_test")
        self.assertEqual(rc, 1, err)
        self.assertIn("no test ran", err)
        rc, err = self.status("class T(unittest.TestCase):\n    pass\n")
        self.assertEqual(rc, 1, err)

    def test_failed(self):
        rc, err = self.status("""
            class T(unittest.TestCase):
                def test_a(self):
                    self.fail("no")
                def test_b(self):
                    self.skipTest("a reason")
        """)
        self.assertEqual(rc, 1, err)

    def test_skipped_with_a_reason(self):
        rc, err = self.status("""
            class T(unittest.TestCase):
                def test_a(self):
                    pass
                def test_b(self):
                    self.skipTest("no widget here")
        """)
        self.assertEqual(rc, 77, err)
        self.assertIn("no widget here", err)
        # a class skipped whole runs no test, and says why
        rc, err = self.status("""
            class T(unittest.TestCase):
                @classmethod
                def setUpClass(cls):
                    raise unittest.SkipTest("no gadget here")
                def test_a(self):
                    pass
        """)
        self.assertEqual(rc, 77, err)
        self.assertIn("no gadget here", err)

    def test_skipped_without_a_reason(self):
        rc, err = self.status("""
            class T(unittest.TestCase):
                def test_a(self):
                    self.skipTest("")
        """)
        self.assertEqual(rc, 1, err)
        self.assertIn("skipped without a reason", err)


class AutopkgtestControl(unittest.TestCase):
    def test_the_package_control(self):
        with open(os.path.join(SRC, "debian", "tests", "control")) as f:
            tests = apc.parse(f.read())
        got = [(t.name, t.command, t.depends, sorted(t.restrictions)) for t in tests]
        self.assertEqual(got, [
            ("daemon", "debian/tests/daemon", ["keventd"],
             ["isolation-machine", "needs-root"]),
            ("rule-fires", "debian/tests/rule-fires", ["keventd"],
             ["breaks-testbed", "isolation-machine", "needs-root"]),
            ("dkms-autopkgtest", "/usr/lib/dkms/dkms-autopkgtest kevent-dkms",
             ["dkms", "kevent-dkms"], ["allow-stderr", "breaks-testbed", "needs-root"]),
        ])
        # what 78_autopkgtest runs on a booted guest: each is a program
        for t in tests:
            if "isolation-machine" in t.restrictions:
                self.assertTrue(os.access(os.path.join(SRC, t.command), os.X_OK), t.command)

    def test_format(self):
        tests = apc.parse(textwrap.dedent("""\
            # a comment
            Tests: one, two
              three
            Depends: foo (>= 1.2) | bar, baz:any [amd64],
            # a comment inside a stanza
             qux
            restrictions: needs-root
              allow-stderr

            Test-Command: echo hi
            Features: test-name=greet

            Test-Command: true
            """), "t")
        self.assertEqual([(t.name, t.command) for t in tests],
                         [("one", "t/one"), ("two", "t/two"), ("three", "t/three"),
                          ("greet", "echo hi"), ("command2", "true")])
        self.assertEqual(tests[0].depends, ["foo", "baz", "qux"])
        self.assertEqual(tests[0].restrictions, {"needs-root", "allow-stderr"})
        self.assertEqual(tests[3].features, {"test-name=greet"})
        # no Depends: the source's packages, "@"
        self.assertEqual(tests[4].depends, ["@"])

    def test_refused(self):
        for text in ("Tests: a\nTest-Command: b\n",         # both
                     "Depends: a\n",                        # neither
                     "  Tests: a\n",                        # a continuation first
                     "Tests: a\nTests: b\n",                # a field twice
                     "Tests a\n",                           # not a field
                     "Tests:\n"):                           # no name
            with self.assertRaises(apc.ControlError, msg=text):
                apc.parse(text)


if __name__ == "__main__":
    kdtest.run_tests()

# SPDX-License-Identifier: GPL-2.0-or-later
"""One list of sources, everywhere (keventd(8) --sources): every place that
lists the sources names each source of KEVENT_SOURCE_LIST (src/event/event.h),
in that list's order where the place keeps one; a new source that one of
them misses fails here."""
import os
import re
import subprocess
import unittest

SRC = os.environ.get("KEVENT_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def read(*parts):
    with open(os.path.join(SRC, *parts)) as f:
        return f.read()


def table():
    text = read("src", "event", "event.h")
    block = text[text.index("#define KEVENT_SOURCE_LIST(X)"):]
    block = block[:block.index("\nenum kevent_source")]
    names = re.findall(r'X\(\s*[A-Z_]+\s*,\s*"([a-z]+)"\s*\)', block)
    assert len(names) >= 11, names
    return names


class SourcesLists(unittest.TestCase):
    def setUp(self):
        self.names = table()

    def test_help_and_errors(self):
        for prog, args in (("KEVENTD", ["--help"]), ("KEVENTCTL", ["test", "--source", "x",
                                                                   "general", "/o", "s"])):
            exe = os.environ.get(prog)
            if not exe:
                self.skipTest("%s is not set (run through ctest)" % prog)
            r = subprocess.run([exe] + args, capture_output=True, text=True)
            out = re.sub(r"\s+", " ", r.stdout + r.stderr)  # a help text wraps
            self.assertIn(", ".join(self.names), out, "%s %s" % (prog, args))

    def test_bash_completion(self):
        m = re.search(r'local sources="([^"]*)"', read("keventd", "keventctl.bash-completion"))
        self.assertTrue(m, "the completion's list of sources")
        self.assertEqual(m.group(1).split(), self.names)
        # and every --source completes from it
        text = read("keventd", "keventctl.bash-completion")
        self.assertNotRegex(text, r"compgen -W '[^']*\bthermal\b")

    def test_rules_man_page(self):
        text = read("docs", "keventd.rules.5")
        para = text[text.index(".B source\nWhere the event came from:"):]
        para = para[:para.index("No globs.")]
        found = re.findall(r"^\.B ([a-z]+)$", para, re.M)
        # each source named once, in order (other words in bold aside)
        self.assertEqual([w for w in found if w in self.names], self.names)

    def test_sources_man_page(self):
        # keventd.sources(7): the list in its DESCRIPTION and a section per
        # source, both in the table's order
        text = read("docs", "keventd.sources.7")
        para = text[text.index("The sources, in the order keventd lists them:"):]
        para = para[:para.index("\n.B keventd ")]
        self.assertEqual(re.findall(r"^\.BR? ([a-z]+)", para, re.M), self.names)
        self.assertEqual(re.findall(r"^\.SS ([a-z]+):", text, re.M), self.names)

    def test_sources_reference(self):
        found = re.findall(r"^## `([a-z]+)`", read("docs", "sources.md"), re.M)
        self.assertEqual(sorted(found), sorted(self.names))

    def test_what_works_without_the_module(self):
        others = [n for n in self.names if n != "kernel"]
        for path, pat in ((("README.md",), r"every source but\s+`kernel` still works: ([^.]*)\."),
                          (("docs", "packaging.md"),
                           r"every source but `kernel` works without the module \(([^)]*)\)")):
            m = re.search(pat, read(*path))
            self.assertTrue(m, "%s: the sources that work without kevent.ko" % "/".join(path))
            listed = re.findall(r"[a-z]+", m.group(1).replace(" and ", ", "))
            self.assertEqual([w for w in listed if w != "and"], others, "/".join(path))


if __name__ == "__main__":
    unittest.main(verbosity=2)

# SPDX-License-Identifier: GPL-2.0-or-later
"""debian/tests/control, read as autopkgtest reads it (the DEP-8 format):
stanzas separated by blank lines, '#' comment lines, a field's value
continued on lines that start with white space, field names in any case.
Pure: the system tier's 78_autopkgtest runs what it lists, and
tests/ops/test_harness.py tests it alone."""
import re


class ControlError(ValueError):
    pass


class Test:
    """One test: name, command (a shell command, run from the source
    tree's top), depends (the Depends field's packages, alternatives and
    versions left out), restrictions (a set), features (a set)."""

    def __init__(self, name, command, depends, restrictions, features):
        self.name = name
        self.command = command
        self.depends = depends
        self.restrictions = restrictions
        self.features = features

    def __repr__(self):
        return "Test(%r, %r, %r, %r, %r)" % (self.name, self.command, self.depends,
                                             sorted(self.restrictions), sorted(self.features))


def stanzas(text):
    """The stanzas of text, each a dict of lower-cased field names to values
    (continuation lines joined with a space)."""
    out, cur, last = [], {}, None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                out.append(cur)
            cur, last = {}, None
            continue
        if line[0] in " \t":
            if last is None:
                raise ControlError("line %d: a continuation with no field before it" % n)
            cur[last] = (cur[last] + " " + line.strip()).strip()
            continue
        m = re.match(r"([A-Za-z0-9-]+):(.*)$", line)
        if not m:
            raise ControlError("line %d: not a field: %r" % (n, line))
        last = m.group(1).lower()
        if last in cur:
            raise ControlError("line %d: %s given twice in a stanza" % (n, m.group(1)))
        cur[last] = m.group(2).strip()
    if cur:
        out.append(cur)
    return out


def words(value):
    """A list of Tests:, Restrictions: or Features: (white space or commas)."""
    return [w for w in re.split(r"[\s,]+", value or "") if w]


def depends(value):
    """The packages of a Depends field: each of its comma-separated
    entries' first alternative, without its version or architectures."""
    out = []
    for entry in (value or "").split(","):
        entry = entry.strip()
        if entry:
            out.append(re.split(r"[\s(\[:|]", entry.split("|")[0].strip(), 1)[0])
    return out


def parse(text, tests_dir="debian/tests"):
    """The tests of a control file, in its order: a stanza's Tests: makes
    one test per name, run as tests_dir/NAME; a Test-Command: one test,
    named by its Features' test-name= or command1, command2, ..."""
    res, n_cmd = [], 0
    for st in stanzas(text):
        deps = depends(st.get("depends", "@"))
        restrictions = set(words(st.get("restrictions")))
        features = set(words(st.get("features")))
        if ("tests" in st) == ("test-command" in st):
            raise ControlError("a stanza needs Tests: or Test-Command:, one of them: %r" % st)
        if "tests-directory" in st and "tests" in st:
            d = st["tests-directory"]
        else:
            d = tests_dir
        if "tests" in st:
            names = words(st["tests"])
            if not names:
                raise ControlError("an empty Tests: field")
            for name in names:
                res.append(Test(name, "%s/%s" % (d, name), deps, restrictions, features))
        else:
            n_cmd += 1
            name = "command%d" % n_cmd
            for f in features:
                if f.startswith("test-name="):
                    name = f.split("=", 1)[1]
            res.append(Test(name, st["test-command"], deps, restrictions, features))
    return res

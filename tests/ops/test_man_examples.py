# SPDX-License-Identifier: GPL-2.0-or-later
"""Every example in the man pages can be used as written: each whole rule
file (an example block whose first key is `rules:` or `conditions:`)
passes `keventctl verify`, each keventd.yaml example passes `keventctl
verify --config`, and each `keventctl test` command shown after a rule
file finds that file's rules matching.  A block that begins indented is a
fragment of a rule and is not checked alone."""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

SRC = os.environ.get("KEVENT_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PAGES = ("keventd.8", "keventctl.8", "keventd.rules.5", "keventd.yaml.5",
         "keventd.sources.7", "send_kevent.9")
# keventd.yaml's keys (keventd.yaml(5)): a block that starts with one is
# a configuration file
CONFIG_KEYS = {"rules-dir", "control", "control-group", "sources", "udev-monitor",
               "max-children", "queue-size", "history", "history-bytes", "state-dir",
               "journal-size", "log-level", "log-format", "dry-run", "dbus", "mqtt",
               "trace", "fs", "kmsg", "lib-dir", "notify", "alertmanager"}
ESCAPES = {r"\-": "-", r"\e": "\\", r"\(aq": "'", r"\(dq": '"', r"\(de": "\u00b0",
           r"\(em": "\u2014", r"\(bu": "\u2022", r"\~": " ", r"\&": "", r"\fB": "",
           r"\fI": "", r"\fR": "", r"\fP": ""}
FILE_COMMENT = re.compile(r"#\s*(/\S+\.ya?ml)\s*$")


def unescape(text):
    return re.sub(r"\\(\(..|f[BIRP]|[-e~&])", lambda m: ESCAPES[m.group(0)], text)


def blocks(page):
    """(line, text) of each example block of a page: .EX/.EE and .nf/.fi,
    requests dropped, groff escapes undone."""
    with open(os.path.join(SRC, "docs", page)) as f:
        src = f.read()
    for m in re.finditer(r"^\.(EX|nf)\n(.*?)^\.(EE|fi)\n", src, re.M | re.S):
        lines = [unescape(l) for l in m.group(2).split("\n") if not l.startswith(".")]
        line = src.count("\n", 0, m.start()) + 2
        # a block that shows two files, each under a comment naming it,
        # is two examples
        start = 0
        for i, l in enumerate(lines):
            if i > start and FILE_COMMENT.match(l):
                yield line + start, "\n".join(lines[start:i]).rstrip("\n")
                start = i
        yield line + start, "\n".join(lines[start:])


def kind(text):
    """'rules', 'config', 'test' (a keventctl test command) or None."""
    if file_name(text, "").endswith("/keventd.yaml"):
        return "config"
    first = next((l for l in text.split("\n") if l.strip() and not l.startswith("#")), "")
    if re.match(r"(rules|conditions):\s*$", first):
        return "rules"
    m = re.match(r"([a-z_-]+):", first)
    if m and m.group(1) in CONFIG_KEYS:
        return "config"
    if first.startswith("keventctl test "):
        return "test"
    return None


def file_name(text, default):
    """The path the example's first comment names, else default."""
    m = FILE_COMMENT.match(text.split("\n", 1)[0])
    return m.group(1) if m else default


def keventctl():
    exe = os.environ.get("KEVENTCTL")
    if not exe:
        raise unittest.SkipTest("KEVENTCTL is not set (run through ctest)")
    return exe


def run(args):
    env = dict(os.environ, NO_COLOR="1", LC_ALL="C.UTF-8")
    return subprocess.run([keventctl()] + args, capture_output=True, text=True, env=env,
                          timeout=60)


def stage_rules(tmp, text, page, line):
    """Writes a rule-file example into tmp as keventd would find it (a
    drop-in beside the packaged file it changes); returns the directory."""
    name = file_name(text, "/etc/keventd/rules.d/50-example.yaml")
    d = os.path.join(tmp, "rules.d")
    os.makedirs(d, exist_ok=True)
    rel = name.split("/rules.d/", 1)[-1] if "/rules.d/" in name else os.path.basename(name)
    m = re.match(r"(.*\.yaml)\.d/", rel)
    if m:  # a drop-in: the file it changes is one the package ships
        base = os.path.join(SRC, "rules.d", m.group(1))
        if not os.path.exists(base):
            raise AssertionError("%s:%d: a drop-in for %s, which rules.d/ does not ship"
                                 % (page, line, m.group(1)))
        shutil.copy(base, os.path.join(d, m.group(1)))
    path = os.path.join(d, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")
    return d


def verify_rules(text, page, line):
    """None if keventctl verify takes the example, else why not."""
    with tempfile.TemporaryDirectory() as tmp:
        d = stage_rules(tmp, text, page, line)
        r = run(["verify", d])
        if r.returncode != 0:
            return "%s:%d: keventctl verify exited %d:\n%s%s" % (page, line, r.returncode,
                                                                 r.stdout, r.stderr)
    return None


# a secret an example names (password_file: /etc/keventd/x.password): the
# admin makes it; the check gets one of its own, as the admin would (0600)
SECRET = re.compile(r"^(\s*\w+_file:\s*)(/\S+)", re.M)


def verify_config(text, page, line):
    with tempfile.TemporaryDirectory() as tmp:

        def secret(m):
            made = os.path.join(tmp, os.path.basename(m.group(2)))
            fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.write(fd, b"s3cret\n")
            os.close(fd)
            return m.group(1) + made
        text = SECRET.sub(secret, text)
        path = os.path.join(tmp, "keventd.yaml")
        with open(path, "w") as f:
            f.write(text + "\n")
        r = run(["verify", "--config", path])
        if r.returncode != 0:
            return "%s:%d: keventctl verify --config exited %d:\n%s%s" % (
                page, line, r.returncode, r.stdout, r.stderr)
    return None


def test_command(text, rules_text, page, line):
    """Runs the example's `keventctl test` against the rule file shown
    before it on its page, or the package's rules (rules.d/) when none is
    (without --run: nothing runs); None if a rule of those matches, else
    why not."""
    cmds = [c for c in text.replace("\\\n", " ").split("\n") if c.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        if rules_text is None:
            d = os.path.join(tmp, "rules.d")
            shutil.copytree(os.path.join(SRC, "rules.d"), d)
            rules_text = ""
            for name in sorted(os.listdir(d)):
                with open(os.path.join(d, name)) as f:
                    rules_text += f.read()
        else:
            d = stage_rules(tmp, rules_text, page, line)
        names = re.findall(r"^\s*-\s*name:\s*(\S+)", rules_text, re.M)
        # each command of the block, the shell expanding its $(printf ...)
        # as the reader's would; keventctl is the one built, with the
        # example's rules and without --run
        for cmd in cmds:
            script = ('keventctl() { shift; set -- test --rules-dir "$KDIR" "$@"; '
                      'for a; do shift; [ "$a" = --run ] || set -- "$@" "$a"; done; '
                      'exec "$KCTL" "$@"; }; ' + cmd)
            env = dict(os.environ, KCTL=keventctl(), KDIR=d, LC_ALL="C.UTF-8", NO_COLOR="1")
            r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env,
                               timeout=60)
            matched = [n for n in names
                       if re.search(r"^rule %s \(.*\): matched$" % re.escape(n), r.stdout, re.M)]
            if r.returncode != 0 or not matched:
                return "%s:%d: %s\nexited %d, no rule of the example above matched:\n%s%s" % (
                    page, line, cmd, r.returncode, r.stdout, r.stderr)
    return None


def examples():
    """(page, line, kind, text, the last rule file before it) of every
    checked example."""
    out = []
    for page in PAGES:
        last_rules = None
        for line, text in blocks(page):
            k = kind(text)
            if k == "rules":
                last_rules = text
            if k:
                out.append((page, line, k, text, last_rules))
    return out


class ManExamples(unittest.TestCase):
    def test_found(self):
        # the extraction itself: a change of markup must not make this pass
        # by finding nothing
        found = examples()
        by_kind = {k: sum(1 for e in found if e[2] == k) for k in ("rules", "config", "test")}
        self.assertGreaterEqual(by_kind["rules"], 25, by_kind)
        self.assertGreaterEqual(by_kind["config"], 3, by_kind)
        self.assertGreaterEqual(by_kind["test"], 4, by_kind)
        sources = [e for e in found if e[0] == "keventd.sources.7" and e[2] == "rules"]
        self.assertGreaterEqual(len(sources), 12, "an example rule per source")

    def test_rule_files_verify(self):
        failures = [f for f in (verify_rules(t, p, l) for p, l, k, t, _ in examples()
                                if k == "rules") if f]
        self.assertEqual(failures, [], "\n\n".join(failures))

    def test_config_files_verify(self):
        failures = [f for f in (verify_config(t, p, l) for p, l, k, t, _ in examples()
                                if k == "config") if f]
        self.assertEqual(failures, [], "\n\n".join(failures))

    def test_shipped_example_config_verifies(self):
        """The commented keventd.yaml the package ships as an example
        (docs/examples/keventd.yaml) passes verify --config as it is, its
        secret files made."""
        with open(os.path.join(SRC, "docs", "examples", "keventd.yaml")) as f:
            text = f.read()
        for section in ("notify:", "alertmanager:", "mqtt:", "fs:", "kmsg:"):
            self.assertIn("\n" + section, text)
        self.assertIsNone(verify_config(text, "docs/examples/keventd.yaml", 1))

    def test_test_commands_match(self):
        checked = [(p, l, t, r) for p, l, k, t, r in examples() if k == "test"]
        failures = []
        for p, l, t, r in checked:
            f = test_command(t, r, p, l)
            if f:
                failures.append(f)
        self.assertEqual(failures, [], "\n\n".join(failures))

    def test_a_broken_example_fails(self):
        # the checks are the ones above, and they do fail
        broken = "rules:\n  - name: typo\n    match: {type: power}\n    timout: 5s\n" \
                 "    run: [/bin/true]"
        self.assertIsNotNone(verify_rules(broken, "self", 1))
        self.assertIsNone(verify_rules(broken.replace("timout", "timeout"), "self", 1))
        self.assertIsNotNone(verify_config("fs:\n  space_low: 10", "self", 1))
        rules = "rules:\n  - name: hot\n    match: {type: power, signal: high}\n" \
                "    run: [/bin/true]"
        self.assertIsNone(test_command("keventctl test power /o high", rules, "self", 1))
        self.assertIsNotNone(test_command("keventctl test power /o low", rules, "self", 1))
        self.assertIsNotNone(test_command("keventctl test power /o high\n"
                                          "keventctl test power /o low", rules, "self", 1))


if __name__ == "__main__":
    unittest.main(verbosity=2)

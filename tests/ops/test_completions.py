# SPDX-License-Identifier: GPL-2.0-or-later
"""The bash, zsh and fish completions of keventctl offer exactly the
commands keventctl has (its command table, keventctl.c, which --help
lists) and the sources keventd has (KEVENT_SOURCE_LIST, which keventd
--help lists): read from each file, and, where the shell is installed,
asked of the shell itself."""
import os
import re
import shutil
import subprocess
import unittest

SRC = os.environ.get("KEVENT_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BASH = os.path.join(SRC, "keventd", "keventctl.bash-completion")
ZSH = os.path.join(SRC, "keventd", "keventctl.zsh-completion")
FISH = os.path.join(SRC, "keventd", "keventctl.fish-completion")
BASH_LIB = "/usr/share/bash-completion/bash_completion"
# every command that reads offers --json (keventctl(8))
JSON_COMMANDS = ("test", "cat", "replay", "verify", "monitor", "events", "status", "explain",
                 "conditions")


def read(path):
    with open(path) as f:
        return f.read()


def table_commands():
    text = read(os.path.join(SRC, "keventd", "keventctl.c"))
    block = text[text.index("} commands[] = {"):]
    block = block[:block.index("};")]
    names = re.findall(r'\{"([a-z-]+)",\s*ctl_[a-z_]+\}', block)
    assert len(names) >= 14, names
    return names


def table_sources():
    text = read(os.path.join(SRC, "src", "event", "event.h"))
    block = text[text.index("#define KEVENT_SOURCE_LIST(X)"):]
    block = block[:block.index("\nenum kevent_source")]
    names = re.findall(r'X\(\s*[A-Z_]+\s*,\s*"([a-z]+)"\s*\)', block)
    assert len(names) >= 12, names
    return names


def exe(var):
    path = os.environ.get(var)
    if not path:
        raise unittest.SkipTest("%s is not set (run through ctest)" % var)
    return path


class Completions(unittest.TestCase):
    def setUp(self):
        self.commands = sorted(table_commands())
        self.sources = table_sources()

    def test_help_lists_the_table(self):
        out = subprocess.run([exe("KEVENTCTL"), "--help"], capture_output=True,
                             text=True).stdout
        block = out[out.index("Commands:"):out.index("Options:")]
        listed = sorted(set(re.findall(r"^  ([a-z]+)\b", block, re.M)))
        self.assertEqual(listed, self.commands)
        out = subprocess.run([exe("KEVENTD"), "--help"], capture_output=True, text=True)
        self.assertIn(", ".join(self.sources), re.sub(r"\s+", " ", out.stdout + out.stderr))

    def test_bash_lists(self):
        text = read(BASH)
        self.assertEqual(sorted(re.search(r'local commands="([^"]*)"', text).group(1).split()),
                         self.commands)
        self.assertEqual(re.search(r'local sources="([^"]*)"', text).group(1).split(),
                         self.sources)

    def test_zsh_lists(self):
        text = read(ZSH)
        block = re.search(r"local -a commands=\((.*?)\n\t\)", text, re.S).group(1)
        self.assertEqual(sorted(re.findall(r"^\s*'([a-z]+):", block, re.M)), self.commands)
        self.assertEqual(re.search(r"local -a sources=\(([^)]*)\)", text).group(1).split(),
                         self.sources)

    def test_fish_lists(self):
        text = read(FISH)
        self.assertEqual(sorted(re.search(r"^set -l commands (.*)$", text, re.M).group(1)
                                .split()), self.commands)
        self.assertEqual(re.search(r"^set -l sources (.*)$", text, re.M).group(1).split(),
                         self.sources)
        # every command has its own line with a description
        offered = re.findall(r"^complete -c keventctl -n \$none -a ([a-z]+) -d", text, re.M)
        self.assertEqual(sorted(offered), self.commands)

    def test_zsh_parses(self):
        zsh = shutil.which("zsh")
        if not zsh:
            self.skipTest("zsh is not installed: only its lists checked")
        r = subprocess.run([zsh, "-n", ZSH], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def fish_complete(self, line):
        fish = shutil.which("fish")
        if not fish:
            self.skipTest("fish is not installed: only its lists checked")
        r = subprocess.run([fish, "--no-config", "-c",
                            'source $argv[1]; complete -C "$argv[2]"', FISH, line],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [l.split("\t")[0] for l in r.stdout.splitlines()]

    def test_fish_offers(self):
        self.assertEqual(sorted(self.fish_complete("keventctl ")), self.commands)
        for cmd in ("test", "monitor", "events", "explain"):
            self.assertEqual(sorted(self.fish_complete("keventctl %s --source " % cmd)),
                             sorted(self.sources), cmd)
        for cmd in JSON_COMMANDS:
            self.assertIn("--json", self.fish_complete("keventctl %s --" % cmd), cmd)

    def bash_complete(self, *words):
        bash = shutil.which("bash")
        if not bash or not os.path.exists(BASH_LIB):
            self.skipTest("no bash with %s: only its lists checked" % BASH_LIB)
        script = r'''
. "$1"; . "$2"; shift 2
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
COMPREPLY=()
_keventctl keventctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
'''
        r = subprocess.run([bash, "-c", script, "bash", BASH_LIB, BASH] + list(words),
                           capture_output=True, text=True, timeout=30)
        return [l for l in r.stdout.splitlines() if l]

    def test_bash_offers(self):
        self.assertEqual(sorted(self.bash_complete("keventctl", "")), self.commands)
        for cmd in ("test", "monitor", "events", "explain"):
            self.assertEqual(sorted(self.bash_complete("keventctl", cmd, "--source", "")),
                             sorted(self.sources), cmd)
        for cmd in JSON_COMMANDS:
            self.assertIn("--json", self.bash_complete("keventctl", cmd, "--"), cmd)

    def test_zsh_offers_json(self):
        text = read(ZSH)
        for cmd in JSON_COMMANDS:
            block = text[text.index("\t\t%s)\n" % cmd):]
            block = block[:block.index(";;")]
            self.assertIn("--json[", block, cmd)


if __name__ == "__main__":
    unittest.main(verbosity=2)

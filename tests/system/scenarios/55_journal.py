# SPDX-License-Identifier: GPL-2.0-or-later
"""Each handler run is a journal entry of its own with structured fields,
sent through the journal's native protocol (keventd(8), Logging):
journalctl KEVENT_RULE=NAME finds a rule's runs, with the event's sequence
number, the exit status, the rule's file and line, at info for exit status
0 and at warning otherwise."""
import json
import re

from systest import Fail

KERNELS = ("6.1",)


def seqnum(out):
    m = re.search(r"^event seqnum (\d+)$", out, re.M)
    if not m:
        raise Fail("expected 'event seqnum N' from keventctl send --wait, got %r" % out)
    return m.group(1)


def entry(vm, rule, seq):
    """The run record of rule for seq, found the way an admin would."""
    vm.wait("journalctl -q -o json --no-pager KEVENT_RULE=%s KEVENT_SEQNUM=%s | grep -q ." %
            (rule, seq), 20, "the journal entry of %s's run for seqnum %s" % (rule, seq))
    out = vm.sh("journalctl -q -o json --no-pager KEVENT_RULE=%s KEVENT_SEQNUM=%s" % (rule, seq))
    found = [l for l in out.splitlines() if l.startswith("{")]
    if len(found) != 1:
        raise Fail("expected one journal entry for %s seqnum %s, got %d:\n%s"
                   % (rule, seq, len(found), out))
    return json.loads(found[0])


def expect(e, want, what):
    bad = {k: (v, e.get(k)) for k, v in want.items() if e.get(k) != v}
    if bad:
        raise Fail("expected in %s's journal entry (field: (want, got)): %r\nentry: %r"
                   % (what, bad, e))


def run(vm):
    ok = seqnum(vm.sh("keventctl send --wait general /org/kernel/test/journal ok"))
    r, out, err = vm.run("keventctl send --wait general /org/kernel/test/journal fail")
    if r != 1:
        raise Fail("expected send --wait to exit 1 for a failing handler, got %d: %r %r"
                   % (r, out, err))
    fail = seqnum(out)

    e = entry(vm, "systest-journal-ok", ok)
    expect(e, {"PRIORITY": "6", "KEVENT_EXIT": "0", "KEVENT_TIMED_OUT": "false",
               "SYSLOG_IDENTIFIER": "keventd", "_TRANSPORT": "journal",
               "_SYSTEMD_UNIT": "keventd.service"}, "systest-journal-ok")
    if not re.fullmatch(r"rule systest-journal-ok\[\d+\]: exited 0 after \d+ms \(seq %s\)" % ok,
                        e.get("MESSAGE", "")):
        raise Fail("expected the run's sentence as MESSAGE, got %r" % e.get("MESSAGE"))
    if not re.fullmatch(r"/etc/keventd/rules\.d/80-systest\.yaml:\d+", e.get("KEVENT_FILE", "")):
        raise Fail("expected KEVENT_FILE=/etc/keventd/rules.d/80-systest.yaml:LINE, got %r"
                   % e.get("KEVENT_FILE"))
    if not e.get("KEVENT_PID", "").isdigit() or not e.get("KEVENT_DURATION_MS", "").isdigit():
        raise Fail("expected KEVENT_PID and KEVENT_DURATION_MS as numbers, got %r" % e)

    e = entry(vm, "systest-journal-fail", fail)
    expect(e, {"PRIORITY": "4", "KEVENT_EXIT": "3", "_TRANSPORT": "journal"},
           "systest-journal-fail")
    # a priority match finds the failures, as an admin would look for them
    out = vm.sh("journalctl -q -o cat --no-pager -p warning KEVENT_RULE=systest-journal-fail")
    if "exited 3" not in out:
        raise Fail("expected journalctl -p warning to show the failed run, got %r" % out)
    vm.figure("journal", "runs of seqnum %s (exit 0, info) and %s (exit 3, warning) found by "
              "KEVENT_RULE= and KEVENT_SEQNUM=" % (ok, fail))

# SPDX-License-Identifier: GPL-2.0-or-later
"""Debounce and rate limits on a booted Debian (keventd.rules(5),
debounce, ratelimit): a storm of 50 events within a debounce's quiet
time is one run, of the 50th, with 49 counted debounced; a storm of 20
events against ratelimit: 3/1h runs 3 handlers and counts 17
suppressed; both kept apart per object."""
import json

from systest import Fail

KERNELS = ("6.1", "6.12")
RULES = """\
rules:
  - name: systest-debounce
    match: {object: "/org/kernel/test/debounce/*"}
    debounce: 2s
    run: [/usr/local/lib/systest/record.sh]
  - name: systest-ratelimit
    match: {object: "/org/kernel/test/ratelimit/*"}
    ratelimit: 3/1h
    run: [/usr/local/lib/systest/record.sh]
"""


def rule(vm, name):
    st = json.loads(vm.sh("keventctl status --json"))
    for r in st.get("rules", []):
        if r.get("name") == name:
            return r
    raise Fail("expected rule %s in keventctl status --json, got %r" % (name, st.get("rules")))


def run(vm):
    vm.sh("rm -rf /run/systest/events && "
          "cat > /etc/keventd/rules.d/68-systest-policy.yaml <<'EOF'\n%sEOF\nkeventctl reload"
          % RULES)
    try:
        batch = "".join("general\t/org/kernel/test/debounce/%s\td\tN: %d\n" % (o, i)
                        for i in range(50) for o in ("a", "b"))
        batch += "".join("general\t/org/kernel/test/ratelimit/%s\tr\tN: %d\n" % (o, i)
                         for i in range(20) for o in ("a", "b"))
        vm.sh("cat > /run/systest/policy.batch <<'EOF'\n%sEOF\n"
              "keventctl send --batch /run/systest/policy.batch" % batch)
        vm.wait("[ $(ls /run/systest/events | grep -c '^systest-debounce-') -ge 2 ]", 30,
                "the two debounced runs")
        vm.wait("[ $(ls /run/systest/events | grep -c '^systest-ratelimit-') -ge 6 ]", 30,
                "the rate-limited runs")
        deb = vm.events("systest-debounce-*").values()
        got = sorted((e["KEVENT_OBJECT"], e.get("KEVENT_N")) for e in deb)
        want = [("/org/kernel/test/debounce/a", "49"), ("/org/kernel/test/debounce/b", "49")]
        if got != want:
            raise Fail("expected one debounced run per object, of the 50th, got %r" % got)
        rl = vm.events("systest-ratelimit-*").values()
        got = sorted((e["KEVENT_OBJECT"], e.get("KEVENT_N")) for e in rl)
        want = sorted(("/org/kernel/test/ratelimit/%s" % o, str(i))
                      for o in ("a", "b") for i in range(3))
        if got != want:
            raise Fail("expected the first 3 runs per object, got %r" % got)
        d, r = rule(vm, "systest-debounce"), rule(vm, "systest-ratelimit")
        if d.get("debounced") != 98 or r.get("ratelimited") != 34:
            raise Fail("expected 98 debounced and 34 rate-limited in status, got %r and %r"
                       % (d, r))
    finally:
        vm.run("rm -f /etc/keventd/rules.d/68-systest-policy.yaml /run/systest/policy.batch; "
               "keventctl reload")

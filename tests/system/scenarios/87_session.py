# SPDX-License-Identifier: GPL-2.0-or-later
"""session: active (keventd.rules(5), Transient units): with a user logged
in on tty1 (the image's getty@tty1 logs desk in at boot), a session rule
runs as a transient unit in that user's name with the session's variables;
with nobody logged in it is skipped, logged and counted."""
import re

from systest import Fail

KERNELS = ("6.1",)
OBJ = "/org/kernel/test/session"


def send_wait(vm, want_rc):
    rc, out, err = vm.run("keventctl send --wait --timeout 60 general %s go" % OBJ, 90)
    if rc != want_rc:
        raise Fail("expected keventctl send --wait to exit %d, got %d: %r %r"
                   % (want_rc, rc, out, err))
    m = re.search(r"^event seqnum (\d+)$", out, re.M)
    if not m:
        raise Fail("expected 'event seqnum N' from send --wait, got %r" % out)
    return m.group(1), out


def active_session(vm):
    return vm.sh("loginctl show-seat seat0 -p ActiveSession --value").strip()


def run(vm):
    vm.wait("s=$(loginctl show-seat seat0 -p ActiveSession --value) && [ -n \"$s\" ] && "
            "[ \"$(loginctl show-session $s -p Name --value)\" = desk ] && "
            "[ \"$(loginctl show-session $s -p State --value)\" = active ]", 90,
            "desk's session on tty1 active on seat0")
    sid = active_session(vm)
    uid = vm.sh("id -u desk").strip()

    cur = vm.cursor()
    seq, out = send_wait(vm, 0)
    m = re.search(r"systest_session: running as (keventd-systest_session-[0-9a-f]{16}-\d+"
                  r"\.service)$", out, re.M)
    if not m:
        raise Fail("expected the rule to run as its unit, got %r" % out)
    unit = m.group(1)
    f = "/tmp/systest-session-%s" % seq
    vm.wait("test -e %s" % f, 30, "the session handler's file %s" % f)
    env = dict(l.split("=", 1) for l in vm.sh("cat %s" % f).splitlines() if "=" in l)
    want = {"id": "desk", "XDG_RUNTIME_DIR": "/run/user/%s" % uid,
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/%s/bus" % uid,
            "KEVENT_SESSION": sid, "KEVENT_SESSION_USER": "desk",
            "KEVENT_RULE": "systest_session", "KEVENT_SEQNUM": seq}
    bad = {k: (v, env.get(k)) for k, v in want.items() if env.get(k) != v}
    if bad:
        raise Fail("expected in the session handler's environment (want, got): %r\n%r"
                   % (bad, env))
    # a text console: logind has no display for it, so none is made up
    if "DISPLAY" in env or "WAYLAND_DISPLAY" in env:
        raise Fail("expected no DISPLAY or WAYLAND_DISPLAY for a tty session, got %r" % env)
    vm.wait_journal(cur, "rule systest_session[%s]: exited 0" % unit, 60,
                    "keventd's record of the session unit's end")

    # nobody at the screen: skipped, logged, counted
    before = vm.keventctl_status()["runs"]["session_skipped"]
    vm.sh("systemctl stop getty@tty1.service; loginctl terminate-session %s || true" % sid)
    vm.wait("[ -z \"$(loginctl show-seat seat0 -p ActiveSession --value)\" ]", 60,
            "no active session on seat0 once desk's is over")
    cur = vm.cursor()
    seq, out = send_wait(vm, 0)
    if "systest_session: skipped (no active session)" not in out:
        raise Fail("expected send --wait to say the run was skipped, got %r" % out)
    vm.wait_journal(cur, "rule systest_session: no active session on seat0", 20,
                    "keventd's line about the skipped run")
    after = vm.keventctl_status()["runs"]["session_skipped"]
    if after != before + 1:
        raise Fail("expected session_skipped %d, got %d" % (before + 1, after))
    if vm.ok("test -e /tmp/systest-session-%s" % seq):
        raise Fail("expected no handler run with nobody logged in")
    vm.figure("session", "ran as desk in session %s; skipped with nobody logged in" % sid)

# SPDX-License-Identifier: GPL-2.0-or-later
"""The desktop responds (keventd(8), USER INSTANCE): desk, logged in on
tty1, has the keventd --user that the package enables for every user,
started by desk's own systemd manager.  A desktop comes up after it: a
display (Xvfb) whose DISPLAY is imported into the manager, as a desktop
session does, and a notification server (dunst) on desk's session bus.
A disk hot-plugged with QMP reaches desk's own rule through the system
instance: it runs as desk with the session's DBUS_SESSION_BUS_ADDRESS and
the DISPLAY imported after keventd started, and its notify: desktop shows
on dunst.  The power key (the ACPI button, QMP system_powerdown, logind
held off by an inhibitor lock) reaches desk, who has the seat's active
session, and not a second user's instance (a uid of no account, started
by hand, no session), which still gets the button's acpi event."""
import os
import subprocess

from systest import Fail

# On both kernels: the desktop's path runs through the system instance's
# udev and input sources and logind's view of the seat.
KERNELS = ("6.1", "6.12")
SERIAL = "KEVENT-SYSTEST-DESK"
RULE = """rules:
  - name: systest-desk
    match: {source: udev, type: storage, signal: add, payload: {ID_SERIAL: %s}}
    shell: 'id -un >/tmp/systest-desk.tmp; env >>/tmp/systest-desk.tmp; mv /tmp/systest-desk.tmp /tmp/systest-desk'
    notify: desktop
    title: "Disk plugged in: ${KEVENT_DEVNAME}"
  - name: systest-desk-key
    match: {source: input, object: /org/kernel/input/key/power}
    shell: 'touch /tmp/systest-desk-key'
""" % SERIAL
OTHER_UID = 40123  # no account: nothing for the purge scenario to find
OTHER_UNIT = "systest-other"
OTHER_RULES = """rules:
  - name: other-key
    match: {source: input}
    shell: 'touch "$HOME/key"'
  - name: other-acpi
    match: {source: acpi}
    shell: 'touch "$HOME/acpi"'
"""
DUNSTRC = """[urgency_normal]
    timeout = 0
"""


def as_desk(uid, cmd):
    """cmd as desk in desk's session (its bus and run-time directory)."""
    return ("runuser -u desk -- env XDG_RUNTIME_DIR=/run/user/%s "
            "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/%s/bus %s" % (uid, uid, cmd))


def run(vm):
    vm.wait("s=$(loginctl show-seat seat0 -p ActiveSession --value) && [ -n \"$s\" ] && "
            "[ \"$(loginctl show-session $s -p Name --value)\" = desk ]", 90,
            "desk's session on tty1")
    uid = vm.sh("id -u desk").strip()
    ctl = as_desk(uid, "keventctl --user")
    vm.wait(as_desk(uid, "systemctl --user is-active -q keventd.service"), 90,
            "desk's keventd --user, started by desk's manager")
    vm.wait("keventctl status --json | grep -q '\"instances\":[1-9]'", 60,
            "desk's instance connected to the system instance's users socket")

    # the desktop, after keventd: the display imported into the manager
    # (as gnome-session does), the notification server on the session bus
    vm.sh("rm -f /tmp/systest-desk /tmp/.X11-unix/X5")
    vm.sh(as_desk(uid, "systemd-run --user --unit systest-xvfb /usr/bin/Xvfb :5 -nolisten tcp"))
    vm.wait("test -S /tmp/.X11-unix/X5", 60, "Xvfb's display :5")
    vm.sh(as_desk(uid, "systemctl --user set-environment DISPLAY=:5"))
    vm.sh("cat > /tmp/systest-dunstrc <<'EOF'\n%sEOF\nchmod 644 /tmp/systest-dunstrc" % DUNSTRC)
    vm.sh(as_desk(uid, "systemd-run --user --unit systest-dunst /usr/bin/dunst "
                       "-config /tmp/systest-dunstrc"))
    vm.wait(as_desk(uid, "busctl --user status org.freedesktop.Notifications >/dev/null"), 60,
            "dunst on desk's session bus")

    rules = "/home/desk/.config/keventd/rules.d"
    vm.sh("install -d -o desk -g desk %s /home/desk/.config /home/desk/.config/keventd && "
          "cat > %s/50-systest.yaml <<'EOF'\n%sEOF\nchown desk:desk %s/50-systest.yaml"
          % (rules, rules, RULE, rules))
    vm.wait(ctl + " status --json | grep -q '\"name\":\"systest-desk\"'", 30,
            "desk's keventd to load desk's rule")

    img = os.path.join(vm.workdir, "desk.img")
    subprocess.run(["truncate", "-s", "8M", img], check=True, timeout=30)
    vm.qmp.cmd("blockdev-add", driver="raw", **{"node-name": "desk"},
               file={"driver": "file", "filename": img})
    vm.qmp.cmd("device_add", driver="virtio-blk-pci", id="desk0", drive="desk", serial=SERIAL)
    try:
        vm.wait("test -e /tmp/systest-desk", 60, "desk's rule to run for the hot-plugged disk")
        lines = vm.sh("cat /tmp/systest-desk").splitlines()
        env = dict(l.split("=", 1) for l in lines[1:] if "=" in l)
        want = {"KEVENT_SOURCE": "udev", "KEVENT_SIGNAL": "add", "KEVENT_ID_SERIAL": SERIAL,
                "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/%s/bus" % uid,
                "XDG_RUNTIME_DIR": "/run/user/%s" % uid, "DISPLAY": ":5"}
        bad = {k: (v, env.get(k)) for k, v in want.items() if env.get(k) != v}
        if lines[0] != "desk" or bad:
            raise Fail("expected desk's handler as desk with the session (want, got): %r %r\n%r"
                       % (lines[0], bad, env))
        dev = env.get("KEVENT_DEVNAME", "")
        # the notification, on desk's notification server
        vm.wait(ctl + " status --json | grep -q '\"desktop\":{\"sent\":1,'", 30,
                "desk's keventd to count the desktop notification shown")
        shown = sum(int(vm.sh(as_desk(uid, "dunstctl count %s" % w)).strip())
                    for w in ("displayed", "waiting"))
        if shown != 1:
            raise Fail("expected one notification on dunst, got %d" % shown)
        vm.figure("desktop", "disk %s: desk's rule ran as desk with DISPLAY=:5 imported after "
                  "keventd started; one notification on dunst" % dev)
        keys(vm, uid)
    finally:
        vm.stop_user_instance(OTHER_UNIT)
        vm.run("systemctl stop systest-inhibit; rm -f /tmp/systest-desk-key")
        vm.qmp.cmd("device_del", id="desk0")
        vm.qmp.wait_event("DEVICE_DELETED", 60, {"device": "desk0"})
        vm.qmp.cmd("blockdev-del", **{"node-name": "desk"})
        vm.run("rm -f %s/50-systest.yaml /tmp/systest-desk; " % rules
               + as_desk(uid, "systemctl --user stop systest-dunst systest-xvfb") + "; "
               + as_desk(uid, "systemctl --user unset-environment DISPLAY"))


def keys(vm, uid):
    """The power key: desk's (the active session), not the other user's."""
    vm.sh("rm -f /tmp/systest-desk-key")
    before = vm.keventctl_status()["users"]
    home, other = vm.user_instance(OTHER_UNIT, OTHER_UID, OTHER_RULES)
    vm.wait("grep -qx 'Power Button' /sys/class/input/event*/device/name", 20,
            "the ACPI power button's input device")
    vm.sh("systemd-run --unit systest-inhibit systemd-inhibit --what=handle-power-key "
          "--who=systest --why='keventd handles it' sleep 300")
    vm.wait("systemd-inhibit --list --no-pager | grep -q handle-power-key", 20,
            "the inhibitor lock on the power key")
    vm.qmp.cmd("system_powerdown")
    vm.wait("test -e /tmp/systest-desk-key", 60, "desk's rule on the power key")
    vm.wait("test -e %s/acpi" % home, 60, "the other user's rule on the button's acpi event")
    vm.user_idle(other, "the other user's instance idle")
    if vm.ok("test -e %s/key" % home):
        raise Fail("expected the power key kept from a user without a session")
    after = vm.keventctl_status()["users"]
    if after["withheld"] <= before["withheld"]:
        raise Fail("expected the system instance to count the key withheld: %r -> %r"
                   % (before, after))
    vm.figure("desktop keys", "the power key reached desk (active session), not uid %d; "
              "withheld %d -> %d" % (OTHER_UID, before["withheld"], after["withheld"]))

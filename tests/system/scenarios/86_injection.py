# SPDX-License-Identifier: GPL-2.0-or-later
"""Event text never becomes a command (keventd.rules(5), Transient units;
docs/SECURITY.md): a transient `shell:` rule, a transient `run:` rule and a
`session: active` rule, fed a payload full of shell and systemd expansion
syntax by `keventctl send` and by MQTT, create no file, and each handler
receives the text byte for byte, with the same meaning of "${NAME}", "$$"
and "$X" as a direct run."""
import base64
import json
import re

from systest import Fail

KERNELS = ("6.1", "6.12")
OBJ = "/org/kernel/test/inj"
HOSTILE = "$(touch /root/pwned)`touch /root/pwned2`${PATH} $$ $HOME ${KEVENT_SEQNUM}"
PWNED = ("/root/pwned", "/root/pwned2", "/tmp/pwned", "/tmp/pwned2")
DIR = "/run/systest/inj"
RULES = r"""rules:
  - name: inj-shell
    match: {object: %(obj)s, signal: shell}
    transient: true
    shell: 'printf "%%s" "${KEVENT_PAYLOAD}" > %(dir)s/shell-$KEVENT_SEQNUM'
  - name: inj-run
    match: {object: %(obj)s, signal: run}
    transient: true
    run: [/bin/sh, -c, 'printf "%%s\0" "$@" > %(dir)s/run-$KEVENT_SEQNUM', args,
          "${KEVENT_PAYLOAD}", "$HOME", "$${KEVENT_SEQNUM}", "$$"]
  - name: inj-session
    match: {object: %(obj)s, signal: session}
    session: active
    shell: 'printf "%%s" "${KEVENT_PAYLOAD}" > /tmp/inj-session-$KEVENT_SEQNUM'
  - name: inj-mqtt-shell
    match: {source: mqtt, object: %(obj)s, signal: shell}
    transient: true
    shell: 'printf "%%s" "${KEVENT_PAYLOAD}" > %(dir)s/mqtt-shell-$KEVENT_SEQNUM'
  - name: inj-mqtt-run
    match: {source: mqtt, object: %(obj)s, signal: run}
    transient: true
    run: [/bin/sh, -c, 'printf "%%s\0" "$@" > %(dir)s/mqtt-run-$KEVENT_SEQNUM', args,
          "${KEVENT_PAYLOAD}", "$HOME", "$${KEVENT_SEQNUM}", "$$"]
""" % {"obj": OBJ, "dir": DIR}
CONFIG = """mqtt:
  url: mqtt://127.0.0.1:1883
  client_id: systest-inj
  publish: none
  subscribe:
    - systest/+/inj/#
"""


def b64(s):
    return base64.b64encode(s.encode()).decode()


def put(vm, path, text):
    vm.sh("mkdir -p %s && echo %s | base64 -d > %s.tmp && chmod 644 %s.tmp && mv %s.tmp %s"
          % (DIR, b64(text), path, path, path, path))


def read(vm, path, timeout, what):
    vm.wait("test -s %s" % path, timeout, what)
    return base64.b64decode(vm.sh("base64 -w0 %s" % path).strip()).decode()


def no_pwned(vm, how):
    for p in PWNED:
        if vm.ok("test -e %s" % p):
            raise Fail("%s: the payload ran as a command: %s exists" % (how, p))


def send(vm, signal):
    rc, out, err = vm.run("keventctl send --wait --timeout 60 general %s %s \"$(echo %s | "
                          "base64 -d)\"" % (OBJ, signal, b64(HOSTILE)), 90)
    if rc != 0:
        raise Fail("expected keventctl send --wait %s to exit 0, got %d: %r %r"
                   % (signal, rc, out, err))
    m = re.search(r"^event seqnum (\d+)$", out, re.M)
    u = re.search(r": running as (keventd-inj\S+\.service)", out)
    if not m or not u:
        raise Fail("expected the seqnum and the unit from send --wait, got %r" % out)
    return m.group(1), u.group(1)


def check_run_args(got, how):
    want = [HOSTILE, "$HOME", "${KEVENT_SEQNUM}", "$"]
    args = got.split("\0")[:-1]
    if args != want:
        raise Fail("%s: expected the handler's arguments %r, got %r" % (how, want, args))


def run(vm):
    vm.sh("rm -f %s" % " ".join(PWNED))
    put(vm, "/etc/keventd/rules.d/86-injection.yaml", RULES)
    vm.wait("keventctl status --json | grep -q '\"name\":\"inj-mqtt-run\"'", 20,
            "keventd to load the injection rules")

    # keventctl send: a transient shell rule, then a transient run rule
    seq, unit = send(vm, "shell")
    got = read(vm, "%s/shell-%s" % (DIR, seq), 60, "the transient shell handler's file")
    if got != HOSTILE:
        raise Fail("transient shell: expected the payload byte for byte %r, got %r"
                   % (HOSTILE, got))
    if not re.match(r"keventd-inj\\x2dshell-[0-9a-f]{16}-\d+\.service$", unit):
        raise Fail("expected a unit named by rule, instance and run, got %r" % unit)
    seq, unit = send(vm, "run")
    check_run_args(read(vm, "%s/run-%s" % (DIR, seq), 60, "the transient run handler's file"),
                   "transient run")
    no_pwned(vm, "keventctl send to transient rules")

    # session: active, as the user logged in on tty1
    vm.wait("s=$(loginctl show-seat seat0 -p ActiveSession --value) && [ -n \"$s\" ] && "
            "[ \"$(loginctl show-session $s -p State --value)\" = active ]", 90,
            "an active session on seat0")
    seq, unit = send(vm, "session")
    got = read(vm, "/tmp/inj-session-%s" % seq, 60, "the session handler's file")
    if got != HOSTILE:
        raise Fail("session: expected the payload byte for byte %r, got %r" % (HOSTILE, got))
    no_pwned(vm, "keventctl send to a session rule")

    # MQTT: another machine's event, through a real broker on this one
    vm.sh("systemctl start mosquitto", 60)
    vm.wait("systemctl is-active -q mosquitto", 30, "mosquitto")
    put(vm, "/etc/keventd/keventd.yaml", CONFIG)
    vm.sh("systemctl restart keventd", 90)
    vm.wait("keventctl status | grep -q 'mqtt: connected'", 30, "keventd connected to the broker")
    try:
        for i, signal in enumerate(("shell", "run")):
            seq = 7000 + i
            msg = json.dumps({"seqnum": seq, "timestamp": 1764770000123456789,
                              "source": "socket", "type": "general", "object": OBJ,
                              "signal": signal, "payload": HOSTILE, "host": "fleet-host"},
                             separators=(",", ":"))
            # retained: the broker hands it over whenever the subscription lands
            vm.sh("echo %s | base64 -d | mosquitto_pub -h 127.0.0.1 -q 1 -r -t systest/fleet-host/inj/%s -s"
                  % (b64(msg), signal))
            got = read(vm, "%s/mqtt-%s-%d" % (DIR, signal, seq), 60,
                       "the MQTT %s handler's file" % signal)
            if signal == "shell" and got != HOSTILE:
                raise Fail("MQTT shell: expected the payload byte for byte, got %r" % got)
            if signal == "run":
                check_run_args(got, "MQTT run")
        no_pwned(vm, "MQTT to transient rules")
    finally:
        vm.sh("for t in shell run; do mosquitto_pub -h 127.0.0.1 -r -n -t systest/fleet-host/inj/$t; done; "
              "rm -f /etc/keventd/keventd.yaml /etc/keventd/rules.d/86-injection.yaml && "
              "systemctl restart keventd && systemctl stop mosquitto", 90)
    vm.figure("injection", "transient shell/run, session and MQTT: payload passed byte for "
              "byte, nothing executed")

# SPDX-License-Identifier: GPL-2.0-or-later
"""With --dbus in a drop-in (docs/packaging.md, "D-Bus"), busctl monitor
sees each event as the org.kernel.Event signal, with its fields, sent by
keventd."""
import json

from systest import Fail

KERNELS = ("6.1",)
DROPIN = "/etc/systemd/system/keventd.service.d/dbus.conf"
MON = "/run/systest/dbus.json"


def signals(vm, obj):
    out = vm.sh("cat %s" % MON)
    res = []
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        data = m.get("payload", {}).get("data", [])
        if m.get("member") == "Event" and len(data) == 5 and data[1] == obj:
            res.append(m)
    return res


def run(vm):
    vm.sh("mkdir -p %s && printf '[Service]\\nExecStart=\\nExecStart=/usr/sbin/keventd --dbus\\n' > %s"
          % (DROPIN.rsplit("/", 1)[0], DROPIN))
    vm.sh("systemctl daemon-reload && systemctl restart keventd", 90, "restart with --dbus")
    p = vm.show("keventd.service", "ActiveState", "SubState", "MainPID", "DropInPaths")
    if (p["ActiveState"], p["SubState"]) != ("active", "running") or DROPIN not in p["DropInPaths"]:
        raise Fail("expected keventd active (running) with the drop-in %s, got %r" % (DROPIN, p))
    cmd = vm.sh("tr '\\0' ' ' < /proc/%s/cmdline" % p["MainPID"])
    if "--dbus" not in cmd.split():
        raise Fail("expected keventd --dbus, it runs %r" % cmd)

    vm.sh("rm -f %s; mkdir -p /run/systest; setsid busctl --system --json=short monitor "
          "--match \"type='signal',interface='org.kernel.Event'\" > %s 2>&1 < /dev/null & "
          "echo $! > /run/systest/dbus.pid" % (MON, MON))
    try:
        # busctl subscribes in its own time: probe until a probe's signal shows
        vm.wait("keventctl send general /org/kernel/test/dbusprobe probe && "
                "grep -q dbusprobe %s" % MON, 30, "busctl monitor to see a probe event's signal")
        vm.sh("keventctl send general /org/kernel/test/dbus ping 'Key: value'")
        vm.wait("grep -q '\"/org/kernel/test/dbus\"' %s" % MON, 20,
                "the signal of the event general /org/kernel/test/dbus ping")
        sig = signals(vm, "/org/kernel/test/dbus")
        if len(sig) != 1:
            raise Fail("expected one signal for the event, got %r" % sig)
        m = sig[0]
        t, obj, s, payload, seq = m["payload"]["data"]
        if (m.get("interface"), m.get("path"), m["payload"].get("type")) != \
                ("org.kernel.Event", "/org/kernel/test/dbus", "sssst") or \
                (t, obj, s) != ("general", "/org/kernel/test/dbus", "ping") or \
                "Key: value" not in payload or not isinstance(seq, int):
            raise Fail("expected Event(general, /org/kernel/test/dbus, ping, 'Key: value', seqnum)"
                       " from /org/kernel/test/dbus, got %r" % m)
        # from keventd's own connection
        pid = vm.sh("busctl --system status %s | sed -n 's/^PID=//p'" % m["sender"]).strip()
        if pid != p["MainPID"]:
            raise Fail("expected the signal from keventd (pid %s), it came from %s (pid %s)"
                       % (p["MainPID"], m["sender"], pid))
    finally:
        vm.run("kill $(cat /run/systest/dbus.pid)")

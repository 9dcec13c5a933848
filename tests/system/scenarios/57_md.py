# SPDX-License-Identifier: GPL-2.0-or-later
"""A RAID1 array on two hot-plugged virtio disks, driven with mdadm: a
failed member is failed-device and degraded; a member added again is a
recovery with every 10 % step, its end, the member active and the array
whole; a check is check-start, its steps and check-done with its
mismatch count; keventd restarted while the array is degraded says so
once with Initial: yes.  The object is the array's udev object.  The
shipped condition md-degraded (30-conditions.yaml) holds from the failure,
clears within a second of optimal, and holds across keventd's restart with
the same since and count (the start-up check confirms it, no new set).

It is told as an admin would have it told (keventd.yaml(5), NOTIFICATIONS
and ALERTMANAGER): a mail to a real SMTP server in the guest (aiosmtpd)
on its set and its clear, and an alert in the guest's own Alertmanager
(Debian's prometheus-alertmanager service) firing from the set, gone at
the clear, and firing again, not resolved, across keventd's restart."""
import json
import time

from systest import Fail, utc_seconds

KERNELS = ("6.1", "6.12")
SERIALS = ("KEVENT-MD-1", "KEVENT-MD-2")
DISK_MB = 48
# KiB/s: a sync of the 48 MB member takes some 25 s, each 10 % step
# seconds apart, whatever the host's speed
SPEED = 2000
STEPS = ["%d" % p for p in range(10, 100, 10)]

def md_events(vm):
    """The md source's events recorded so far, in keventd's order."""
    ev = vm.events("systest-md-md-*")
    return [e for _, e in sorted(ev.items(), key=lambda kv: (int(kv[1]["KEVENT_SEQNUM"]),
                                                             kv[0]))]


def wait_signal(vm, signal, timeout, what, **props):
    """Waits for an md event with signal (and the KEVENT_ props given)."""
    deadline = time.monotonic() + timeout
    while True:
        evs = md_events(vm)
        for e in evs:
            if e.get("KEVENT_SIGNAL") == signal and \
                    all(e.get("KEVENT_" + k) == v for k, v in props.items()):
                return evs
        if time.monotonic() > deadline:
            raise Fail("expected %s (md %s %r) within %d s; md events: %r"
                       % (what, signal, props, timeout,
                          [(e.get("KEVENT_SIGNAL"), e.get("KEVENT_PERCENT"),
                            e.get("KEVENT_MEMBER")) for e in evs]))
        time.sleep(0.5)


def md_row(vm, obj, all_rows=False):
    """keventctl conditions --json's md-degraded row of obj, or None."""
    out = vm.sh("keventctl conditions --json%s" % (" --all" if all_rows else ""))
    rows = [r for r in map(json.loads, out.splitlines())
            if r.get("condition") == "md-degraded" and r.get("object") == obj]
    return rows[-1] if rows else None


def signals(evs):
    return [e["KEVENT_SIGNAL"] + (":" + e["KEVENT_PERCENT"] if "KEVENT_PERCENT" in e else "")
            for e in evs]


def expect_sequence(evs, want, what):
    got = signals(evs)
    if got != want:
        raise Fail("expected the md events of %s to be\n  %s\ngot\n  %s" % (what, want, got))


# keventd.yaml: a mail target on the guest's SMTP server (plain SMTP, to
# the machine itself only) and the guest's Alertmanager
CONFIG = """notify:
  ops-mail:
    smtp: smtp://127.0.0.1:8025
    from: keventd@systest
    to: [ops@systest]
alertmanager:
  url: http://127.0.0.1:9093
  resend: 5s
"""
MAIL_RULE = """rules:
  - name: systest-mail-md
    match:
      source: condition
      signal: [set, clear]
      payload: {Condition: md-degraded}
    notify: [ops-mail]
"""
MAILDIR = "/run/systest/maildir"
# the alerts Alertmanager holds (its API leaves out the resolved ones)
ALERTS = ("/usr/bin/python3 -c 'import urllib.request,sys; "
          "sys.stdout.write(urllib.request.urlopen(\"http://127.0.0.1:9093/api/v2/alerts\")"
          ".read().decode())'")


def md_alerts(vm, obj):
    """Alertmanager's md-degraded alerts of obj (the label object is the
    row's key: md-degraded's is the array's UUID)."""
    return [a for a in json.loads(vm.sh(ALERTS))
            if a["labels"].get("alertname") == "md-degraded"
            and a["labels"].get("object") == obj]


def wait_alert(vm, obj, firing, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        got = md_alerts(vm, obj)
        if bool(got) == firing:
            return got
        if time.monotonic() > deadline:
            raise Fail("expected %s within %d s; Alertmanager has %r" % (what, timeout, got))
        time.sleep(0.2)  # polling Alertmanager's API, not a synchronisation


# the subjects of the mails in the server's Maildir, unfolded and decoded
SUBJECTS = ("/usr/bin/python3 -c 'import mailbox, sys, email.header as h\n"
            "for m in mailbox.Maildir(sys.argv[1], create=False):\n"
            "    print(\" \".join(str(h.make_header(h.decode_header(m[\"Subject\"]))).split()))'")


def mails(vm):
    """The subjects of the mails the SMTP server took."""
    return vm.sh("test -d %s/new && %s %s || true" % (MAILDIR, SUBJECTS, MAILDIR)).splitlines()


def wait_mail(vm, word, n, timeout):
    deadline = time.monotonic() + timeout
    while True:
        got = [m for m in mails(vm) if "md-degraded" in m and word in m]
        if len(got) >= n:
            return got
        if time.monotonic() > deadline:
            raise Fail("expected %d mail(s) of md-degraded %s within %d s; the server took %r"
                       % (n, word, timeout, mails(vm)))
        time.sleep(0.2)  # polling the server's mail directory, not a synchronisation


def tell_setup(vm):
    """The SMTP server, Alertmanager, keventd.yaml and the mail rule."""
    vm.sh("mkdir -p /run/systest && rm -rf %s && systemctl reset-failed systest-smtp "
          "2>/dev/null; systemd-run --unit=systest-smtp /usr/bin/python3 -m aiosmtpd -n "
          "-l 127.0.0.1:8025 -c aiosmtpd.handlers.Mailbox %s" % (MAILDIR, MAILDIR))
    vm.wait("/usr/bin/python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", "
            "8025))'", 60, "the SMTP server listening")
    # Debian's Alertmanager, run as its unit would with a receiver that
    # sends nothing on (the package's own unit mails root), no cluster
    vm.sh("systemctl stop prometheus-alertmanager; mkdir -p /run/systest/am && "
          "printf 'route:\\n  receiver: none\\nreceivers:\\n  - name: none\\n' "
          ">/run/systest/am/am.yml && systemctl reset-failed systest-am 2>/dev/null; "
          "systemd-run --unit=systest-am /usr/bin/prometheus-alertmanager "
          "--config.file=/run/systest/am/am.yml --storage.path=/run/systest/am "
          "--web.listen-address=127.0.0.1:9093 --cluster.listen-address=")
    rc, out, err = vm.run(ALERTS + " >/dev/null", 5)
    deadline = time.monotonic() + 120
    while rc != 0:
        if time.monotonic() > deadline:
            raise Fail("expected Alertmanager answering within 120 s: %s; %s" % (
                err, vm.run("systemctl status systest-am; journalctl -u systest-am | tail")[1]))
        time.sleep(0.5)  # polling its API, not a synchronisation
        rc, out, err = vm.run(ALERTS + " >/dev/null", 5)
    vm.sh("cat > /etc/keventd/keventd.yaml <<'EOF'\n%sEOF\n"
          "cat > /etc/keventd/rules.d/57-systest-mail.yaml <<'EOF'\n%sEOF\n"
          "keventctl verify --config /etc/keventd/keventd.yaml && systemctl restart keventd"
          % (CONFIG, MAIL_RULE))


def run(vm):
    try:
        tell_setup(vm)
        run_md(vm)
    finally:
        vm.run("rm -f /etc/keventd/keventd.yaml /etc/keventd/rules.d/57-systest-mail.yaml; "
               "systemctl stop systest-smtp systest-am; systemctl restart keventd")


def run_md(vm):
    for i, serial in enumerate(SERIALS):
        vm.attach_disk("mddisk%d" % i, DISK_MB, serial)
    for serial in SERIALS:
        vm.wait("test -b /dev/disk/by-id/virtio-%s" % serial, 60, "the disk %s" % serial)
    b, c = (vm.disk_name(s) for s in SERIALS)

    # the rule systest-md (80-systest.yaml) records every md event; the md
    # driver is loaded here, after keventd started: the source begins then
    vm.sh("rm -rf /run/systest/events && modprobe raid1 && "
          "echo %d > /proc/sys/dev/raid/speed_limit_max && "
          "echo %d > /proc/sys/dev/raid/speed_limit_min" % (SPEED, SPEED // 2))
    # two blank disks are the same: no first resync needed
    vm.sh("mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --bitmap=none "
          "--assume-clean /dev/%s /dev/%s </dev/null" % (b, c), timeout=60)
    vm.wait("grep -q '^md0 : active raid1' /proc/mdstat", 30, "md0 in /proc/mdstat")
    udev_obj = "/org/kernel" + vm.sh("udevadm info -q path /dev/md0").strip()
    if udev_obj != "/org/kernel/devices/virtual/block/md0":
        raise Fail("expected md0 at /devices/virtual/block/md0, udev says %r" % udev_obj)

    # a member fails
    cur = vm.cursor()
    t0 = time.monotonic()
    vm.sh("mdadm /dev/md0 --fail /dev/%s" % c)
    evs = wait_signal(vm, "degraded", 30, "degraded after mdadm --fail")
    evs = wait_signal(vm, "failed-device", 5, "failed-device after mdadm --fail", MEMBER=c)
    vm.figure("mdadm --fail -> degraded recorded (s, %s)" % vm.kver, round(time.monotonic() - t0, 2))
    expect_sequence(evs, ["failed-device", "degraded"], "mdadm --fail")
    for e in evs:
        if e["KEVENT_OBJECT"] != udev_obj or e["KEVENT_TYPE"] != "storage":
            raise Fail("expected storage %s, got %s %s"
                       % (udev_obj, e["KEVENT_TYPE"], e["KEVENT_OBJECT"]))
        for k, v in (("LEVEL", "raid1"), ("RAID_DISKS", "2"), ("DEGRADED", "1")):
            if e.get("KEVENT_" + k) != v:
                raise Fail("expected %s: %s in %s, got %r" % (k, v, e["KEVENT_SIGNAL"], e))
        if not e.get("KEVENT_ARRAY_STATE"):
            raise Fail("expected Array-State: in %r" % e)
    # the shipped rules (56-md.yaml) log it
    e = vm.wait_journal(cur, "md0 (raid1): member %s failed" % c, 30,
                        "the shipped rule md-failed-device's log line",
                        "SYSLOG_IDENTIFIER=keventd")
    if e.get("PRIORITY") != "3":
        raise Fail("expected the failed member logged at daemon.err, got priority %s"
                   % e.get("PRIORITY"))
    vm.wait_journal(cur, "md0 (raid1) is degraded: 1 of 2 members missing", 30,
                    "the shipped rule md-degraded's log line", "SYSLOG_IDENTIFIER=keventd")
    # the condition holds: critical, so the plugin check says 2
    row = md_row(vm, udev_obj)
    if not row or not row["holds"] or row["severity"] != "critical":
        raise Fail("expected md-degraded to hold for %s, critical, got %r" % (udev_obj, row))
    rc, out, _ = vm.run("keventctl conditions --check md-degraded")
    if rc != 2:
        raise Fail("expected conditions --check md-degraded to exit 2, got %d: %s" % (rc, out))
    # told: a mail, and an alert in Alertmanager from the condition's since
    wait_mail(vm, "set", 1, 30)
    vm.figure("mdadm --fail -> mail taken by the SMTP server (s, %s)" % vm.kver,
              round(time.monotonic() - t0, 2))
    # a row per array by its UUID (md/uuid), the alert's object label
    uuid = vm.sh("cat /sys/block/md0/md/uuid").strip()
    if row["key"] != uuid:
        raise Fail("expected md-degraded's row keyed by md0's UUID %s, got %r" % (uuid, row))
    alert = wait_alert(vm, uuid, True, 30, "md-degraded firing in Alertmanager")[0]
    vm.figure("mdadm --fail -> alert in Alertmanager (s, %s)" % vm.kver,
              round(time.monotonic() - t0, 2))
    if alert["labels"].get("severity") != "critical" or \
            utc_seconds(alert["startsAt"][:19] + "Z") != utc_seconds(row["since"]):
        raise Fail("expected the alert critical, starting at the condition's since %s, got %r"
                   % (row["since"], alert))

    # taken out and added again: a recovery, each step, and the array whole
    vm.sh("mdadm /dev/md0 --remove /dev/%s && mdadm --zero-superblock /dev/%s" % (c, c))
    n0 = len(md_events(vm))
    t0 = time.monotonic()
    vm.sh("mdadm /dev/md0 --add /dev/%s" % c)
    evs = wait_signal(vm, "optimal", 180, "optimal after the recovery")
    vm.figure("recovery of %d MB at %d KiB/s (s, %s)" % (DISK_MB, SPEED, vm.kver),
              round(time.monotonic() - t0, 1))
    rec = evs[n0:]
    expect_sequence(rec, ["recovery-start"] + ["progress:" + p for p in STEPS]
                    + ["recovery-done", "spare-active", "optimal"], "mdadm --add")
    if any(e.get("KEVENT_ACTION") != "recover" for e in rec[:11]):
        raise Fail("expected Action: recover in the recovery's events: %r" % rec[:11])
    if rec[10].get("KEVENT_RESULT") != "done" or rec[11].get("KEVENT_MEMBER") != c:
        raise Fail("expected recovery-done Result: done and spare-active Member: %s: %r"
                   % (c, rec[10:12]))
    # whole again: the condition cleared by the optimal event, at once
    row = md_row(vm, udev_obj, all_rows=True)
    if not row or row["holds"] or not row.get("cleared"):
        raise Fail("expected md-degraded cleared after optimal, got %r" % row)
    # to the second: the table's times are whole seconds
    lag = utc_seconds(row["cleared"]) - int(rec[-1]["KEVENT_TIMESTAMP"]) // 1000000000
    if not 0 <= lag <= 1:
        raise Fail("expected md-degraded cleared within a second of optimal, got %r after the "
                   "optimal event of %s" % (row, rec[-1]["KEVENT_TIMESTAMP"]))
    vm.figure("optimal -> md-degraded cleared (whole s, %s)" % vm.kver, lag)
    wait_mail(vm, "clear", 1, 30)
    wait_alert(vm, uuid, False, 30, "the md-degraded alert resolved")
    vm.figure("progress events of the recovery (%s)" % vm.kver,
              "%d of 9" % sum(1 for e in rec if e["KEVENT_SIGNAL"] == "progress"))

    # a check
    n0 = len(md_events(vm))
    vm.sh("echo check > /sys/block/md0/md/sync_action")
    evs = wait_signal(vm, "check-done", 180, "check-done after echo check")
    chk = evs[n0:]
    expect_sequence(chk, ["check-start"] + ["progress:" + p for p in STEPS] + ["check-done"],
                    "a check")
    done = chk[-1]
    want = vm.sh("cat /sys/block/md0/md/mismatch_cnt").strip()
    if done.get("KEVENT_MISMATCH_COUNT") != want or done.get("KEVENT_RESULT") != "done":
        raise Fail("expected check-done with Mismatch-Count: %s and Result: done, got %r"
                   % (want, done))

    # degraded when keventd starts: said once, Initial: yes
    vm.sh("mdadm /dev/md0 --fail /dev/%s" % c)
    wait_signal(vm, "degraded", 30, "degraded after the second mdadm --fail")
    before = md_row(vm, udev_obj)
    if not before or not before["holds"]:
        raise Fail("expected md-degraded to hold again, got %r" % before)
    vm.sh("systemctl stop keventd && rm -rf /run/systest/events && systemctl start keventd")
    evs = wait_signal(vm, "degraded", 30, "degraded at keventd's start", INITIAL="yes")
    if signals(evs) != ["degraded"]:
        raise Fail("expected only degraded (Initial: yes) at keventd's start, got %s"
                   % signals(evs))
    after = md_row(vm, udev_obj)
    if not after or not after["holds"] or (after["since_ns"], after["count"]) != \
            (before["since_ns"], before["count"]):
        raise Fail("expected md-degraded to hold across the restart with the same since and "
                   "count, got %r before and %r after" % (before, after))
    # the alert fired again with the second failure and the restart never
    # resolved it: it is there, from the same since; one more set mail
    alert = wait_alert(vm, uuid, True, 30, "md-degraded firing after the restart")[0]
    if utc_seconds(alert["startsAt"][:19] + "Z") != utc_seconds(after["since"]):
        raise Fail("expected the alert to start at %s after the restart, got %r"
                   % (after["since"], alert))
    wait_mail(vm, "set", 2, 30)

    vm.sh("mdadm --stop /dev/md0")
    for i in range(len(SERIALS)):
        vm.detach_disk("mddisk%d" % i)

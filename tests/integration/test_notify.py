#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Notifications (keventd.yaml(5) NOTIFICATIONS, keventd.rules(5) notify:)
against real servers on 127.0.0.1: a mail through an SMTP server that
requires STARTTLS and AUTH, as it arrived; a web hook (its HMAC checked),
ntfy's and Gotify's publications through an HTTPS receiver, as they
arrived; an outage with keventd killed twice meanwhile, after which every
notification has arrived once or flagged a retry; max_age; a damaged file
of the queue; keventctl notify test; secret files others may read."""
import email
import email.header
import email.policy
import hashlib
import hmac
import json
import os
import subprocess
import time
import unittest

import kdtest
import notifyservers
from kdtest import DaemonTest, KEVENTCTL, TIMEOUT

PASSWORD = "s3cret pass"
SECRET = "hook-secret\n"
TOKEN = "tok-123"
CONDITION = "Condition: md-degraded\nSeverity: critical\nSince: 2024-01-01T00:00:00Z"


@unittest.skipUnless(notifyservers.aiosmtpd_available(),
                     "no Debian python3-aiosmtpd (scripts/deps.sh test installs it)")
class Notify(DaemonTest):
    def openssl(self, *args):
        r = subprocess.run(["openssl"] + list(args), capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)

    def setUp(self):
        super().setUp()
        # a CA of the test's own, and the servers' certificate for 127.0.0.1
        self.ca = self.s.path("ca.key"), self.s.path("ca.pem")
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                     "-nodes", "-keyout", self.ca[0], "-out", self.ca[1], "-days", "2",
                     "-subj", "/CN=test-ca")
        self.cert = self.s.path("srv.key"), self.s.path("srv.pem")
        csr, ext = self.s.path("srv.csr"), self.s.path("srv.ext")
        self.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                     "-nodes", "-keyout", self.cert[0], "-out", csr, "-subj", "/CN=127.0.0.1")
        with open(ext, "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        self.openssl("x509", "-req", "-in", csr, "-CA", self.ca[1], "-CAkey", self.ca[0],
                     "-CAcreateserial", "-out", self.cert[1], "-days", "2", "-extfile", ext)
        self.servers = []
        self.lib = self.s.path("lib")
        self.secret("password", PASSWORD + "\n")
        self.secret("hook.secret", SECRET)
        self.secret("token", TOKEN + "\n")

    def tearDown(self):
        for srv in self.servers:
            srv.stop()
        super().tearDown()

    def secret(self, name, text, mode=0o600):
        path = self.s.path(name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def config(self, text):
        path = self.s.path("keventd.yaml")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def server(self, srv):
        self.servers.append(srv)
        return srv

    def keventd(self, conf, env=None):
        return self.start("--config", conf, "--lib-dir", self.lib,
                          env=dict({"KEVENTD_NOTIFY_BACKOFF_MAX_MS": "1000"}, **(env or {})))

    def target(self, st, name):
        return st["notify_targets"][name]

    def wait_received(self, srv, n):
        deadline = time.monotonic() + TIMEOUT
        while len(srv.received()) < n:
            if not kdtest.deadline_left(deadline):
                raise AssertionError("%d of %d received" % (len(srv.received()), n))
            time.sleep(0.02)  # polling the server's file, not a synchronisation
        return srv.received()

    def test_mail(self):
        smtp = self.server(notifyservers.smtp_server(self.s, self.cert, "host17", PASSWORD))
        smtp.start()
        conf = self.config("""
notify:
  ops-mail:
    smtp: smtp://127.0.0.1:%d
    from: keventd@host17.example.net
    to: [ops@example.net, oncall@example.net]
    username: host17
    password_file: %s
    ca_file: %s
""" % (smtp.port, self.s.path("password"), self.ca[1]))
        self.s.write_rule("50-mail.yaml", """
rules:
  - name: mail-ops
    match: {signal: [set, clear, remind]}
    notify: [ops-mail]
""")
        r = subprocess.run([KEVENTCTL, "verify", "--config", conf], capture_output=True,
                           text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        d = self.keventd(conf)
        d.send("storage", "/devices/virtual/block/md0", "set", CONDITION)
        got = self.wait_received(smtp, 1)
        st = d.wait_status(lambda st: self.target(st, "ops-mail")["sent"] == 1, "one sent")
        self.assertEqual(self.target(st, "ops-mail")["queued"], 0)
        m = got[0]
        self.assertTrue(m["tls"], "the mail came over STARTTLS")
        self.assertEqual(m["login"], "host17")
        self.assertEqual(m["from"], "keventd@host17.example.net")
        self.assertEqual(m["to"], ["ops@example.net", "oncall@example.net"])
        msg = email.message_from_string(m["data"], policy=email.policy.default)
        host = os.uname().nodename
        self.assertEqual(str(msg["Subject"]),
                         "[critical] %s: md-degraded set on /devices/virtual/block/md0" % host)
        self.assertEqual(msg["From"], "keventd@host17.example.net")
        self.assertIn("ops@example.net", msg["To"])
        self.assertIn("oncall@example.net", msg["To"])
        self.assertEqual(msg["X-Keventd-Severity"], "critical")
        self.assertEqual(msg["Auto-Submitted"], "auto-generated")
        self.assertRegex(msg["Message-ID"], r"^<[0-9a-f]{16}\.keventd@")
        self.assertIsNone(msg["X-Keventd-Retry"])
        body = msg.get_content().replace("\r\n", "\n")
        self.assertIn("Condition: md-degraded\n", body)
        self.assertIn("Object: /devices/virtual/block/md0\n", body)
        self.assertIn("Rule: mail-ops", body)
        # the test message, and the server's answer
        r = subprocess.run([KEVENTCTL, "notify", "test", "ops-mail", "--config", conf],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^ops-mail: sent: 250 2\.0\.0 Ok: queued as T\d+\n$")
        got = self.wait_received(smtp, 2)
        self.assertIn("keventctl notify test ops-mail", got[1]["data"])
        d.stop_ok(self)
        # no server: the test says so, exit 1
        smtp.stop()
        r = subprocess.run([KEVENTCTL, "notify", "test", "ops-mail", "--config", conf],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, r"^ops-mail: failed: .*Couldn't connect to server")

    def test_readable_secret_refused(self):
        self.secret("password", PASSWORD + "\n", 0o644)
        conf = self.config("""
notify:
  ops-mail:
    smtp: smtps://127.0.0.1:1
    from: k@example.net
    to: ops@example.net
    username: u
    password_file: %s
  plain:
    smtp: smtp://mail.example.net
    from: k@example.net
    to: ops@example.net
""" % self.s.path("password"))
        r = subprocess.run([KEVENTCTL, "verify", "--config", conf], capture_output=True,
                           text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 1)
        self.assertIn("%s:8:20: error: notify: ops-mail: password_file %s may be read by group "
                      "or others (chmod 600 it): keventd refuses it"
                      % (conf, self.s.path("password")), r.stdout)
        d = self.keventd(conf)
        st = d.status()
        self.assertIn("may be read by group or others", self.target(st, "ops-mail")["off"])
        self.assertIsNone(self.target(st, "plain")["off"])
        d.stop_ok(self)

    def test_https(self):
        rcv = self.server(notifyservers.https_server(self.s, self.cert)).start()
        base = "https://127.0.0.1:%d" % rcv.port
        conf = self.config("""
notify:
  hook:
    webhook: {base}/keventd
    secret_file: {secret}
    ca_file: {ca}
  phone:
    ntfy: {base}/ops-alerts
    token_file: {token}
    ca_file: {ca}
  gotify-ops:
    gotify: {base}/
    token_file: {token}
    ca_file: {ca}
""".format(base=base, secret=self.s.path("hook.secret"), token=self.s.path("token"),
           ca=self.ca[1]))
        self.s.write_rule("50-push.yaml", """
rules:
  - name: push
    match: {signal: set}
    notify: [hook, phone, gotify-ops]
    title: "${KEVENT_CONDITION} on ${KEVENT_OBJECT} ✓"
    message: "since ${KEVENT_SINCE}"
""")
        d = self.keventd(self.config(open(conf).read()))
        d.send("storage", "/dev/md0", "set", CONDITION)
        got = {g["path"]: g for g in self.wait_received(rcv, 3)}
        self.assertEqual(sorted(got), ["/keventd", "/message", "/ops-alerts"])
        # the web hook: the event's JSON, signed
        h = got["/keventd"]
        mac = hmac.new(SECRET.rstrip("\n").encode(), h["body"].encode(), hashlib.sha256)
        self.assertEqual(h["headers"]["X-Keventd-Signature"], "sha256=" + mac.hexdigest())
        self.assertEqual(h["headers"]["Content-Type"], "application/json")
        body = json.loads(h["body"])
        self.assertEqual((body["source"], body["type"], body["object"], body["signal"]),
                         ("socket", "storage", "/dev/md0", "set"))
        self.assertEqual(body["properties"]["Condition"], "md-degraded")
        n = body["notification"]
        self.assertEqual((n["target"], n["rule"], n["severity"], n["retry"]),
                         ("hook", "push", "critical", False))
        self.assertEqual(n["title"], "md-degraded on /dev/md0 ✓")
        self.assertEqual(n["message"], "since 2024-01-01T00:00:00Z")
        self.assertEqual(h["headers"]["X-Keventd-Id"], n["id"])
        # ntfy: its publish API's headers, the message as the body
        p = got["/ops-alerts"]
        self.assertEqual(p["headers"]["Authorization"], "Bearer " + TOKEN)
        self.assertEqual(p["headers"]["Priority"], "5")
        self.assertEqual(p["headers"]["Tags"], "rotating_light,keventd,critical")
        self.assertEqual(str(email.header.make_header(
            email.header.decode_header(p["headers"]["Title"]))), "md-degraded on /dev/md0 ✓")
        self.assertEqual(p["body"], "since 2024-01-01T00:00:00Z")
        # Gotify: POST /message with the application's token
        g = got["/message"]
        self.assertEqual(g["headers"]["X-Gotify-Key"], TOKEN)
        gb = json.loads(g["body"])
        self.assertEqual((gb["title"], gb["message"], gb["priority"]),
                         ("md-degraded on /dev/md0 ✓", "since 2024-01-01T00:00:00Z", 10))
        st = d.wait_status(lambda st: all(t["sent"] == 1 for t in st["notify_targets"].values()),
                           "each sent once")
        prom = d.ctl("status", "--prometheus", check=0).stdout
        self.assertIn('keventd_notify_sent_total{target="phone"} 1\n', prom)
        text = d.ctl("status", check=0).stdout
        self.assertIn("notify hook: sent 1, queued 0, retried 0, failed 0, dropped 0\n", text)
        d.stop_ok(self)

    def hook_config(self, port, max_age="1d"):
        return self.config("""
notify:
  hook:
    webhook: https://127.0.0.1:%d/keventd
    ca_file: %s
    max_age: %s
""" % (port, self.ca[1], max_age))

    def test_outage(self):
        """The receiver down, keventd killed twice meanwhile: each notification
        arrives once, or again flagged a retry."""
        rcv = self.server(notifyservers.https_server(self.s, self.cert))
        conf = self.hook_config(rcv.port)
        self.s.write_rule("50-hook.yaml",
                          "rules:\n  - name: hook\n    match: {signal: set}\n"
                          "    notify: hook\n")
        objs = []
        d = self.keventd(conf)
        for round in range(3):
            for i in range(5):
                obj = "/dev/md%d%d" % (round, i)
                objs.append(obj)
                d.send("storage", obj, "set", CONDITION)
            d.wait_status(lambda st: self.target(st, "hook")["queued"] >= 5 and
                          self.target(st, "hook")["failed"] >= 1, "queued, failing")
            if round < 2:
                d.kill()
                d = self.keventd(conf)
        rcv.start()
        got = self.wait_received(rcv, len(objs))
        st = d.wait_status(lambda st: self.target(st, "hook")["queued"] == 0, "queue empty")
        per = {}
        for g in got:
            b = json.loads(g["body"])
            per.setdefault(b["object"], []).append(b["notification"]["retry"])
            self.assertEqual(g["headers"].get("X-Keventd-Retry") == "yes",
                             b["notification"]["retry"])
        self.assertEqual(sorted(per), sorted(objs))
        for obj, flags in per.items():
            # once; or more often, each copy but one flagged a retry
            self.assertGreaterEqual(flags.count(True), len(flags) - 1, (obj, flags))
        t = self.target(st, "hook")
        self.assertEqual(t["dropped"], 0)
        self.assertGreaterEqual(t["failed"], 1)
        self.assertEqual(os.listdir(os.path.join(self.lib, "notify")), [])
        print("outage: %d notifications, %d received, %d flagged a retry"
              % (len(objs), len(got), sum(f.count(True) for f in per.values())))
        d.stop_ok(self)

    def test_max_age(self):
        rcv = self.server(notifyservers.https_server(self.s, self.cert))
        conf = self.hook_config(rcv.port, "2s")
        self.s.write_rule("50-hook.yaml",
                          "rules:\n  - name: hook\n    match: {signal: set}\n"
                          "    notify: hook\n")
        d = self.keventd(conf)
        for i in range(3):
            d.send("storage", "/dev/old%d" % i, "set", CONDITION)
        st = d.wait_status(lambda st: self.target(st, "hook")["dropped"] == 3,
                           "three dropped past max_age")
        self.assertEqual(self.target(st, "hook")["queued"], 0)
        self.assertEqual(self.target(st, "hook")["sent"], 0)
        self.assertIn("older than max_age", d.logtext())
        rcv.start()
        d.send("storage", "/dev/new", "set", CONDITION)
        got = self.wait_received(rcv, 1)
        d.wait_status(lambda st: self.target(st, "hook")["sent"] == 1, "the new one sent")
        self.assertEqual([json.loads(g["body"])["object"] for g in rcv.received()], ["/dev/new"])
        self.assertEqual(len(got), 1)
        d.stop_ok(self)

    def test_damaged_record(self):
        rcv = self.server(notifyservers.https_server(self.s, self.cert))
        conf = self.hook_config(rcv.port)
        self.s.write_rule("50-hook.yaml",
                          "rules:\n  - name: hook\n    match: {signal: set}\n"
                          "    notify: hook\n")
        d = self.keventd(conf)
        for i in range(4):
            d.send("storage", "/dev/q%d" % i, "set", CONDITION)
        d.wait_status(lambda st: self.target(st, "hook")["queued"] == 4, "four queued")
        d.stop_ok(self)
        qdir = os.path.join(self.lib, "notify")
        names = sorted(os.listdir(qdir))
        self.assertEqual(len(names), 4, names)
        with open(os.path.join(qdir, names[0]), "r+b") as f:
            f.seek(60)
            f.write(b"X")  # a byte of the body: its checksum no longer holds
        rcv.start()
        d = self.keventd(conf)
        st = d.wait_status(lambda st: self.target(st, "hook")["sent"] == 3, "three sent")
        self.assertEqual(st["notify"]["damaged"], 1)
        self.assertEqual(sorted(os.listdir(qdir)), [names[0] + ".damaged"])
        self.assertEqual(len(rcv.received()), 3)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

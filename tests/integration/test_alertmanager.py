#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Alertmanager output (keventd.yaml(5) ALERTMANAGER) against the real
Debian prometheus-alertmanager on 127.0.0.1, read back through its own API
(GET /api/v2/alerts): a condition set by a socket event appears as an alert
with its labels, annotations and startsAt; a clear resolves it (Alertmanager
lists no alert whose endsAt has passed); a keventd restart keeps it active,
same startsAt, never resolved; an Alertmanager that was down gets every
alert that holds when it is back, the failures counted; libcurl is mapped
only when the section is there; verify --config checks the section."""
import datetime
import json
import os
import socket
import subprocess
import time
import unittest
import urllib.error
import urllib.request

import kdtest
from kdtest import DaemonTest, KEVENTCTL, TIMEOUT

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"

AM_CONFIG = """route:
  receiver: "null"
receivers:
  - name: "null"
"""

CONDITIONS = """conditions:
  - name: disk-bad
    set: {source: socket, signal: bad}
    clear: {source: socket, signal: good}
    severity: critical
  - name: hot
    set: {source: socket, signal: hot}
    clear: {source: socket, signal: cool}
rules: []
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_time(s):
    """An RFC 3339 time of Alertmanager's or keventd's, as a datetime."""
    s = s.replace("Z", "+00:00")
    if "." in s:  # Alertmanager's milliseconds
        head, tail = s.split(".", 1)
        s = head + tail[tail.index("+"):]
    return datetime.datetime.fromisoformat(s)


class Alertmanager:
    """The real Alertmanager, a null receiver, its API on a port of its own."""

    def __init__(self, scratch, port, storage):
        self.s = scratch
        self.port = port
        self.storage = storage
        self.conf = scratch.path("am.yml")
        with open(self.conf, "w") as f:
            f.write(AM_CONFIG)
        self.proc = None
        self.log = None
        self.url = "http://127.0.0.1:%d" % port

    def start(self):
        self.log = open(self.s.path("alertmanager.log"), "a")
        self.proc = subprocess.Popen(
            [ALERTMANAGER, "--config.file=" + self.conf, "--storage.path=" + self.storage,
             "--web.listen-address=127.0.0.1:%d" % self.port, "--cluster.listen-address="],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if self.proc.poll() is not None or not kdtest.deadline_left(deadline):
                raise AssertionError("alertmanager did not start; log:\n" + self.logtext())
            time.sleep(0.05)  # polling its readiness endpoint, not a synchronisation

    def logtext(self):
        with open(self.s.path("alertmanager.log"), errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(TIMEOUT)
        self.proc = None
        if self.log:
            self.log.close()
            self.log = None

    def alerts(self):
        with urllib.request.urlopen(self.url + "/api/v2/alerts", timeout=5) as r:
            return json.loads(r.read())

    def wait(self, pred, what, timeout=TIMEOUT):
        """Polls the alerts until pred(alerts) is true; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            a = self.alerts()
            if pred(a):
                return a
            if not kdtest.deadline_left(deadline):
                raise AssertionError("Alertmanager never had %s; last: %s" % (what, a))
            time.sleep(0.02)  # polling Alertmanager's API, not a synchronisation


def named(alerts, name):
    return [a for a in alerts if a["labels"].get("alertname") == name]


@unittest.skipUnless(os.access(ALERTMANAGER, os.X_OK),
                     "no Debian prometheus-alertmanager (scripts/deps.sh test installs it)")
class AlertmanagerTest(DaemonTest):
    def setUp(self):
        super().setUp()
        self.s.write_rule("50-c.yaml", CONDITIONS)
        self.lib = self.s.path("lib")
        self.am = Alertmanager(self.s, free_port(), self.s.path("am-data"))
        self.host = socket.gethostname()

    def tearDown(self):
        self.am.stop()
        super().tearDown()

    def config(self, resend="2s", extra=""):
        path = self.s.path("keventd.yaml")
        with open(path, "w") as f:
            f.write("alertmanager:\n  url: %s/\n  resend: %s\n  labels: {cluster: test, "
                    "team: storage}\n%s" % (self.am.url, resend, extra))
        return path

    def keventd(self, conf):
        return self.start("--config", conf, "--lib-dir", self.lib, "--sources",
                          "socket,condition")

    def since(self, d, name):
        r = d.ctl("conditions", "--json", check=0)
        rows = [json.loads(l) for l in r.stdout.splitlines()]
        return [parse_time(x["since"]) for x in rows if x["condition"] == name][0]

    def test_set_resolve(self):
        self.am.start()
        d = self.keventd(self.config())
        t0 = time.monotonic()
        d.send("storage", "/dev/sda", "bad", "Sector: 1\nDevice: sda")
        a = self.am.wait(lambda a: named(a, "disk-bad"), "disk-bad")
        latency = time.monotonic() - t0
        print("set -> alert visible: %.0f ms" % (latency * 1000))
        a = named(a, "disk-bad")[0]
        self.assertEqual(a["labels"], {"alertname": "disk-bad", "instance": self.host,
                                       "object": "/dev/sda", "severity": "critical",
                                       "cluster": "test", "team": "storage"})
        self.assertEqual(a["annotations"], {"summary": "bad on /dev/sda",
                                            "description": "Sector: 1\nDevice: sda"})
        self.assertEqual(a["status"]["state"], "active")
        self.assertEqual(parse_time(a["startsAt"]), self.since(d, "disk-bad"))
        # it ends 4 resends after the post, unless posted again
        now = datetime.datetime.now(datetime.timezone.utc)
        ends = parse_time(a["endsAt"])
        self.assertGreater(ends, now + datetime.timedelta(seconds=5))
        self.assertLessEqual(ends, now + datetime.timedelta(seconds=9))
        st = d.wait_status(lambda st: st["alertmanager"]["posts"] >= 1, "a post")
        am = st["alertmanager"]
        self.assertEqual((am["enabled"], am["up"], am["alerts"], am["failed"],
                          am["last_error"]), (True, True, 1, 0, None))
        prom = d.ctl("status", "--prometheus", check=0).stdout
        self.assertIn("keventd_alertmanager_up 1\n", prom)
        self.assertIn("keventd_alertmanager_alerts 1\n", prom)
        # a second condition: the two together
        d.send("power", "/cpu", "hot")
        a = self.am.wait(lambda a: named(a, "hot") and named(a, "disk-bad"), "both")
        self.assertEqual(named(a, "hot")[0]["labels"]["severity"], "warning")
        # the clear resolves it: Alertmanager lists no alert whose endsAt
        # has passed (GET /api/v2/alerts leaves resolved alerts out), long
        # before the endsAt of a post (8s) would have
        t0 = time.monotonic()
        d.send("storage", "/dev/sda", "good")
        a = self.am.wait(lambda a: not named(a, "disk-bad"), "disk-bad resolved", timeout=5)
        print("clear -> alert resolved: %.0f ms" % ((time.monotonic() - t0) * 1000))
        self.assertEqual([x["labels"]["alertname"] for x in a], ["hot"])
        st = d.wait_status(lambda st: st["alertmanager"]["resolved_pending"] == 0,
                           "no resolved alert pending")
        self.assertEqual(st["alertmanager"]["alerts"], 1)
        text = d.ctl("status", check=0).stdout
        self.assertRegex(text, r"\nalertmanager: up \(posts \d+, failed 0, alerts 1, "
                               r"resolved pending 0\)\n")
        # re-sent every resend while it holds: Alertmanager's endsAt moves on
        before = parse_time(named(self.am.alerts(), "hot")[0]["endsAt"])
        self.am.wait(lambda a: named(a, "hot") and parse_time(named(a, "hot")[0]["endsAt"])
                     > before, "hot re-sent")
        d.stop_ok(self)

    def test_restart_never_resolves(self):
        self.am.start()
        conf = self.config(resend="1s")
        d = self.keventd(conf)
        d.send("storage", "/dev/sdb", "bad", "Sector: 7")
        first = named(self.am.wait(lambda a: named(a, "disk-bad"), "disk-bad"), "disk-bad")[0]
        d.stop_ok(self)
        # keventd gone: the alert is still active, its endsAt ahead
        a = named(self.am.alerts(), "disk-bad")
        self.assertEqual(len(a), 1)
        self.assertEqual(a[0]["status"]["state"], "active")
        self.assertGreater(parse_time(a[0]["endsAt"]), datetime.datetime.now(
            datetime.timezone.utc))
        d2 = self.keventd(conf)
        # the table's row is posted at start, again every resend: watched
        # all along, never gone, the same startsAt
        deadline = time.monotonic() + TIMEOUT
        seen_posts = 0
        while seen_posts < 3:
            a = named(self.am.alerts(), "disk-bad")
            self.assertEqual(len(a), 1, "the alert was resolved across the restart")
            self.assertEqual(a[0]["status"]["state"], "active")
            self.assertEqual(a[0]["startsAt"], first["startsAt"])
            seen_posts = d2.status()["alertmanager"]["posts"]
            self.assertTrue(kdtest.deadline_left(deadline), "no 3 posts after the restart")
            time.sleep(0.05)  # polling both APIs, not a synchronisation
        self.assertGreater(parse_time(a[0]["endsAt"]), parse_time(first["endsAt"]))
        d2.stop_ok(self)

    def test_outage(self):
        # Alertmanager not there yet: the posts fail, counted, retried
        d = self.keventd(self.config(resend="2s"))
        d.send("storage", "/dev/sdc", "bad", "Sector: 9")
        d.send("power", "/cpu", "hot")
        d.send("power", "/cpu", "cool")  # set and cleared while it is down
        st = d.wait_status(lambda st: st["alertmanager"]["failed"] >= 2, "two failed posts")
        am = st["alertmanager"]
        self.assertEqual((am["up"], am["posts"], am["alerts"], am["resolved_pending"]),
                         (False, 0, 1, 1))
        self.assertIn("onnect", am["last_error"])  # "Couldn't connect", "Connection refused"
        self.assertIn("alertmanager: down (posts 0, failed", d.ctl("status", check=0).stdout)
        prom = d.ctl("status", "--prometheus", check=0).stdout
        self.assertIn("keventd_alertmanager_up 0\n", prom)
        self.assertIn("keventd_alertmanager_resolved_pending 1\n", prom)
        # back: it gets the alert that holds (within the backoff, at most resend)
        self.am.start()
        a = self.am.wait(lambda a: named(a, "disk-bad"), "disk-bad after the outage")
        self.assertEqual(named(a, "disk-bad")[0]["labels"]["object"], "/dev/sdc")
        self.assertEqual(named(a, "hot"), [])  # resolved: delivered, not listed
        st = d.wait_status(lambda st: st["alertmanager"]["up"]
                           and st["alertmanager"]["resolved_pending"] == 0, "up again")
        self.assertGreaterEqual(st["alertmanager"]["failed"], 2)
        # a restart of Alertmanager on fresh storage: the next resend fills it again
        self.am.stop()
        self.am = Alertmanager(self.s, self.am.port, self.s.path("am-data-2"))
        self.am.start()
        self.assertEqual(self.am.alerts(), [])
        self.am.wait(lambda a: named(a, "disk-bad"), "disk-bad after a fresh start")
        d.stop_ok(self)
        self.assertIn("takes the alerts again", d.logtext())

    def test_libcurl_only_when_configured(self):
        def mapped(d):
            with open("/proc/%d/maps" % d.proc.pid) as f:
                return "libcurl" in f.read()
        d = self.start("--lib-dir", self.lib, "--sources", "socket,condition")
        self.assertFalse(mapped(d))
        self.assertIn("alertmanager: off\n", d.ctl("status", check=0).stdout)
        d.stop_ok(self)
        self.am.start()
        d = self.keventd(self.config())
        self.assertTrue(mapped(d))
        d.stop_ok(self)

    def test_verify(self):
        def verify(text):
            path = self.s.path("k.yaml")
            with open(path, "w") as f:
                f.write(text)
            return subprocess.run([KEVENTCTL, "verify", "--config", path],
                                  capture_output=True, text=True, timeout=TIMEOUT)
        r = verify("alertmanager:\n  url: http://127.0.0.1:9093\n  resend: 30s\n"
                   "  labels: {cluster: prod}\n")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for text, err in [
                ("alertmanager:\n  url: ftp://h\n", "is neither https://HOST nor http://HOST"),
                ("alertmanager:\n  url: http://\n", "names no host"),
                ("alertmanager:\n  url: http://h\n  resend: 500ms\n", "bad resend"),
                ("alertmanager:\n  url: http://h\n  labels: {severity: low}\n",
                 "'severity' is keventd's own"),
                ("alertmanager:\n  url: http://h\n  labels: {bad-name: x}\n",
                 "is not a label name"),
                ("alertmanager:\n  resend: 10s\n", "says no url")]:
            r = verify(text)
            self.assertEqual(r.returncode, 1, text + r.stdout + r.stderr)
            self.assertIn(err, r.stdout + r.stderr)
        pw = self.s.path("am.password")
        with open(pw, "w") as f:
            f.write("secret\n")
        os.chmod(pw, 0o644)
        r = verify("alertmanager:\n  url: http://127.0.0.1:9093\n  username: k\n"
                   "  password_file: %s\n" % pw)
        self.assertEqual(r.returncode, 1)
        self.assertIn("password_file %s may be read by group or others" % pw, r.stdout + r.stderr)
        os.chmod(pw, 0o600)
        self.assertEqual(verify("alertmanager:\n  url: http://127.0.0.1:9093\n  username: k\n"
                                "  password_file: %s\n" % pw).returncode, 0)


if __name__ == "__main__":
    kdtest.main()

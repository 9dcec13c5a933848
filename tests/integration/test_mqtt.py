#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Publishing to an MQTT broker (keventd.yaml(5), docs/fleet.md), against a real
mosquitto the test starts on 127.0.0.1: the topic and the JSON of each event,
the retained status "online" and the will "offline", a broker outage with
1,000 events queued and every one delivered in order, the spool (bounded,
counted exactly, found again after a SIGKILL), the backoff while the broker is
away or refuses a password, TLS with a CA and client certificates made by the
test, publish: matched and QoS 0, events taken from the broker (source: mqtt
rules only, 20 kinds of malformed message), and a fleet of 50 keventds.  What
keeps keventd from publishing (a spool another keventd holds, a spool
directory others may write to, a spool it cannot read, a password file
others may read) turns publishing off and stops nothing else; a packet over
the bound keventd gives the broker is dropped by the broker."""
import json
import os
import signal
import subprocess
import time

import kdtest
import mqttbroker
from kdtest import DaemonTest, TIMEOUT
from mqttbroker import Broker

HOST = os.uname().nodename


class Mqtt(DaemonTest):
    def setUp(self):
        super().setUp()
        if not mqttbroker.available():
            self.skipTest("mosquitto and mosquitto-clients are not installed "
                          "(scripts/deps.sh test)")
        self.brokers = []

    def tearDown(self):
        for d in self.daemons:  # before the brokers: no reconnection noise
            d.kill()
        for b in self.brokers:
            b.kill()
        super().tearDown()

    def broker(self, **kw):
        b = Broker(self.s, name="broker%d" % len(self.brokers), **kw)
        self.brokers.append(b)
        return b

    def config(self, broker, extra="", name="keventd.yaml", prefix="fleet/h1", spool_mb=64):
        path = self.s.path(name)
        with open(path, "w") as f:
            f.write("mqtt:\n  url: %s\n  topic_prefix: %s\n  client_id: %s\n"
                    "  spool: {dir: %s, max_mb: %d}\n%s"
                    % (broker.url(), prefix, "kd-" + name, self.s.path("spool-" + name),
                       spool_mb, extra))
        os.chmod(path, 0o644)
        return path

    def mqtt(self, d):
        return d.status()["mqtt"]

    def wait_mqtt(self, d, pred, what):
        return d.wait_status(lambda st: pred(st["mqtt"]), what)

    def batch(self, n, obj="/fleet/e", name=""):
        path = self.s.path("batch-%d%s" % (n, name))
        with open(path, "w") as f:
            for i in range(n):
                f.write("general\t%s\tn%d\tI: %d\n" % (obj, i, i))
        return path

    def test_condition_retained_while_it_holds(self):
        """A condition's row is a retained message on
        PREFIX/condition/NAME/OBJECT while it holds (the row's last event),
        emptied when it clears: a subscriber that comes later learns what
        holds now."""
        b = self.broker().start()
        self.s.write_rule("50-c.yaml",
                          "conditions:\n  - name: hot\n"
                          "    set: {source: socket, signal: hot}\n"
                          "    clear: {source: socket, signal: cool}\n")
        d = self.start("--config", self.config(b), "--sources", "socket,condition")
        d.wait_log("mqtt: connected to 127.0.0.1:%d" % b.port)
        topic = "fleet/h1/condition/hot/org/kernel/cpu%231"
        d.send("power", "/org/kernel/cpu#1", "hot")
        self.wait_mqtt(d, lambda m: m["acknowledged"] == 3, "the event, the set, its row")
        ev = json.loads(b.retained(topic))
        self.assertEqual((ev["source"], ev["signal"], ev["object"]),
                         ("condition", "set", "/org/kernel/cpu#1"))
        self.assertEqual(ev["properties"]["Condition"], "hot")
        d.send("power", "/org/kernel/cpu#1", "cool")
        self.wait_mqtt(d, lambda m: m["acknowledged"] == 6, "the event, the clear, its row")
        # emptied: no retained message left (a retained one comes at once on
        # subscribing; none in 2s is none)
        self.assertEqual(b.retained(topic, wait=2), "")
        d.stop_ok(self)

    def test_publish_topic_and_json(self):
        b = self.broker().start()
        b.session("watcher", "fleet/#")
        d = self.start("--config", self.config(b))
        d.wait_log("mqtt: connected to 127.0.0.1:%d as kd-keventd.yaml" % b.port)
        d.send("power", "/org/kernel/cpu/t+x#1", "high", "Cpu: 1\nWhy: 100%")
        got = b.collect("watcher", "fleet/#", 2)
        self.assertEqual(got[0], ("fleet/h1/status", "online"))
        topic, payload = got[1]
        # the object's leading '/' separates the levels; '+', '#' and '%' encoded
        self.assertEqual(topic, "fleet/h1/power/high/org/kernel/cpu/t%2Bx%231")
        ev = json.loads(payload)
        self.assertEqual(ev["host"], HOST)
        self.assertEqual((ev["type"], ev["object"], ev["signal"], ev["source"]),
                         ("power", "/org/kernel/cpu/t+x#1", "high", "socket"))
        self.assertEqual(ev["payload"], "Cpu: 1\nWhy: 100%")
        self.assertEqual(ev["properties"], {"Cpu": "1", "Why": "100%"})
        self.assertEqual(ev["seqnum"], 1)
        # the same object as keventctl record writes, plus host and what
        # names the event for a reader that drops what it has seen
        self.assertEqual(set(ev), {"seqnum", "timestamp", "source", "type", "object", "signal",
                                   "payload", "properties", "host", "instance", "redelivered",
                                   "recovered"})
        self.assertRegex(ev["instance"], "^[0-9a-f]{16}$")
        self.assertNotEqual(ev["instance"], "0" * 16)
        self.assertEqual((ev["redelivered"], ev["recovered"]), (False, False))
        st = self.wait_mqtt(d, lambda m: m["acknowledged"] == 1, "one acknowledged")
        self.assertEqual(st["mqtt"], {"enabled": True, "connected": True, "published": 1,
                                      "acknowledged": 1, "spooled": 0, "dropped": 0,
                                      "corrupt": 0, "received": 0, "duplicates": 0,
                                      "connection_attempts": 1,
                                      "publishing": "on"})
        self.assertEqual(b.retained("fleet/h1/status"), "online")
        text = d.ctl("status", check=0).stdout
        self.assertIn("mqtt: connected (published 1, acknowledged 1, spooled 0, dropped 0, "
                      "corrupt 0, received 0, duplicates 0, connection attempts 1)\n", text)
        prom = d.ctl("status", "--prometheus", check=0).stdout
        self.assertIn("keventd_mqtt_connected 1\n", prom)
        self.assertIn("keventd_mqtt_publishing 1\n", prom)
        self.assertIn("keventd_mqtt_spool_corrupt_total 0\n", prom)
        self.assertIn("keventd_mqtt_acknowledged_total 1\n", prom)
        d.stop_ok(self)
        # a clean stop says so itself: the will is for a connection that breaks
        self.assertEqual(b.retained("fleet/h1/status"), "offline")
        self.assertNotIn("lost the connection", d.logtext())

    def test_will_when_killed(self):
        b = self.broker().start()
        d = self.start("--config", self.config(b))
        d.wait_log("mqtt: connected")
        self.assertEqual(b.retained("fleet/h1/status"), "online")
        b.session("watcher", "fleet/h1/status")
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(TIMEOUT)
        # the broker publishes the will as soon as it sees the socket close
        self.assertEqual(b.collect("watcher", "fleet/h1/status", 1),
                         [("fleet/h1/status", "offline")])
        self.assertEqual(b.retained("fleet/h1/status"), "offline")

    def test_outage_1000_in_order(self):
        b = self.broker().start()
        b.session("watcher", "fleet/h1/general/#")
        d = self.start("--config", self.config(b))
        d.wait_log("mqtt: connected")
        b.stop()
        d.wait_log("mqtt: lost the connection to 127.0.0.1:%d" % b.port)
        d.ctl("send", "--batch", self.batch(1000), check=0)
        d.wait_idle(1000)
        st = self.mqtt(d)
        self.assertEqual((st["connected"], st["spooled"], st["published"], st["dropped"]),
                         (False, 1000, 0, 0))
        b.start()
        st = self.wait_mqtt(d, lambda m: m["acknowledged"] == 1000, "1,000 acknowledged")
        self.assertEqual((st["mqtt"]["published"], st["mqtt"]["spooled"],
                          st["mqtt"]["dropped"]), (1000, 0, 0))
        got = b.collect("watcher", "fleet/h1/general/#", 1000)
        # in order, and each once: the broker lost no acknowledgement here,
        # since nothing was in flight when it stopped
        self.assertEqual([t for t, _ in got],
                         ["fleet/h1/general/n%d/fleet/e" % i for i in range(1000)])
        self.assertEqual([json.loads(p)["payload"] for _, p in got],
                         ["I: %d" % i for i in range(1000)])
        d.stop_ok(self)

    def test_outage_with_messages_in_flight(self):
        b = self.broker().start()
        d = self.start("--config", self.config(b))
        d.wait_log("mqtt: connected")
        b.proc.send_signal(signal.SIGSTOP)  # it takes messages, and acknowledges none
        try:
            d.ctl("send", "--batch", self.batch(100), check=0)
            d.wait_idle(100)
            st = self.wait_mqtt(d, lambda m: m["published"] == 64, "the window full")
            self.assertEqual((st["mqtt"]["acknowledged"], st["mqtt"]["spooled"]), (0, 100))
        finally:
            b.proc.send_signal(signal.SIGCONT)
        b.kill()  # what it held is gone with it
        d.wait_log("mqtt: lost the connection")
        b.start()
        # libmosquitto sends the 64 again, keventd the 36 after them: all 100
        # acknowledged, each counted once as published
        st = self.wait_mqtt(d, lambda m: m["acknowledged"] == 100, "100 acknowledged")
        self.assertEqual((st["mqtt"]["published"], st["mqtt"]["spooled"],
                          st["mqtt"]["dropped"]), (100, 0, 0))
        d.stop_ok(self)

    def test_spool_full_drops_exactly(self):
        b = self.broker().start()
        b.session("watcher", "fleet/h1/general/#")
        b.stop()
        d = self.start("--config", self.config(b, spool_mb=1))
        d.wait_log("mqtt: cannot connect")
        n = 100000
        d.ctl("send", "--batch", self.batch(n), check=0, timeout=120)
        d.wait_idle(n, timeout=120)
        st = self.mqtt(d)
        kept, dropped = st["spooled"], st["dropped"]
        self.assertEqual(kept + dropped, n)
        self.assertEqual(st["published"], 0)
        # 1 MB of messages of about 200 bytes: some thousands kept, the rest not
        self.assertGreater(kept, 2000)
        self.assertLess(kept, 6000)
        self.assertEqual(d.logtext().count("is full (1 MB): dropping its oldest"), 1)
        b.start()
        st = self.wait_mqtt(d, lambda m: m["acknowledged"] == kept, "the kept acknowledged")
        self.assertEqual((st["mqtt"]["published"], st["mqtt"]["spooled"],
                          st["mqtt"]["dropped"]), (kept, 0, dropped))
        d.wait_log("mqtt: %d messages dropped from the full spool" % dropped)
        got = b.collect("watcher", "fleet/h1/general/#", kept)
        # exactly the newest, in order
        self.assertEqual([t for t, _ in got],
                         ["fleet/h1/general/n%d/fleet/e" % i for i in range(dropped, n)])
        d.stop_ok(self)

    def test_restart_sends_the_spool(self):
        b = self.broker().start()
        b.session("watcher", "fleet/h1/general/#")
        conf = self.config(b)
        d = self.start("--config", conf)
        d.wait_log("mqtt: connected")
        d.ctl("send", "--batch", self.batch(10, "/before"), check=0)
        self.wait_mqtt(d, lambda m: m["acknowledged"] == 10, "10 acknowledged")
        b.stop()
        d.wait_log("mqtt: lost the connection")
        d.ctl("send", "--batch", self.batch(500), check=0)
        d.wait_idle(510)
        self.assertEqual(self.mqtt(d)["spooled"], 500)
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(TIMEOUT)
        # a new keventd finds the 500, and not the 10 the broker acknowledged
        d2 = self.start("--config", conf)
        d2.wait_log("mqtt: 500 messages in the spool")
        self.assertEqual(self.mqtt(d2)["spooled"], 500)
        b.start()
        self.wait_mqtt(d2, lambda m: m["acknowledged"] == 500, "500 acknowledged")
        d2.send("general", "/after", "x")
        self.wait_mqtt(d2, lambda m: m["acknowledged"] == 501, "501 acknowledged")
        # one subscriber's session read once: mosquitto_sub -C hangs up with
        # acknowledgements unsent, and the broker would send those again
        got = b.collect("watcher", "fleet/h1/general/#", 511)
        self.assertEqual([t for t, _ in got],
                         ["fleet/h1/general/n%d/before" % i for i in range(10)] +
                         ["fleet/h1/general/n%d/fleet/e" % i for i in range(500)] +
                         ["fleet/h1/general/x/after"])
        d2.stop_ok(self)

    def status_at(self, ctl):
        r = subprocess.run([kdtest.KEVENTCTL, "--control", ctl, "status", "--json"],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_spool_flipped_byte_costs_one_message(self):
        """1,500 messages spooled, one byte of the spool flipped while keventd
        is stopped: the next keventd sends the other 1,499, in order, counts
        the one lost (corrupt) and keeps every segment (one such byte used to
        leave 254, none counted)."""
        b = self.broker().start()
        b.session("watcher", "fleet/h1/general/#")
        b.stop()
        conf = self.config(b, spool_mb=1)  # segments of 128 KiB: a few of them
        d = self.start("--config", conf)
        d.wait_log("mqtt: cannot connect")
        n = 1500
        d.ctl("send", "--batch", self.batch(n), check=0)
        d.wait_idle(n)
        self.assertEqual(self.mqtt(d)["spooled"], n)
        d.stop_ok(self)
        spool = self.s.path("spool-keventd.yaml")
        segs = sorted(f for f in os.listdir(spool) if f.startswith("seg-"))
        self.assertGreaterEqual(len(segs), 3)
        with open(os.path.join(spool, segs[0]), "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(size // 2)
            c = f.read(1)
            f.seek(size // 2)
            f.write(bytes([c[0] ^ 0x01]))
        d = self.start("--config", conf)
        d.wait_log("damaged bytes in 1 places skipped, the records after them kept; "
                   "1 messages lost with them (counted corrupt)")
        st = self.mqtt(d)
        self.assertEqual((st["spooled"], st["corrupt"], st["publishing"]), (n - 1, 1, "on"))
        self.assertEqual(sorted(f for f in os.listdir(spool) if f.startswith("seg-") and
                                "." not in f), segs)
        self.assertEqual(len([f for f in os.listdir(spool) if f.endswith(".corrupt")]), 1)
        b.start()
        st = self.wait_mqtt(d, lambda m: m["acknowledged"] == n - 1, "1,499 acknowledged")
        self.assertEqual((st["mqtt"]["published"], st["mqtt"]["spooled"],
                          st["mqtt"]["dropped"], st["mqtt"]["corrupt"]), (n - 1, 0, 0, 1))
        got = [int(t.split("/")[3][1:]) for t, _ in
               b.collect("watcher", "fleet/h1/general/#", n - 1)]
        self.assertEqual(len(got), n - 1)
        self.assertEqual(got, sorted(got))  # in order
        lost = set(range(n)) - set(got)
        self.assertEqual(len(lost), 1)
        self.assertLess(lost.pop(), n // 2)  # in the first segment
        d.stop_ok(self)

    def test_spool_is_one_keventds(self):
        b = self.broker()
        conf = self.config(b)
        d = self.start("--config", conf)
        # a second keventd on the same spool: it does not publish, and runs
        ctl2 = self.s.path("ctl2")
        d2 = kdtest.Daemon(self.s, args=["--config", conf, "--control", ctl2])
        self.daemons.append(d2)
        d2.start()
        spool = self.s.path("spool-keventd.yaml")
        self.assertIn("mqtt: spool %s: Device or resource busy" % spool, d2.logtext())
        self.assertIn("mqtt: spool %s: Device or resource busy (the spool is another "
                      "keventd's): publishing is off\n" % spool, d2.logtext())
        st = self.status_at(ctl2)
        self.assertEqual(st["mqtt"]["publishing"], "off (spool %s: Device or resource busy "
                         "(the spool is another keventd's))" % spool)
        r = subprocess.run([kdtest.KEVENTCTL, "--control", ctl2, "send", "general", "/x", "y"],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        st = self.status_at(ctl2)
        self.assertEqual((st["sources"]["socket"]["received"], st["mqtt"]["spooled"]), (1, 0))
        self.assertEqual(self.mqtt(d)["publishing"], "on")  # the first one's, untouched
        d2.stop_ok(self)
        d.stop_ok(self)

    def central(self, b, filters, *args, prefix="fleet/central"):
        """A keventd subscribed to filters, once the broker has its
        subscriptions; a filter is a string, or (filter, host_level)."""
        items = ["{filter: %s, host_level: %d}" % (kdtest.yq(f[0]), f[1])
                 if isinstance(f, tuple) else kdtest.yq(f) for f in filters]
        conf = self.config(b, "  subscribe: [%s]\n" % ", ".join(items),
                           name="central.yaml", prefix=prefix)
        d = self.start("--config", conf, "--sources", "socket,mqtt", *args)
        for f in filters:
            b.wait_log("kd-central.yaml 1 %s" % (f[0] if isinstance(f, tuple) else f))
        return d

    def test_spool_dir_writable_by_others(self):
        """A spool directory that others may write to is refused: publishing
        is off, in the log and in status, and keventd goes on: the socket
        source, and the source mqtt over the same connection."""
        b = self.broker().start()
        b.session("watcher", "fleet/central/#")
        spool = self.s.path("spool-central.yaml")
        os.mkdir(spool)
        os.chmod(spool, 0o777)
        self.s.write_rule("10-both.yaml", r"""
rules:
  - name: fleet
    match: {source: mqtt, type: power}
    run: %s
  - name: local
    match: {source: socket, type: general}
    run: %s
""" % (self.h("report", self.s.path("out", "fleet.json"), self.s.fifo.path, "fleet"),
       self.h("report", self.s.path("out", "local.json"), self.s.fifo.path, "local")))
        d = self.central(b, ["fleet/+/power/#"])
        why = ("spool %s: Permission denied (the spool directory is writable by group or "
               "others (chmod 700 it))" % spool)
        d.wait_log("mqtt: %s: publishing is off\n" % why)
        st = self.mqtt(d)
        self.assertEqual((st["publishing"], st["connected"]), ("off (%s)" % why, True))
        text = d.ctl("status", check=0).stdout
        self.assertIn("; publishing off (%s)\n" % why, text)
        prom = d.ctl("status", "--prometheus", check=0).stdout
        self.assertIn("keventd_mqtt_publishing 0\n", prom)
        # the other sources run their rules
        d.send("general", "/local", "x")
        self.assertEqual(self.s.fifo.line(), "done local")
        b.publish("fleet/h7/power/high/cpu",
                  json.dumps({"type": "power", "object": "/cpu", "signal": "high",
                              "host": "h7"}))
        self.assertEqual(self.s.fifo.line(), "done fleet")
        st = d.wait_idle(2)
        self.assertEqual((st["mqtt"]["published"], st["mqtt"]["spooled"],
                          st["mqtt"]["received"]), (0, 0, 1))
        # nothing written into a directory others could have swapped
        self.assertEqual(os.listdir(spool), [])
        self.assertEqual(os.stat(spool).st_mode & 0o777, 0o777)
        # and nothing published but the status
        self.assertEqual(b.collect("watcher", "fleet/central/#", 1),
                         [("fleet/central/status", "online")])
        d.stop_ok(self)

    def test_spool_read_error_turns_publishing_off(self):
        """A spool that cannot be read while keventd runs (here a segment
        swapped for a directory: the read fails with EISDIR, as a disk's
        would with EIO) turns publishing off, once, and keventd goes on."""
        b = self.broker()
        d = self.start("--config", self.config(b))
        d.wait_log("mqtt: cannot connect")
        d.ctl("send", "--batch", self.batch(5), check=0)
        d.wait_idle(5)
        spool = self.s.path("spool-keventd.yaml")
        seg = os.path.join(spool, "seg-%016x" % 1)
        os.rename(seg, seg + ".away")
        os.mkdir(seg, 0o700)
        b.start()
        why = "cannot read the spool %s: Is a directory" % spool
        d.wait_log("mqtt: %s: publishing is off\n" % why)
        st = self.wait_mqtt(d, lambda m: m["connected"], "connected")
        self.assertEqual((st["mqtt"]["publishing"], st["mqtt"]["published"]),
                         ("off (%s)" % why, 0))
        d.send("general", "/after", "x")  # handled, not published
        st = d.wait_idle(6)
        self.assertEqual(st["mqtt"]["published"], 0)
        self.assertEqual(d.logtext().count("publishing is off"), 1)
        d.stop_ok(self)

    def test_inbound_packet_bound(self):
        """keventd speaks MQTT 5 and tells the broker the largest packet it
        takes: the broker drops a larger message for it instead of sending
        it, and keventd never reads it."""
        b = self.broker().start()
        d = self.central(b, [("fleet/#", 2)])
        # MQTT 5 (p5), and a session the broker keeps (c0: no clean start)
        self.assertIn("as kd-central.yaml (p5, c0, k30", b.logtext())
        ok = {"type": "power", "object": "/a", "signal": "s", "host": "h1"}
        big = self.s.path("big")
        with open(big, "wb") as f:  # over the bound of 64 KiB + 64 KiB + 4 KiB
            f.write(b"{" + b" " * (200 * 1024) + b"}")
        b.publish("fleet/h1/power/s/a", None, extra=["-f", big])
        b.wait_log("Dropping too large outgoing PUBLISH for kd-central.yaml")
        b.publish("fleet/h1/power/s/a", json.dumps(ok))
        st = d.wait_status(lambda st: st["sources"]["mqtt"]["received"] == 1, "1 received")
        self.assertEqual(st["sources"]["mqtt"]["rejected"], 0)
        d.stop_ok(self)

    def test_inbound_fires_only_source_mqtt_rules(self):
        b = self.broker().start()
        out = self.s.path("out", "fleet.json")
        self.s.write_rule("10-fleet.yaml", r"""
rules:
  - name: fleet-cpu
    match: {source: mqtt, type: power, signal: high}
    run: %s
  - name: local-cpu
    match: {type: power, signal: high}
    run: [/bin/false]
""" % self.h("report", out, self.s.fifo.path, "fleet", "${KEVENT_HOST}"))
        d = self.central(b, ["fleet/+/power/#"])
        ev = {"seqnum": 7, "timestamp": 1700000000000000000, "source": "kernel",
              "type": "power", "object": "/org/kernel/devices/system/cpu/temperature",
              "signal": "high", "payload": "Cpu: 3\nHost: forged", "host": "h7"}
        b.publish("fleet/h7/power/high/org/kernel/devices/system/cpu/temperature",
                  json.dumps(ev))
        self.assertEqual(self.s.fifo.line(), "done fleet")
        with open(out) as f:
            info = json.load(f)
        self.assertEqual(info["argv"], ["h7"])
        env = dict(e.partition("=")[::2] for e in info["env"])
        self.assertEqual((env["KEVENT_HOST"], env["KEVENT_SOURCE"], env["KEVENT_TYPE"],
                          env["KEVENT_OBJECT"], env["KEVENT_SIGNAL"], env["KEVENT_SEQNUM"],
                          env["KEVENT_CPU"]),
                         ("h7", "mqtt", "power", "/org/kernel/devices/system/cpu/temperature",
                          "high", "7", "3"))
        st = d.wait_idle(1)
        self.assertEqual(st["sources"]["mqtt"]["received"], 1)
        self.assertEqual(st["mqtt"]["received"], 1)
        runs = {r["name"]: r["runs"] for r in st["rules"]}
        self.assertEqual(runs, {"fleet-cpu": 1, "local-cpu": 0})
        self.assertEqual(st["sources"]["mqtt"]["handled"], 1)
        kdtest.assert_accounted(self, st)
        # and an event from the broker is never published back
        self.assertEqual(st["mqtt"]["published"], 0)
        d.stop_ok(self)

    def test_inbound_while_stopped_runs_after_the_start(self):
        """The source mqtt keeps a session at the broker: 100 QoS 1 messages
        published while keventd is stopped each run once after it starts."""
        b = self.broker().start()
        out = self.s.path("out", "runs")
        rec = self.s.script("record.sh", "#!/bin/sh\nprintf '%s\\n' \"$KEVENT_SEQNUM\" >>\"$1\"\n")
        self.s.write_rule("10-fleet.yaml",
                          "rules:\n  - name: fleet\n    match: {source: mqtt, signal: high}\n"
                          "    run: [%s, %s]\n" % (kdtest.yq(rec), kdtest.yq(out)))
        d = self.central(b, ["fleet/+/power/#"])
        d.stop_ok(self)
        for i in range(100):
            ev = {"seqnum": i + 1, "timestamp": 1700000000000000000, "source": "kernel",
                  "type": "power", "object": "/org/kernel/x", "signal": "high",
                  "payload": "", "host": "h7"}
            b.publish("fleet/h7/power/high/org/kernel/x", json.dumps(ev))
        d = self.central(b, ["fleet/+/power/#"])
        d.wait_status(lambda st: st["sources"]["mqtt"]["received"] == 100
                      and st["events"]["pending"] == 0, "the 100 received and handled")
        d.stop_ok(self)
        with open(out) as f:
            seqs = sorted(int(l) for l in f)
        self.assertEqual(seqs, list(range(1, 101)))

    def recorder(self):
        """A rule of source mqtt that writes each run's host, instance-less
        name of the event and seqnum to a file; returns the file."""
        out = self.s.path("out", "runs")
        rec = self.s.script("record.sh", "#!/bin/sh\nprintf '%s %s %s\\n' \"$KEVENT_HOST\" "
                            "\"$KEVENT_OBJECT\" \"$KEVENT_SEQNUM\" >>\"$1\"\n")
        self.s.write_rule("10-fleet.yaml",
                          "rules:\n  - name: fleet\n    match: {source: mqtt}\n"
                          "    run: [%s, %s]\n" % (kdtest.yq(rec), kdtest.yq(out)))
        return out

    def runs(self, out):
        if not os.path.exists(out):
            return []
        with open(out) as f:
            return f.read().splitlines()

    def test_inbound_delivered_again_runs_once(self):
        """A message that names an event already taken (host, source,
        instance, seqnum) is dropped and counted; another instance's event
        of the same number, another source's, and a message without an
        instance (an older keventd's) each run."""
        b = self.broker().start()
        out = self.recorder()
        d = self.central(b, ["fleet/+/power/#"])

        def msg(instance, seqnum=7, source="socket"):
            ev = {"seqnum": seqnum, "timestamp": 1700000000000000000, "source": source,
                  "type": "power", "object": "/x/%s" % (instance or "none"), "signal": "high",
                  "payload": "", "host": "h7"}
            if instance:
                ev["instance"] = instance
            return json.dumps(ev)
        sent = [msg("00000000000000a1"), msg("00000000000000a1"),  # the same event twice
                msg("00000000000000a2"),  # another keventd's number 7
                msg("00000000000000a1", source="udev"),  # another source's
                msg("00000000000000a1", seqnum=6),  # an earlier one, late
                msg("00000000000000a1", seqnum=6),
                msg(None), msg(None)]  # no instance: cannot tell, runs
        for m in sent:
            b.publish("fleet/h7/power/high/x", m)
        st = d.wait_status(lambda st: st["mqtt"]["received"] == len(sent)
                           and st["events"]["pending"] == 0, "%d received" % len(sent))
        self.assertEqual(st["mqtt"]["duplicates"], 2)
        self.assertEqual(st["sources"]["mqtt"]["received"], len(sent) - 2)
        self.assertEqual(sorted(self.runs(out)),
                         sorted(["h7 /x/00000000000000a1 7", "h7 /x/00000000000000a2 7",
                                 "h7 /x/00000000000000a1 7", "h7 /x/00000000000000a1 6",
                                 "h7 /x/none 7", "h7 /x/none 7"]))
        self.assertIn("mqtt: connected (published 0, acknowledged 0, spooled 0, dropped 0, "
                      "corrupt 0, received 8, duplicates 2, connection attempts 1)\n",
                      d.ctl("status", check=0).stdout)
        self.assertIn("keventd_mqtt_duplicates_total 2\n",
                      d.ctl("status", "--prometheus", check=0).stdout)
        d.stop_ok(self)

    def test_inbound_taken_before_a_kill_is_not_run_again(self):
        """The table of messages taken outlives keventd (the state
        directory): killed once the table has the message, the next keventd
        drops the same message sent again, and runs a new one."""
        b = self.broker().start()
        out = self.recorder()
        state = self.s.path("central-state")
        seen = os.path.join(state, "mqtt-seen")
        d = self.central(b, ["fleet/+/power/#"], "--state-dir", state)
        ev = {"seqnum": 1, "source": "kernel", "type": "power", "object": "/x",
              "signal": "high", "host": "h7", "instance": "1234567890abcdef"}
        b.publish("fleet/h7/power/high/x", json.dumps(ev))
        d.wait_status(lambda st: st["sources"]["mqtt"]["received"] == 1
                      and st["events"]["pending"] == 0, "1 handled")
        deadline = time.monotonic() + TIMEOUT
        while not os.path.exists(seen):  # written within a second
            self.assertGreater(deadline - time.monotonic(), 0, "no %s" % seen)
            time.sleep(0.05)  # polling for the file, not a synchronisation
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(TIMEOUT)
        d = self.central(b, ["fleet/+/power/#"], "--state-dir", state)
        b.publish("fleet/h7/power/high/x", json.dumps(ev))
        ev["seqnum"] = 2
        b.publish("fleet/h7/power/high/x", json.dumps(ev))
        st = d.wait_status(lambda st: st["mqtt"]["received"] == 2
                           and st["events"]["pending"] == 0, "2 received")
        self.assertEqual(st["mqtt"]["duplicates"], 1)
        self.assertEqual(self.runs(out), ["h7 /x 1", "h7 /x 2"])
        d.stop_ok(self)

    def test_publisher_redelivery_after_a_kill_runs_once(self):
        """A publishing keventd killed while an event's handler runs hands
        the event again from its journal at its next start and publishes it
        again, flagged redelivered, with the same instance and seqnum: the
        subscribing keventd runs it once."""
        b = self.broker().start()
        mine = "fleet/%s/general/#" % HOST  # the topics of the publisher's host
        b.session("watcher", mine)
        out = self.recorder()
        central = self.central(b, ["fleet/+/general/#"], prefix="fleet/central")
        pub_rules = self.s.path("pub-rules")
        os.makedirs(pub_rules)
        with open(os.path.join(pub_rules, "10-gate.yaml"), "w") as f:
            f.write("rules:\n  - name: gate\n    match: {signal: gate}\n    run: %s\n"
                    % self.h("wait", self.s.fifo.path, self.s.gates.path("g"), "g"))
        ctl, state = self.s.path("ctl-pub"), self.s.path("pub-state")
        args = ("--config", self.config(b, name="pub.yaml", prefix="fleet/" + HOST),
                "--control", ctl, "--state-dir", state)
        pub = self.start(*args, rules_dirs=[pub_rules])
        r = subprocess.run([kdtest.KEVENTCTL, "--control", ctl, "send", "general", "/slow",
                            "gate"], capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        central.wait_status(lambda st: st["sources"]["mqtt"]["received"] == 1
                            and st["events"]["pending"] == 0, "1 handled")
        deadline = time.monotonic() + TIMEOUT
        while self.status_at(ctl)["mqtt"]["acknowledged"] != 1:
            self.assertGreater(deadline - time.monotonic(), 0, "never acknowledged")
            time.sleep(0.02)  # polling status, not a synchronisation
        pub.proc.send_signal(signal.SIGKILL)
        pub.proc.wait(TIMEOUT)
        pub = self.start(*args, rules_dirs=[pub_rules])
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])  # the run again
        st = central.wait_status(lambda st: st["mqtt"]["received"] == 2
                                 and st["events"]["pending"] == 0, "the second copy")
        self.assertEqual(st["mqtt"]["duplicates"], 1)
        self.assertEqual(self.runs(out), ["%s /slow 1" % HOST])
        first, again = [json.loads(p) for _, p in b.collect("watcher", mine, 2)]
        self.assertEqual((again["instance"], again["seqnum"], again["redelivered"]),
                         (first["instance"], first["seqnum"], True))
        self.assertFalse(first["redelivered"])
        # the killed keventd's handler and the new one's: one reads the
        # gate's "go", the other its end (no writer left)
        self.s.gates.release("g")
        self.assertEqual(sorted([self.s.fifo.line(), self.s.fifo.line()]), ["end g", "nogo g"])
        pub.stop_ok(self)
        central.stop_ok(self)

    def test_inbound_while_stopping_is_kept_for_the_next_start(self):
        """A keventd that is stopping (SIGTERM, a handler still running)
        reads no more from the broker: libmosquitto would acknowledge what
        it read, and nothing is taken then, so the broker keeps the message
        and the next start runs it, once."""
        b = self.broker(extra="log_type debug\n").start()
        out = self.s.path("out", "runs")
        rec = self.s.script("record.sh", "#!/bin/sh\nprintf '%s\\n' \"$KEVENT_OBJECT\" >>\"$1\"\n")
        self.s.write_rule("10-fleet.yaml", """rules:
  - name: gate
    match: {source: mqtt, signal: gate}
    run: %s
  - name: rec
    match: {source: mqtt, signal: high}
    run: [%s, %s]
""" % (self.h("wait", self.s.fifo.path, self.s.gates.path("g"), "g"), kdtest.yq(rec),
       kdtest.yq(out)))
        state = self.s.path("central-state")
        d = self.central(b, ["fleet/+/power/#"], "--state-dir", state)

        def ev(obj, sig):
            return json.dumps({"seqnum": 1, "source": "socket", "type": "power", "object": obj,
                               "signal": sig, "host": "h7", "instance": "00000000000000c1"})
        b.publish("fleet/h7/power/gate/held", ev("/held", "gate"))
        self.assertEqual(self.s.fifo.line().split()[:2], ["start", "g"])
        d.proc.send_signal(signal.SIGTERM)
        d.wait_log("stopping; handlers running: 1")
        # sent to the stopping keventd's socket, which it does not read
        b.publish("fleet/h7/power/high/late", json.dumps(dict(json.loads(ev("/late", "high")),
                                                              seqnum=2)))
        b.wait_log("Sending PUBLISH to kd-central.yaml", 2)
        self.s.gates.release("g")
        self.assertEqual(self.s.fifo.line(), "end g")
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertEqual(b.logtext().count("Received PUBACK from kd-central.yaml"), 1)
        d = self.central(b, ["fleet/+/power/#"], "--state-dir", state)
        st = d.wait_status(lambda st: st["mqtt"]["received"] == 1
                           and st["events"]["pending"] == 0, "the late message")
        self.assertEqual(st["mqtt"]["duplicates"], 0)
        self.assertEqual(self.runs(out), ["/late"])
        d.stop_ok(self)

    def test_malformed_rejected_and_counted(self):
        b = self.broker().start()
        d = self.central(b, [("fleet/#", 2)])
        ok = {"type": "power", "object": "/a", "signal": "s", "host": "h1"}

        def but(**kw):
            e = dict(ok)
            for k, v in kw.items():
                if v is None:
                    e.pop(k)
                else:
                    e[k] = v
            return json.dumps(e).encode()
        bad = [b"", b"not json", b"[1,2]", b'{"type":"power"', b"{} {}",
               but(object=None), but(type="heat"), but(object="no-slash"),
               but(signal="s p"), but(signal="s" * 65), but(object="/" + "o" * 1024),
               but(payload="p" * 4001), but(host=None), but(host="a b"), but(host=7),
               but(host="h" * 254), but(seqnum="1"), but(payload_base64="!!"),
               b'{"type":"power","object":"/a\u0000","signal":"s","host":"h1"}',
               b"{" + b" " * (64 * 1024) + b"}"]
        self.assertEqual(len(bad), 20)
        for i, m in enumerate(bad):
            path = self.s.path("bad-%d" % i)
            with open(path, "wb") as f:
                f.write(m)
            b.publish("fleet/h1/power/s/a", None, extra=["-f", path])
        # a keventd's status is neither an event nor a mistake
        b.publish("fleet/h9/status", "online")
        b.publish("fleet/h1/power/s/a", json.dumps(ok))
        st = d.wait_status(lambda st: st["sources"]["mqtt"]["rejected"] == 20 and
                           st["sources"]["mqtt"]["received"] == 1, "20 rejected, 1 received")
        self.assertEqual(st["mqtt"]["received"], 1)
        log = d.logtext()
        self.assertIn("mqtt: rejected input: no host\n", log)
        self.assertIn("mqtt: rejected input: message larger than 64 KiB\n", log)
        d.stop_ok(self)

    def test_inbound_host_is_the_topics(self):
        """A host the broker lets write under fleet/host17/ only cannot speak
        as host42: its message claiming host42 is refused, counted and
        logged at a bounded rate, and never runs; host42's own event with the
        same (instance, seqnum) runs, and so does host17's own: the table of
        messages taken is per host of the topic."""
        b = self.broker().start()
        out = self.recorder()
        d = self.central(b, ["fleet/+/power/#"], "--state-dir", self.s.path("central-state"))

        def ev(host, obj="/x", seqnum=7):
            return json.dumps({"seqnum": seqnum, "source": "kernel", "type": "power",
                               "object": obj, "signal": "high", "host": host,
                               "instance": "00000000000000a1"})
        # host17, on its own topics, sends host42's next event first, and
        # 29 more as host42: one mosquitto_pub, a message a line
        lies = [ev("host42")] + [ev("host42", "/y", seqnum=100 + i) for i in range(29)]
        r = subprocess.run([mqttbroker.PUB] + b.sub_args() +
                           ["-q", "1", "-t", "fleet/host17/power/high/x", "-l"],
                           input="\n".join(lies) + "\n", capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        st = d.wait_status(lambda st: st["sources"]["mqtt"]["rejected"] == 30,
                           "30 rejected")
        # then host42's real event, and host17's own of the same numbers
        b.publish("fleet/host42/power/high/x", ev("host42"))
        b.publish("fleet/host17/power/high/x", ev("host17"))
        st = d.wait_status(lambda st: st["mqtt"]["received"] == 2
                           and st["events"]["pending"] == 0, "2 received and handled")
        self.assertEqual((st["mqtt"]["duplicates"], st["sources"]["mqtt"]["received"],
                          st["sources"]["mqtt"]["rejected"]), (0, 2, 30))
        self.assertEqual(sorted(self.runs(out)), ["host17 /x 7", "host42 /x 7"])
        log = d.logtext()
        why = "mqtt: rejected input: the message's host is not its topic's\n"
        # at a bounded rate: 20 lines, then a word about the rest
        self.assertEqual(log.count(why), 20, log)
        # and in keventctl status: received, recovered, redelivered, rejected
        self.assertRegex(d.ctl("status", check=0).stdout, r"(?m)^mqtt +2 +0 +0 +30 ")
        d.stop_ok(self)
        # a subscription that names no host level is refused at start
        bad = self.config(b, "  subscribe: [fleet/#]\n", name="nohost.yaml")
        r = subprocess.run([kdtest.KEVENTCTL, "verify", "--config", bad, self.s.rules],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("mqtt: topic filter \"fleet/#\" names no host: the level of its first "
                      "'+' is the host, or say which level is with {filter: \"fleet/#\", "
                      "host_level: N}", r.stdout + r.stderr)
        r = subprocess.run([kdtest.KEVENTD, "--config", bad, "--rules-dir", self.s.rules,
                            "--control", self.s.path("ctl-nohost"), "--state-dir",
                            self.s.path("state-nohost")],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("names no host", r.stdout + r.stderr)

    def test_fleet_of_50(self):
        b = self.broker().start()
        count = self.s.path("out", "count")
        self.s.write_rule("10-central.yaml", r"""
rules:
  - name: any-host
    match: {source: mqtt, type: general}
    run: [/bin/sh, -c, 'echo "$KEVENT_HOST $KEVENT_OBJECT $KEVENT_SIGNAL" >> %s']
""" % count)
        # all 50 on this machine: its host name under fleet/, each its own
        # prefix under it
        central = self.central(b, ["fleet/+/+/general/#"], "--history", "0")
        hosts, procs = [], []
        n_hosts, per_host = 50, 200
        for i in range(n_hosts):
            ctl = self.s.path("ctl-%d" % i)
            conf = self.config(b, name="h%d.yaml" % i, prefix="fleet/%s/h%d" % (HOST, i))
            d = self.start("--config", conf, "--control", ctl, "--history", "0",
                           "--max-children", "1", "--queue-size", "256")
            hosts.append((d, ctl))
        # every sender its own object: the host name is the machine's, the
        # same for all 50, so the object is what tells them apart centrally
        for i, (d, ctl) in enumerate(hosts):
            batch = self.batch(per_host, "/burst/h%d" % i, name="h%d" % i)
            procs.append(subprocess.Popen([kdtest.KEVENTCTL, "--control", ctl, "send",
                                           "--batch", batch], stdin=subprocess.DEVNULL))
        for p in procs:
            self.assertEqual(p.wait(TIMEOUT), 0)
        total = n_hosts * per_host
        st = central.wait_status(
            lambda st: st["rules"][0]["runs"] == total and st["events"]["pending"] == 0,
            # 10,000 handler runs: over 120 s once under ASan beside a CPU
            # hog and a QEMU guest on 2 CPUs
            "%d runs of any-host" % total, timeout=300)
        self.assertEqual(st["sources"]["mqtt"]["received"], total)
        self.assertEqual(st["runs"]["failures"], 0)
        with open(count) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), total)
        per = {}
        for l in lines:
            host, obj, sig = l.split()
            self.assertEqual(host, HOST)  # the host name is the sender machine's
            per.setdefault(obj, []).append(sig)
        # each sender's 200, each event once
        self.assertEqual(sorted(per), sorted("/burst/h%d" % i for i in range(n_hosts)))
        for obj, sigs in per.items():
            self.assertEqual(sorted(sigs), sorted("n%d" % i for i in range(per_host)), obj)
        central.stop_ok(self)

    def openssl(self, *args):
        r = subprocess.run(["openssl"] + list(args), capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)

    def make_ca(self, name):
        """A CA of the test's own: NAME.key and NAME.pem."""
        key, pem = self.s.path(name + ".key"), self.s.path(name + ".pem")
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
                     "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", pem,
                     "-days", "2", "-subj", "/CN=%s" % name)
        return key, pem

    def make_cert(self, ca, name, san=None):
        """A certificate signed by ca (key, pem): NAME.key and NAME.pem."""
        key, pem = self.s.path(name + ".key"), self.s.path(name + ".pem")
        csr, ext = self.s.path(name + ".csr"), self.s.path(name + ".ext")
        self.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                     "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=%s" % name)
        with open(ext, "w") as f:
            f.write("subjectAltName=%s\n" % san if san else "basicConstraints=CA:FALSE\n")
        self.openssl("x509", "-req", "-in", csr, "-CA", ca[1], "-CAkey", ca[0],
                     "-CAcreateserial", "-out", pem, "-days", "2", "-extfile", ext)
        os.chmod(key, 0o600)
        return key, pem

    def tls_config(self, b, name, extra):
        path = self.config(b, extra, name=name)
        with open(path) as f:
            text = f.read().replace("url: mqtt://", "url: mqtts://")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_tls(self):
        ca = self.make_ca("ca")
        other = self.make_ca("other-ca")
        server = self.make_cert(ca, "server", "IP:127.0.0.1")
        client = self.make_cert(ca, "client")
        b = self.broker(tls=(ca[1], server[1], server[0]),
                        extra="require_certificate true\n").start()
        # a CA that did not sign the broker's certificate: refused, and why
        d = self.start("--config", self.tls_config(
            b, "wrong-ca.yaml", "  ca_file: %s\n  cert_file: %s\n  key_file: %s\n"
            % (other[1], client[1], client[0])))
        d.wait_log("mqtt: cannot connect to 127.0.0.1:%d: TLS: " % b.port)
        self.assertIn("certificate verify failed", d.logtext())
        self.assertFalse(self.mqtt(d)["connected"])
        d.stop_ok(self)
        # the right CA, and the client's certificate the broker asks for
        d = self.start("--config", self.tls_config(
            b, "right-ca.yaml", "  ca_file: %s\n  cert_file: %s\n  key_file: %s\n"
            % (ca[1], client[1], client[0])))
        d.wait_log("mqtt: connected to 127.0.0.1:%d as kd-right-ca.yaml" % b.port)
        d.send("general", "/tls", "x")
        self.wait_mqtt(d, lambda m: m["acknowledged"] == 1, "one acknowledged over TLS")
        d.stop_ok(self)
        # without a client certificate, the broker hangs up
        d = self.start("--config", self.tls_config(b, "no-cert.yaml",
                                                   "  ca_file: %s\n" % ca[1]))
        d.wait_log("mqtt: cannot connect to 127.0.0.1:%d" % b.port)
        self.assertFalse(self.mqtt(d)["connected"])
        d.stop_ok(self)

    def test_wrong_password_backs_off(self):
        pwfile = self.s.path("broker-passwords")
        r = subprocess.run(["mosquitto_passwd", "-c", "-b", pwfile, "host1", "right"],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        b = self.broker(extra="allow_anonymous false\npassword_file %s\n" % pwfile).start()
        pw = self.s.path("pw")
        with open(pw, "w") as f:
            f.write("wrong\n")
        os.chmod(pw, 0o600)
        t0 = time.monotonic()
        d = self.start("--config", self.config(
            b, "  username: host1\n  password_file: %s\n" % pw, name="pw.yaml"))
        d.wait_log("mqtt: cannot connect to 127.0.0.1:%d: Connection Refused: not authorised"
                   % b.port)
        # a password over mqtt://: said at start, and by keventctl verify
        self.assertIn("mqtt: the broker's password is sent over mqtt://, in clear text",
                      d.logtext())
        r = subprocess.run([kdtest.KEVENTCTL, "verify", "--config", self.s.path("pw.yaml"),
                            self.s.rules], capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("%s:2:8: warning: mqtt: the broker's password is sent over mqtt://"
                      % self.s.path("pw.yaml"), r.stdout)
        self.wait_mqtt(d, lambda m: m["connection_attempts"] >= 3, "3 attempts")
        elapsed = time.monotonic() - t0
        self.assertGreaterEqual(elapsed, 1.5)  # 0.5 s, then 1 s: a backoff
        self.assertLessEqual(self.mqtt(d)["connection_attempts"], 2 + elapsed / 0.5)
        self.assertEqual(d.logtext().count("not authorised"), 1, d.logtext())
        d.stop_ok(self)
        # the right one
        with open(pw, "w") as f:
            f.write("right\n")
        d = self.start("--config", self.s.path("pw.yaml"))
        d.wait_log("mqtt: connected to 127.0.0.1:%d" % b.port)
        d.stop_ok(self)

    def test_backoff_while_away(self):
        b = self.broker()  # never started: nothing listens on its port
        t0 = time.monotonic()
        d = self.start("--config", self.config(b))
        d.wait_log("mqtt: cannot connect to 127.0.0.1:%d: Connection refused" % b.port)
        self.wait_mqtt(d, lambda m: m["connection_attempts"] >= 4, "4 attempts")
        elapsed = time.monotonic() - t0
        # 0.5 + 1 + 2 s between the four: a backoff, not a busy loop
        self.assertGreaterEqual(elapsed, 3.5)
        n = self.mqtt(d)["connection_attempts"]
        self.assertLessEqual(n, 2 + elapsed / 0.5)
        # said once per outage, not once per attempt
        self.assertEqual(d.logtext().count("cannot connect to"), 1, d.logtext())
        # and it connects once the broker is there
        b.start()
        self.wait_mqtt(d, lambda m: m["connected"], "connected")
        d.stop_ok(self)

    def test_publish_matched_and_qos0(self):
        b = self.broker().start()
        b.session("watcher", "fleet/#")
        self.s.write_rule("10-m.yaml", "rules:\n  - match: {signal: hit}\n    run: [/bin/true]\n")
        d = self.start("--config", self.config(b, "  publish: matched\n  qos: 0\n"))
        d.wait_log("mqtt: connected")
        d.send("general", "/m", "miss")
        d.send("general", "/m", "hit")
        d.wait_idle(2)
        got = b.collect("watcher", "fleet/#", 2)
        self.assertEqual([t for t, _ in got], ["fleet/h1/status", "fleet/h1/general/hit/m"])
        st = self.mqtt(d)
        self.assertEqual((st["published"], st["acknowledged"], st["spooled"]), (1, 0, 0))
        d.stop_ok(self)

    def test_password_file_others_may_read(self):
        b = self.broker()
        pw = self.s.path("pw")
        with open(pw, "w") as f:
            f.write("secret\n")
        os.chmod(pw, 0o640)
        conf = self.config(b, "  username: u\n  password_file: %s\n" % pw)
        # refused, the password never read, and no connection: publishing is
        # off, and keventd goes on
        d = self.start("--config", conf)
        self.assertIn("mqtt: the password file may be read by group or others (chmod 600 it)",
                      d.logtext())
        st = self.mqtt(d)
        self.assertFalse(st["connected"])
        self.assertTrue(st["publishing"].startswith(
            "off (the password file may be read by group or others (chmod 600 it): %s: "
            "Permission denied; no connection to the broker" % pw), st["publishing"])
        self.assertEqual(st["connection_attempts"], 0)
        d.send("general", "/x", "y")
        self.assertEqual(d.wait_idle(1)["mqtt"]["published"], 0)
        d.stop_ok(self)


if __name__ == "__main__":
    kdtest.main()

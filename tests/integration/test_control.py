#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The control socket and keventctl send/monitor/status (keventd(8), keventctl(8)):
admission, hostile clients, rejected events, monitor, counters, SIGTERM."""
import json
import re
import os
import select
import shutil
import signal
import socket
import subprocess
import time

import kdtest
from kdtest import DaemonTest, Raw, TIMEOUT


def read_line(proc, stream, timeout=TIMEOUT):
    """One line from a child's pipe, bounded."""
    f = getattr(proc, stream)
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        r, _, _ = select.select([f], [], [], kdtest.deadline_left(deadline))
        if not r:
            raise AssertionError("no line on %s within %.0fs (got %r)" % (stream, timeout, buf))
        c = os.read(f.fileno(), 1)
        if not c:
            raise AssertionError("%s closed (got %r)" % (stream, buf))
        buf += c
    return buf.decode().rstrip("\n")


class Control(DaemonTest):
    def simple_rule(self):
        self.s.write_rule("10-a.yaml", "rules:\n  - name: a\n    match: {signal: x}\n    run: %s\n"
                          % self.h("append", self.s.path("out", "log"), "${KEVENT_OBJECT}",
                                   self.s.fifo.path))

    def test_unprivileged_peer_refused(self):
        if not kdtest.IS_ROOT or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv")
        self.simple_rule()
        d = self.start()
        self.assertEqual(os.stat(self.s.ctl).st_mode & 0o777, 0o600)
        os.chmod(self.s.ctl, 0o666)  # reachable, so SO_PEERCRED decides
        nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        r = d.ctl("send", "general", "/evil", "x", prefix=nobody)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("permission denied", r.stderr)
        r = d.ctl("status", prefix=nobody)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        st = d.status()
        self.assertEqual(st["control"]["refused"], 2)
        self.assertEqual(st["events"]["received"], 0)
        self.assertIn("refused peer", d.logtext())
        d.send("general", "/ok", "x")
        self.assertEqual(self.s.fifo.line(), "done /ok")
        d.stop_ok(self)

    def test_control_group_admitted(self):
        if not kdtest.IS_ROOT or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv")
        import grp
        try:
            gid = grp.getgrnam("nogroup").gr_gid
            grp.getgrnam("daemon")
        except KeyError:
            self.skipTest("needs the groups nogroup and daemon")
        self.simple_rule()
        d = self.start("--control-group", "nogroup")
        st = os.stat(self.s.ctl)
        self.assertEqual((st.st_mode & 0o777, st.st_gid), (0o660, gid))
        as_member = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        as_supplementary = ["setpriv", "--reuid=nobody", "--regid=daemon", "--groups=nogroup"]
        for who in (as_member, as_supplementary):
            r = d.ctl("send", "general", "/grp", "x", prefix=who)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.s.fifo.line(), "done /grp")
        os.chmod(self.s.ctl, 0o666)  # so that only SO_PEERCRED stands in the way
        r = d.ctl("status", prefix=["setpriv", "--reuid=nobody", "--regid=daemon", "--clear-groups"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("permission denied", r.stderr)
        st = d.status()
        self.assertEqual(st["control"]["refused"], 1)
        self.assertEqual(st["events"]["received"], 2)
        d.stop_ok(self)

    def test_stuck_client_does_not_block_others(self):
        self.simple_rule()
        d = self.start()
        stuck = self.raw()
        stuck.sock.setblocking(False)
        req = Raw.encode("status", "json")
        sent = 0
        try:
            for _ in range(100000):
                stuck.sock.send(req)
                sent += 1
        except BlockingIOError:
            pass  # both directions full: keventd stopped reading it
        self.assertGreater(sent, 100)
        # others are served meanwhile
        for i in range(3):
            d.send("general", "/other/%d" % i, "x")
        self.assertEqual(sorted(self.s.fifo.lines(3)), ["done /other/%d" % i for i in range(3)])
        # the stuck one and the status query itself (the senders' hang-ups may lag)
        d.wait_status(lambda st: st["control"]["clients"] == 2, "two clients")
        mon = self.raw()
        self.assertEqual(mon.request("monitor", "json")[0], "ok")
        d.send("general", "/other/9", "x")
        self.assertEqual(json.loads(mon.recv()[1])["object"], "/other/9")
        mon.close()
        stuck.close()
        d.wait_status(lambda st: st["control"]["clients"] == 1, "the stuck client gone")
        d.stop_ok(self)

    def test_garbage_and_oversize_messages(self):
        self.simple_rule()
        d = self.start()
        g = self.raw()
        bad = [
            b"send\0general\0/x\0x",              # not NUL-terminated
            b"\0" * 20,                            # too many fields
            Raw.encode(*["f"] * 9),               # too many fields
            os.urandom(512).replace(b"\0", b"\1") + b"\0\xff",  # random bytes
            b"x" * 20000,                          # oversize (over 8192)
            Raw.encode("frobnicate"),             # unknown command
            Raw.encode("send", "general"),        # too few fields
        ]
        for msg in bad:
            g.send_raw(msg)
        replies = []
        for msg in bad:
            replies.append(g.reply())
        for kind, text, _ in replies:
            self.assertEqual(kind, "err", replies)
        self.assertIn("message too long", [t for _, t, _ in replies])
        # the same connection still works, and so do others
        self.assertEqual(g.request("send", "general", "/g", "x", "")[0], "ok")
        self.assertEqual(self.s.fifo.line(), "done /g")
        d.send("general", "/h", "x")
        self.assertEqual(self.s.fifo.line(), "done /h")
        st = d.status()
        self.assertEqual(st["control"]["bad_requests"], len(bad))
        # an empty message is refused like any other bad one, and is not
        # mistaken for the end of the connection
        e = self.raw()
        e.send_raw(b"")
        self.assertEqual(e.reply()[:2], ("err", "empty message"))
        self.assertEqual(e.request("status", "text")[0], "ok")
        self.assertEqual(d.status()["control"]["bad_requests"], len(bad) + 1)
        # while an empty message followed by a hang-up is the end
        e.send_raw(b"")
        e.sock.shutdown(socket.SHUT_WR)
        d.wait_status(lambda st: st["control"]["clients"] == 2, "the hung-up client gone")
        self.assertEqual(g.request("status", "text")[0], "ok")
        d.stop_ok(self)

    def test_random_garbage_flood(self):
        d = self.start()
        clients = [self.raw() for _ in range(4)]
        for c in clients:
            c.sock.setblocking(False)
        for i in range(200):
            c = clients[i % 4]
            n = 1 + (i * 7919) % 9000
            try:
                c.sock.send(os.urandom(n))
            except BlockingIOError:
                pass
        for c in clients:
            c.sock.shutdown(socket.SHUT_WR)
            c.close()
        d.send("general", "/alive", "x")
        st = d.wait_status(lambda st: st["control"]["clients"] == 1, "the garbage clients gone")
        self.assertGreater(st["control"]["bad_requests"], 0)
        self.assertEqual(st["events"]["received"], 1)
        d.stop_ok(self)

    def test_too_many_clients(self):
        d = self.start()
        held = [self.raw() for _ in range(64)]
        # the kernel accepts the connection; keventd answers and closes it
        extra = self.raw()
        kind, text, _ = extra.reply()
        self.assertEqual((kind, text), ("err", "too many clients"))
        self.assertIsNone(extra.recv())
        for c in held:
            c.close()
        # keventd may see a new connection before the hang-ups: refused, counted, retried
        refused = 1
        deadline = time.monotonic() + TIMEOUT
        while True:
            r = d.ctl("status", "--json")
            if r.returncode == 0:
                st = json.loads(r.stdout)
                if st["control"]["clients"] == 1:
                    break
            else:
                self.assertIn("too many clients", r.stderr)
                refused += 1
            self.assertTrue(kdtest.deadline_left(deadline), "clients never went away")
            time.sleep(0.02)  # polling interval
        self.assertEqual(st["control"]["over_limit"], refused)
        d.stop_ok(self)

    def test_invalid_events_rejected(self):
        self.simple_rule()
        d = self.start()
        cases = [
            ("nosuchtype", "/x", "x", None),
            ("general", "relative", "x", None),
            ("general", "/x", "bad signal", None),
            ("general", "/x", "", None),
            ("general", "/x", "s" * 65, None),
            ("general", "/" + "o" * 1024, "x", None),
            ("general", "/x\x01y", "x", None),
            ("general", "/x", "x", "p" * 4001),
        ]
        for t, o, sig, p in cases:
            args = ["send", t, o, sig] + ([p] if p is not None else [])
            r = d.ctl(*args)
            self.assertEqual(r.returncode, 1, (args[:4], r.stderr))
            self.assertIn("invalid event", r.stderr)
        # at the limits: accepted
        d.send("general", "/" + "o" * 1023, "s" * 64, "p" * 4000)
        d.ctl("send", "general", "/stdin", "x", "-", input="K: from stdin\n", check=0)
        self.assertEqual(sorted(self.s.fifo.lines(1)), ["done /stdin"])
        st = d.wait_idle(2)
        self.assertEqual(st["sources"]["socket"]["rejected"], len(cases))
        self.assertEqual(st["events"]["rejected"], len(cases))
        self.assertEqual(st["events"]["received"], 2)
        self.assertEqual(st["runs"]["started"], 1)
        self.assertEqual(d.logtext().count("socket: rejected input:"), len(cases))
        d.stop_ok(self)

    def test_post_is_answered_only_when_it_fails(self):
        self.simple_rule()
        d = self.start()
        g = self.raw()
        posts = [
            ("post", "general", "/p1", "x", ""),
            ("post", "nosuchtype", "/p2", "x", ""),
            ("post", "general", "/p3", "x"),
            ("post", "general"),
            ("post", "general", "/p5", "x", "K: v"),
        ]
        for p in posts:
            g.send_raw(g.encode(*p))
        g.send_raw(g.encode("sync"))
        # the errors name the post they are about, in order, then sync says
        # how many posts it has read: all of them are in
        self.assertEqual(g.recv(), ["err", "post 2: invalid event: unknown event type"])
        self.assertEqual(g.recv(), ["err", "post 4: post takes TYPE OBJECT SIGNAL [PAYLOAD]"])
        self.assertEqual(g.recv(), ["ok", "5"])
        self.assertEqual(sorted(self.s.fifo.lines(3)), ["done /p1", "done /p3", "done /p5"])
        self.assertEqual(sorted(self.s.read("out", "log").split()), ["/p1", "/p3", "/p5"])
        st = d.wait_idle(3)
        self.assertEqual(st["sources"]["socket"]["rejected"], 1)
        self.assertEqual(st["control"]["bad_requests"], 1)
        # nothing else is queued for this client: successes are silent, so
        # the answer to another sync is the next message
        g.send_raw(g.encode("sync"))
        self.assertEqual(g.recv(), ["ok", "5"])
        d.stop_ok(self)

    def test_post_replies_reach_a_client_that_shut_down_writing(self):
        self.simple_rule()
        d = self.start()
        g = self.raw()
        g.send_raw(g.encode("post", "general", "/h1", "x", ""))
        g.send_raw(g.encode("post", "nosuchtype", "/h2", "x", ""))
        g.send_raw(g.encode("sync"))
        g.sock.shutdown(socket.SHUT_WR)  # done sending; the answers still come
        self.assertEqual(g.recv(), ["err", "post 2: invalid event: unknown event type"])
        self.assertEqual(g.recv(), ["ok", "2"])
        self.assertIsNone(g.recv())  # and then keventd closes its side
        self.assertEqual(self.s.fifo.line(), "done /h1")
        d.wait_status(lambda st: st["control"]["clients"] == 1, "the client gone")
        d.stop_ok(self)

    def test_everything_before_a_hang_up_is_taken(self):
        # an empty message in the stream, then posts, then the end
        self.s.write_rule("10-f.yaml", "rules:\n  - name: f\n    match: {signal: f}\n")
        d = self.start()
        g = self.raw()
        g.send_raw(g.encode("post", "general", "/e0", "f", ""))
        g.send_raw(b"")
        for i in range(1, 11):
            g.send_raw(g.encode("post", "general", "/e%d" % i, "f", ""))
        g.close()
        st = d.wait_status(lambda st: st["events"]["received"] == 11 and
                           st["control"]["clients"] == 1, "the 11 posts in, the client gone")
        self.assertEqual(st["events"]["matched"], 11)
        self.assertEqual(st["control"]["bad_requests"], 1)
        d.stop_ok(self)

    def test_hang_up_with_unread_replies_loses_no_post(self):
        # A client that hangs up without reading its replies makes the
        # kernel report ECONNRESET on keventd's side before the requests
        # still queued there: they are taken all the same.  keventd is
        # stopped while the client sends, so they are sure to be queued.
        self.s.write_rule("10-f.yaml", "rules:\n  - name: f\n    match: {signal: f}\n")
        d = self.start()
        g = self.raw()
        g.send_raw(b"")  # an error reply that the client never reads
        select.select([g.sock], [], [], TIMEOUT)
        self.assertTrue(g.sock.recv(16384, socket.MSG_PEEK))
        d.proc.send_signal(signal.SIGSTOP)
        os.waitpid(d.proc.pid, os.WUNTRACED)
        for i in range(10):
            g.send_raw(g.encode("post", "general", "/u%d" % i, "f", ""))
        g.close()
        d.proc.send_signal(signal.SIGCONT)
        st = d.wait_status(lambda st: st["events"]["received"] == 10 and
                           st["control"]["clients"] == 1, "the 10 posts in, the client gone")
        self.assertEqual(st["events"]["matched"], 10)
        self.assertEqual(st["control"]["bad_requests"], 1)
        d.stop_ok(self)

    def test_posts_are_numbered_even_when_unreadable(self):
        d = self.start()
        g = self.raw()
        g.send_raw(g.encode("post", "general", "/n1", "x", "p" * 9000))  # too long to read
        g.send_raw(b"post\0general\0/n2")                                # not NUL-terminated
        g.send_raw(g.encode("post", "general", "relative", "x", ""))     # invalid event
        g.send_raw(g.encode("sync"))
        self.assertEqual(g.recv(), ["err", "post 1: message too long"])
        self.assertEqual(g.recv(), ["err", "post 2: malformed message"])
        self.assertEqual(g.recv(), ["err", "post 3: invalid event: object must start with '/'"])
        self.assertEqual(g.recv(), ["ok", "3"])
        d.stop_ok(self)

    def test_rejection_flood_is_counted_but_not_all_logged(self):
        d = self.start()
        g = self.raw()
        n = 200
        for i in range(n):
            g.send_raw(g.encode("post", "general", "relative/%d" % i, "x", ""))
        g.send_raw(g.encode("sync"))
        for i in range(n):
            self.assertEqual(g.recv(), ["err", "post %d: invalid event: object must start with '/'"
                                        % (i + 1)])
        self.assertEqual(g.recv(), ["ok", str(n)])
        st = d.status()
        self.assertEqual(st["sources"]["socket"]["rejected"], n)
        self.assertEqual(st["events"]["received"], 0)
        log = d.logtext()
        self.assertEqual(log.count("socket: rejected input:"), 20)
        self.assertEqual(log.count("socket: 20 rejected inputs in 5s: the next ones are counted "
                                   "in status but not logged, for now"), 1)
        # keventd still takes good events from the same client
        self.assertEqual(g.request("send", "general", "/after", "x", "")[0], "ok")
        d.stop_ok(self)

    def test_send_batch(self):
        self.simple_rule()
        out = self.s.path("out", "report.json")
        self.s.write_rule("20-r.yaml", "rules:\n  - name: r\n    match: {signal: y}\n    run: %s\n"
                          % self.h("report", out, self.s.fifo.path, "report"))
        self.s.write_rule("30-f.yaml", "rules:\n  - name: f\n    match: {signal: f}\n")
        d = self.start("--queue-size", "8")
        batch = self.s.path("out", "events.tsv")
        with open(batch, "w") as f:
            f.write("# TYPE OBJECT SIGNAL PAYLOAD\n"
                    "general\t/b 1\tx\n"
                    "\n"
                    "nosuchtype\t/b2\tx\n"
                    "general\t/b3\n"
                    "general\t/b4\ty\tK: a\\tb\\nL: c\\\\\n"
                    "general\t/b\\q5\tx\n"
                    "general\t/b6\tx")  # no newline at the end
        r = d.ctl("send", "--batch", batch)
        self.assertEqual(r.returncode, 1, r.stderr)
        # keventd's refusals arrive while keventctl reads on, so they and
        # keventctl's own errors interleave as the timing goes; the summary
        # comes last
        errors = r.stderr.splitlines()
        self.assertEqual(errors[-1], "4 event(s) posted, 3 line(s) failed")
        self.assertEqual(sorted(errors[:-1]), [
            batch + ":4: keventd: invalid event: unknown event type",
            batch + ":5: error: needs TYPE, OBJECT and SIGNAL, separated by tabs",
            batch + ":7: error: unknown escape (use \\n, \\t or \\\\)"])
        self.assertEqual(sorted(self.s.fifo.lines(3)), ["done /b 1", "done /b6", "done report"])
        with open(out) as f:
            env = dict(e.split("=", 1) for e in json.load(f)["env"])
        self.assertEqual(env["KEVENT_OBJECT"], "/b4")
        self.assertEqual(env["KEVENT_PAYLOAD"], "K: a\tb\nL: c\\")
        # a storm from stdin into a queue of 8: all taken, none lost
        n = 5000
        r = d.ctl("send", "-v", "--batch", "-",
                  input="".join("general\t/s%d\tf\n" % i for i in range(n)), check=0)
        self.assertEqual(r.stdout, "%d event(s) posted, 0 line(s) failed\n" % n)
        st = d.wait_idle(3 + n)
        self.assertEqual(st["events"]["matched"], 3 + n)
        self.assertEqual(st["sources"]["socket"]["rejected"], 1)
        r = d.ctl("send", "--batch", self.s.path("out", "missing.tsv"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot open", r.stderr)
        r = d.ctl("send", "--batch", batch, "general")
        self.assertEqual(r.returncode, 2)
        self.assertIn("send --batch takes no other arguments", r.stderr)
        d.stop_ok(self)

    def test_monitor_text_and_json(self):
        self.simple_rule()
        self.s.write_rule("20-b.yaml", "rules:\n  - name: filter\n    match: {object: /m*}\n")
        d = self.start()
        mons = []
        for extra in ([], ["--json"]):
            p = subprocess.Popen([kdtest.KEVENTCTL, "--control", self.s.ctl, "monitor"] + extra,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.procs.append(p)
            self.assertIn("monitoring", read_line(p, "stderr"))  # subscribed
            mons.append(p)
        d.send("power", "/mon", "x", "Cpu: 1\nnote")
        d.send("storage", "/none", "y")
        text, js = mons
        # each line after the time it came, in local time (udevadm monitor's habit)
        stamp = r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+ "
        l1 = read_line(text, "stdout")
        self.assertRegex(l1, stamp)
        self.assertEqual(re.sub(stamp, "", l1),
                         "socket seq=1 power /mon x payload=\"Cpu: 1\\nnote\" rules=a,filter")
        l2 = read_line(text, "stdout")
        self.assertEqual(re.sub(stamp, "", l2), "socket seq=2 storage /none y payload=\"\" rules=(none)")
        e1 = json.loads(read_line(js, "stdout"))
        self.assertEqual({k: e1[k] for k in ("seqnum", "source", "type", "object", "signal", "payload",
                                               "properties", "rules")},
                         {"seqnum": 1, "source": "socket", "type": "power", "object": "/mon",
                          "signal": "x", "payload": "Cpu: 1\nnote", "properties": {"Cpu": "1"},
                          "rules": ["a", "filter"]})
        self.assertIsInstance(e1["timestamp"], int)
        e2 = json.loads(read_line(js, "stdout"))
        self.assertEqual((e2["seqnum"], e2["rules"]), (2, []))
        d.wait_status(lambda st: st["control"]["clients"] == 3, "two monitors and a status query")
        text.send_signal(signal.SIGINT)
        self.assertEqual(text.wait(TIMEOUT), -signal.SIGINT)
        # monitors end cleanly when keventd stops
        self.assertEqual(self.s.fifo.line(), "done /mon")
        d.stop_ok(self)
        self.assertEqual(js.wait(TIMEOUT), 0)

    def test_monitor_shows_events_at_the_size_limits(self):
        """An event at the limits (a 1024-byte object, a 4000-byte payload that
        needs escaping) still reaches every monitor, as one line."""
        self.simple_rule()
        d = self.start()
        text = self.raw()
        js = self.raw()
        self.assertEqual(text.request("monitor", "text")[0], "ok")
        self.assertEqual(js.request("monitor", "json")[0], "ok")
        obj = "/" + "o" * 1023
        payloads = ["Data: " + "x" * 3994, '"' * 4000, "\x01" * 4000, "K: " + "\\" * 3997]
        for p in payloads:
            d.send("general", obj, "x", p)
        for i, p in enumerate(payloads, 1):
            t = text.recv()
            self.assertEqual(t[0], "data")
            self.assertTrue(t[1].startswith("socket seq=%d general %s x payload=" % (i, obj)), t[1][:80])
            self.assertTrue(t[1].endswith(" rules=a"), t[1][-80:])
            j = js.recv()
            self.assertEqual(j[0], "data")
            e = json.loads(j[1])
            self.assertEqual((e["seqnum"], e["object"], e["signal"], e["rules"]), (i, obj, "x", ["a"]))
            self.assertTrue(p.startswith(e["payload"]), "payload shown is not the event's")
        self.assertEqual(len(self.s.fifo.lines(len(payloads))), len(payloads))
        # more matched rules than one line holds: as many as fit, and a mark
        names = ["rule-%03d-%s" % (i, "n" * 52) for i in range(200)]
        self.s.write_rule("20-many.yaml", "rules:\n" + "".join(
            "  - name: %s\n    match: {signal: many}\n" % n for n in names))
        d.ctl("reload", check=0)
        d.send("general", obj, "many")
        t = text.recv()[1]
        self.assertTrue(t.endswith(",..."), t[-80:])
        shown = t.split(" rules=", 1)[1][:-4].split(",")
        self.assertEqual(shown, names[:len(shown)])
        self.assertGreater(len(shown), 50)
        e = json.loads(js.recv()[1])
        self.assertTrue(e["rules_truncated"])
        self.assertEqual(e["rules"], names[:len(e["rules"])])
        d.stop_ok(self)

    def test_status_counters_add_up(self):
        s = self.s
        s.write_rule("10-a.yaml", (
            "rules:\n"
            "  - name: ok\n    match: {signal: ok}\n    run: %s\n"
            "  - name: fail\n    match: {signal: fail}\n    run: [/bin/false]\n"
            "  - name: missing\n    match: {signal: missing}\n    run: [/nonexistent/program]\n"
            "  - name: limited\n    match: {signal: rl}\n    ratelimit: 1/1h\n    run: [/bin/true]\n")
            % self.h("append", s.path("out", "log"), "ok", s.fifo.path))
        d = self.start()
        for sig in ["ok", "ok", "fail", "missing", "rl", "rl", "rl", "nomatch"]:
            d.send("general", "/st", sig)
        self.assertEqual(d.ctl("send", "general", "bad", "x").returncode, 1)
        self.assertEqual(s.fifo.lines(2), ["done ok", "done ok"])
        st = d.wait_idle(8)
        ev, runs = st["events"], st["runs"]
        self.assertEqual(ev["received"], 8)
        self.assertEqual(ev["received"], sum(v["received"] for v in st["sources"].values()))
        kdtest.assert_accounted(self, st)
        self.assertEqual((ev["handled"], ev["ratelimited"], ev["rejected"]), (6, 2, 1))
        self.assertEqual(ev["matched"], 7)
        self.assertEqual(runs["started"], 5)
        self.assertEqual(runs["failures"], 2)
        self.assertEqual(runs["ratelimited"], 2)
        self.assertEqual(runs["timeouts"], 0)
        self.assertEqual(runs["started"], sum(r["runs"] for r in st["rules"]))
        self.assertEqual(runs["failures"], sum(r["failures"] for r in st["rules"]))
        self.assertEqual(runs["ratelimited"], sum(r["ratelimited"] for r in st["rules"]))
        self.assertEqual(st["queue"]["running"], 0)
        self.assertEqual(st["ruleset"], {"rules": 4, "files": 1, "reloads": 0, "reload_errors": 0,
                                         "broken": 0})
        self.assertEqual(st["rules"][0]["file"], s.path("rules", "10-a.yaml"))
        self.assertIn("exited 1 after", d.logtext())
        self.assertIn("cannot run /nonexistent/program", d.logtext())
        text = d.ctl("status", check=0).stdout
        self.assertIn("events: handled 6, rate-limited 2, debounced 0, matched 7", text)
        self.assertIn("rule ok (10-a.yaml): matched 2, runs 2", text)
        d.stop_ok(self)

    def test_sigterm_waits_for_running_handler(self):
        s = self.s
        s.write_rule("10-a.yaml", "rules:\n  - name: slow\n    match: {signal: x}\n    run: %s\n"
                     % self.h("wait", s.fifo.path, s.gates.path("slow"), "slow"))
        d = self.start()
        d.send("general", "/slow", "x")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "slow"])
        d.proc.send_signal(signal.SIGTERM)
        d.wait_notify("STOPPING=1")
        self.assertIsNone(d.proc.poll(), "keventd exited with a handler still running")
        # it stopped reading: no new events
        self.assertEqual(d.ctl("send", "general", "/late", "x").returncode, 1)
        s.gates.release("slow")
        self.assertEqual(s.fifo.line(), "end slow")
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertIn("rule slow[", d.logtext())
        self.assertIn("exited 0 after", d.logtext())
        self.assertFalse(os.path.exists(s.ctl), "control socket left behind")


    def test_sigterm_waits_at_most_the_timeout(self):
        s = self.s
        s.write_rule("10-a.yaml", "rules:\n  - name: hang\n    match: {signal: x}\n    timeout: 400ms\n"
                     "    shell: %s\n" % kdtest.yq("echo start > %s; exec sleep 600" % s.fifo.path))
        d = self.start()
        d.send("general", "/hang", "x")
        self.assertEqual(s.fifo.line(), "start")
        d.proc.send_signal(signal.SIGTERM)
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertRegex(d.logtext(), r"rule hang\[\d+\]: timed out after 400ms, sending SIGTERM")

    def test_sigterm_starts_no_queued_handlers(self):
        """SIGTERM lets the running handler finish but starts nothing that
        was queued: those events stay in the journal for the next start,
        counted per source and named in the log, none dropped; a second
        SIGTERM changes nothing."""
        s = self.s
        s.write_rule("10-a.yaml", "rules:\n  - name: slow\n    match: {signal: x}\n    run: %s\n"
                     % self.h("wait", s.fifo.path, s.gates.dir + "/${KEVENT_SEQNUM}", "${KEVENT_SEQNUM}"))
        for i in (1, 2, 3):
            s.gates.path(str(i))
        d = self.start()
        for _ in range(3):
            d.send("general", "/same", "x")
        self.assertEqual(s.fifo.line().split()[:2], ["start", "1"])
        d.proc.send_signal(signal.SIGTERM)
        d.wait_notify("STOPPING=1")
        d.wait_log("Terminated: stopping; handlers running: 1; queued events not started, "
                   "kept in the journal for the next start: 2 (socket 2)")
        log = d.logtext()
        self.assertIn("not run: socket seq 2: general /same x (rule slow); kept in the journal "
                      "for the next start", log)
        self.assertIn("not run: socket seq 3: general /same x (rule slow); kept in the journal "
                      "for the next start", log)
        self.assertNotIn("dropped", log)
        d.proc.send_signal(signal.SIGTERM)
        d.wait_log("Terminated again: still stopping; handlers running: 1")
        self.assertIsNone(d.proc.poll())
        s.gates.release("1")
        self.assertEqual(s.fifo.line(), "end 1")
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())
        self.assertNotIn("start 2", s.fifo.seen)
        self.assertNotIn("start 3", s.fifo.seen)
        self.assertIn("stopped; events kept in the journal for the next start: 2 (socket 2)",
                      d.logtext())
        self.assertNotIn("dropped", d.logtext())

    def test_sigint_stops_cleanly(self):
        d = self.start()
        d.proc.send_signal(signal.SIGINT)
        self.assertEqual(d.proc.wait(TIMEOUT), 0, d.logtext())

    def test_load_with_reloads_timeouts_and_a_slow_monitor(self):
        """Thousands of events through two clients while rules reload and
        handlers time out; a monitor that does not read loses lines, not the
        daemon its pace; the counters add up; no leak at exit (sanitizer build)."""
        s = self.s
        s.write_rule("10-load.yaml", (
            "rules:\n"
            "  - name: every-tenth\n    match: {payload: {N: \"*0\"}}\n    run: [/bin/true]\n"
            "  - name: hang\n    match: {signal: hang}\n    timeout: 100ms\n    run: [/bin/sleep, \"30\"]\n"
            "  - name: limited\n    match: {signal: x}\n    ratelimit: 5/1h\n    run: [/bin/true]\n"
            "  - name: seen\n    match: {}\n"))
        d = self.start()
        mon = self.raw()
        self.assertEqual(mon.request("monitor", "text")[0], "ok")
        senders = [self.raw(), self.raw()]
        n = 3000
        for i in range(n):
            c = senders[i % 2]
            sig = "hang" if i in (100, 2000) else "x"
            kind, text, _ = c.request("send", "general", "/load/%d" % (i % 37), sig, "N: %d" % i)
            self.assertEqual(kind, "ok", text)
            if i % 700 == 0:
                self.assertEqual(d.ctl("reload").returncode, 0)
            if i == 1500:
                s.write_rule("20-more.yaml", "rules:\n  - name: more\n    match: {signal: none}\n")
        st = d.wait_idle(n, timeout=120)
        ev, runs = st["events"], st["runs"]
        self.assertEqual(ev["handled"] + ev["ratelimited"], n)
        self.assertEqual(runs["timeouts"], 2)
        self.assertEqual(runs["started"], n // 10 + 2 + 5 * 37)
        self.assertEqual(runs["ratelimited"], (n - 2) - 5 * 37)
        self.assertEqual(runs["failures"], 2)
        self.assertEqual(st["rules"][-1]["name"], "more")
        self.assertGreater(st["control"]["monitor_dropped"], 0)
        # the monitor is told what it missed when the next event comes: send
        # markers until one gets through.  A marker's line is queued to the
        # monitor (or dropped) before its send is answered, and the monitor's
        # own sync is answered after what was queued to it: the sync's "ok"
        # says the marker was dropped if its line has not come.
        shown = missed = 0
        for k in range(1, 30):
            d.send("general", "/marker", "m%d" % k)
            mon.send_raw(mon.encode("sync"))
            seen = False
            while True:
                m = mon.recv()
                if m[0] == "ok":
                    break
                self.assertEqual(m[0], "data")
                line = m[1]
                if line.startswith("("):
                    self.assertIn("events not shown: monitor too slow", line)
                    missed += int(line[1:].split()[0])
                    continue
                shown += 1
                seen = seen or "/marker m%d " % k in line
            if seen:
                break
        self.assertTrue(seen, "no marker reached the monitor")
        self.assertEqual(shown + missed, n + k)
        self.assertEqual(missed, d.status()["control"]["monitor_dropped"])
        d.stop_ok(self, timeout=60)


if __name__ == "__main__":
    kdtest.main()

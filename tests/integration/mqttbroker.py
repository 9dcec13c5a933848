# SPDX-License-Identifier: GPL-2.0-or-later
"""A real mosquitto for the MQTT tests: started by the test on 127.0.0.1, on a
free port, with a configuration file of its own in the scratch directory (the
system's service is never touched), and mosquitto_sub/mosquitto_pub runs
against it.  Every wait is bounded, on the broker's log or a client's exit."""
import os
import pwd
import shutil
import socket
import subprocess
import time

from kdtest import TIMEOUT, deadline_left

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
SUB = shutil.which("mosquitto_sub")
PUB = shutil.which("mosquitto_pub")


def available():
    return os.access(MOSQUITTO, os.X_OK) and SUB and PUB


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    def __init__(self, scratch, name="broker", extra="", tls=None):
        self.s = scratch
        self.dir = scratch.mkdir(name)
        self.port = free_port()
        self.conf = os.path.join(self.dir, "mosquitto.conf")
        self.log_path = os.path.join(self.dir, "mosquitto.log")
        self.extra = extra
        self.tls = tls  # (ca, cert, key) of the server, or None
        self.proc = None
        self.starts = 0
        self.write_conf()

    def write_conf(self):
        lines = ["per_listener_settings false",
                 # run as root (by the tests), it would become "mosquitto", who
                 # may not write the scratch directory
                 "user %s" % pwd.getpwuid(os.geteuid()).pw_name,
                 "allow_anonymous true",
                 "persistence true",
                 "persistence_location %s/" % self.dir,
                 "autosave_interval 0",
                 "max_queued_messages 0",  # no bound: the tests count every message
                 "max_inflight_messages 0",
                 "queue_qos0_messages true",
                 "log_dest file %s" % self.log_path,
                 "log_type error", "log_type warning", "log_type notice",
                 "log_type information", "log_type subscribe",
                 "connection_messages true",
                 "listener %d 127.0.0.1" % self.port]
        if self.tls:
            ca, cert, key = self.tls
            lines += ["cafile %s" % ca, "certfile %s" % cert, "keyfile %s" % key]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n" + self.extra)

    def start(self):
        self.starts += 1
        self.log = open(os.path.join(self.dir, "stderr"), "a")
        self.proc = subprocess.Popen([MOSQUITTO, "-c", self.conf], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.wait_log("running", self.starts)
        return self

    def logtext(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_log(self, text, count=1, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while self.logtext().count(text) < count:
            if self.proc.poll() is not None:
                raise AssertionError("mosquitto exited with %s; log:\n%s"
                                     % (self.proc.returncode, self.logtext()))
            if not deadline_left(deadline):
                raise AssertionError("mosquitto never logged %r %d times; log:\n%s"
                                     % (text, count, self.logtext()))
            time.sleep(0.02)  # polling a log file, not a synchronisation

    def stop(self):
        """SIGTERM and wait: the broker saves its sessions first."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(TIMEOUT)
        if getattr(self, "log", None):
            self.log.close()
            self.log = None

    def url(self, scheme="mqtt"):
        return "%s://127.0.0.1:%d" % (scheme, self.port)

    def sub_args(self):
        return ["-h", "127.0.0.1", "-p", str(self.port)]

    def session(self, client_id, topic, extra=()):
        """Makes a lasting session (clean session off, QoS 1) subscribed to topic,
        so that the broker keeps every message for it from now on, while it is
        away, and across the broker's restarts.  Returns once the broker has
        acknowledged the subscription (mosquitto_sub -E)."""
        r = subprocess.run([SUB] + self.sub_args() + list(extra) +
                           ["-c", "-i", client_id, "-q", "1", "-t", topic, "-E"],
                           capture_output=True, text=True, timeout=TIMEOUT)
        if r.returncode != 0:
            raise AssertionError("mosquitto_sub -E: %s%s" % (r.stdout, r.stderr))

    def collect(self, client_id, topic, n, extra=(), timeout=TIMEOUT):
        """The next n messages of the session client_id, as (topic, payload);
        not those retained before it subscribed (-R)."""
        r = subprocess.run([SUB] + self.sub_args() + list(extra) +
                           ["-c", "-i", client_id, "-q", "1", "-t", topic, "-R", "-C", str(n),
                            "-W", str(int(timeout)), "-F", "%t\t%p"],
                           capture_output=True, text=True, timeout=timeout + 5)
        lines = r.stdout.splitlines()
        if len(lines) != n:
            raise AssertionError("mosquitto_sub got %d of %d messages (exit %d, %s):\n%s"
                                 % (len(lines), n, r.returncode, r.stderr,
                                    "\n".join(lines[-5:])))
        return [tuple(l.split("\t", 1)) for l in lines]

    def retained(self, topic, extra=(), wait=TIMEOUT):
        """The retained message of topic (mosquitto_sub -C 1 -W wait)."""
        r = subprocess.run([SUB] + self.sub_args() + list(extra) +
                           ["-t", topic, "-C", "1", "-W", str(int(wait)), "--retained-only"],
                           capture_output=True, text=True, timeout=TIMEOUT + 5)
        return r.stdout.strip()

    def publish(self, topic, payload, extra=()):
        """mosquitto_pub of payload (None: extra says, -f FILE)."""
        r = subprocess.run([PUB] + self.sub_args() + list(extra) +
                           ["-q", "1", "-t", topic] + (["-m", payload] if payload is not None
                                                       else []),
                           capture_output=True, text=True, timeout=TIMEOUT)
        if r.returncode != 0:
            raise AssertionError("mosquitto_pub: %s" % r.stderr)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()

# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared harness for the integration tests: runs the real keventd.

Every test gets a scratch directory (rules, control socket, handler output),
starts keventd with --rules-dir and --control, and waits for READY=1 on a
NOTIFY_SOCKET it binds itself.  Handlers tell the test they are done by
writing to a FIFO the test reads with select(); a handler that must wait for
the test blocks on a "gate" FIFO.  Every wait is bounded; nothing sleeps to
synchronise.  Polling `keventctl status --json` is the one allowed loop, for
things only the daemon knows (inotify reloads, counters).

main() exits 1 when a test failed or none ran, 77 (ctest: skipped; a
failure in a tree configured with KEVENT_STRICT) when one skipped, each
skip named with its reason, 0 when all ran and passed.

Environment: KEVENTD and KEVENTCTL name the binaries (ctest sets them);
KEVENT_TEST_TIMEOUT overrides the bound on each wait (seconds, default 20);
KEVENT_TEST_KEEP=1 keeps the scratch directories.
"""
import errno
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(HERE))
KEVENTD = os.environ.get("KEVENTD") or os.path.join(_REPO, "build", "keventd", "keventd")
KEVENTCTL = os.environ.get("KEVENTCTL") or os.path.join(_REPO, "build", "keventd", "keventctl")
TIMEOUT = float(os.environ.get("KEVENT_TEST_TIMEOUT", "20"))
# handlers run with keventd's fixed PATH and maybe as nobody: a python all can run
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else os.path.realpath(sys.executable)
HANDLER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CANARY = "KEVENT_TEST_CANARY"
IS_ROOT = os.geteuid() == 0

# A handler for every purpose; the first argument says which.
#   report OUT FIFO TAG      write what the handler sees (argv, env, fds...) as JSON
#   append FILE VALUE FIFO   append VALUE to FILE, then tell FIFO
#   wait EVENTS GATE TAG     tell EVENTS "start TAG PID", block until GATE says go
#                            (at most 60 s), tell EVENTS "end TAG" ("nogo TAG" when
#                            the gate ended or the time ran out first)
#   count COUNTER EVENTS GATE TAG   like wait, tracking concurrency in COUNTER
HANDLER = r'''#!@PYTHON@
import os, sys

def probe_fds():
    # fstat, not listdir: listing /proc/self/fd opens a descriptor of its own
    fds = []
    for fd in range(0, 1024):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            pass
    return fds

FDS = probe_fds()

import fcntl, json, select, time

def tell(fifo, line):
    fd = os.open(fifo, os.O_WRONLY)
    os.write(fd, (line + "\n").encode())
    os.close(fd)

def gate(path):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    return fd

def wait_gate(fd):
    # True on "go", False at the gate's end (its writer closed with
    # nothing left) or after 60 s.  Waiters that share a gate all wake at
    # the "go"; the one that reads it second finds the gate empty, and its
    # writer maybe not closed yet (EAGAIN): it waits for the end.
    deadline = time.monotonic() + 60
    while True:
        r, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            return False
        try:
            return os.read(fd, 64) != b""
        except BlockingIOError:
            continue

def counter(path, delta):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    data = os.read(fd, 100).decode().split()
    cur, top = (int(data[0]), int(data[1])) if data else (0, 0)
    cur += delta
    top = max(top, cur)
    os.lseek(fd, 0, 0)
    os.ftruncate(fd, 0)
    os.write(fd, ("%d %d\n" % (cur, top)).encode())
    os.close(fd)

cmd = sys.argv[1]
if cmd == "report":
    out, fifo, tag = sys.argv[2:5]
    with open("/proc/self/environ", "rb") as f:
        env = [e.decode("utf-8", "surrogateescape") for e in f.read().split(b"\0") if e]
    mask = os.umask(0)
    os.umask(mask)
    info = {
        "argv": sys.argv[5:],
        "env": env,
        "cwd": os.getcwd(),
        "umask": mask,
        "fds": FDS,
        "stdin": os.readlink("/proc/self/fd/0"),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "pgid_is_pid": os.getpgid(0) == os.getpid(),
        "sid_is_pid": os.getsid(0) == os.getpid(),
    }
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.rename(tmp, out)
    tell(fifo, "done " + tag)
elif cmd == "append":
    path, value, fifo = sys.argv[2:5]
    with open(path, "a") as f:
        f.write(value + "\n")
    tell(fifo, "done " + value)
elif cmd in ("wait", "count"):
    if cmd == "count":
        ctr = sys.argv[2]
        sys.argv.pop(2)
    events, gpath, tag = sys.argv[2:5]
    g = gate(gpath)
    if cmd == "count":
        counter(ctr, +1)
    tell(events, "start %s %d" % (tag, os.getpid()))
    ok = wait_gate(g)
    if cmd == "count":
        counter(ctr, -1)
    tell(events, ("end %s" if ok else "nogo %s") % tag)
    sys.exit(0 if ok else 3)
else:
    sys.exit(2)
'''


def have_binaries():
    return os.access(KEVENTD, os.X_OK) and os.access(KEVENTCTL, os.X_OK)


def run_tests(**kw):
    """unittest.main(**kw), but the exit status says what ran: 1 when a
    test failed, when no test ran at all (a name or -k pattern that
    matched none) or when a test skipped without a reason; 77 (ctest:
    skipped) when none failed and one was skipped, each skip named with
    its reason at the end; 0 when every test ran and passed.  unittest
    itself exits 0 with skips and (before Python 3.12) with no test run,
    so ctest would show "Passed" for a file that tested nothing."""
    prog = unittest.main(verbosity=2, exit=False, **kw)
    sys.exit(run_status(prog.result))


def run_status(r):
    """The exit status run_tests() gives for the unittest result r."""
    if not r.wasSuccessful():
        return 1
    if r.testsRun == 0 and not r.skipped:  # a class skipped whole runs none
        print("FAIL: no test ran (a name or pattern that matched none?)", file=sys.stderr)
        return 1
    unnamed = [test.id() for test, why in r.skipped if not why.strip()]
    if unnamed:
        print("FAIL: skipped without a reason: %s" % ", ".join(unnamed), file=sys.stderr)
        return 1
    if r.skipped:
        for test, why in r.skipped:
            print("SKIP: %s: %s" % (test.id(), why), file=sys.stderr)
        print("%d of %d tests skipped: exit status 77%s" % (
            len(r.skipped), r.testsRun,
            " (strict mode: a failure)" if os.environ.get("KEVENT_STRICT") == "1" else ""),
            file=sys.stderr)
        return 77
    return 0


def main():
    if not have_binaries():
        print("SKIP: keventd/keventctl not built (set KEVENTD and KEVENTCTL)", file=sys.stderr)
        sys.exit(77)
    run_tests()


def assert_accounted(tc, st):
    """keventctl status's law (keventctl(8)): of the events received, each
    is handled, rate-limited, debounced or still pending, in all and for
    every source."""
    ev = st["events"]
    tc.assertEqual(ev["handled"] + ev["ratelimited"] + ev["debounced"] + ev["pending"],
                   ev["received"], "the events' account: %r" % ev)
    for name, src in st["sources"].items():
        tc.assertEqual(src["handled"] + src["ratelimited"] + src["debounced"] + src["pending"],
                       src["received"], "the account of source %s: %r" % (name, src))


def start_ready(argv, npath, log, env, preexec_fn, what):
    """Starts argv with its output to the file log and NOTIFY_SOCKET=npath
    (a socket of its own there, which any user may send to), and returns
    the process once it says READY=1; AssertionError with its log if it
    exits or stays silent for TIMEOUT."""
    if os.path.exists(npath):
        os.unlink(npath)
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(npath)
    os.chmod(npath, 0o777)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         env=dict(env, NOTIFY_SOCKET=npath), preexec_fn=preexec_fn)
    deadline = time.monotonic() + TIMEOUT
    try:
        while True:
            left = deadline_left(deadline)
            ns.settimeout(min(left, 0.2) or 0.01)
            try:
                if "READY=1" in ns.recv(4096).decode().split("\n"):
                    return p
            except socket.timeout:
                pass
            if p.poll() is not None or not left:
                # read through a description of its own: a keventd still
                # running appends through log's, and moves its offset
                with open(log.name, errors="replace") as f:
                    raise AssertionError("%s: no READY=1 (exit %s); log:\n%s"
                                         % (what, p.poll(), f.read()))
    finally:
        ns.close()


def deadline_left(deadline):
    return max(0.0, deadline - time.monotonic())


class Fifo:
    """A FIFO handlers write lines to; the test reads them with select()."""

    def __init__(self, path):
        self.path = path
        os.mkfifo(path)
        os.chmod(path, 0o666)
        self.r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.w = os.open(path, os.O_WRONLY)  # ours: no EOF between writers
        self.buf = b""
        self.seen = []

    def line(self, timeout=TIMEOUT):
        return self.lines(1, timeout)[0]

    def lines(self, n, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        out = []
        while len(out) < n:
            if b"\n" in self.buf:
                l, self.buf = self.buf.split(b"\n", 1)
                out.append(l.decode())
                self.seen.append(out[-1])
                continue
            left = deadline_left(deadline)
            r, _, _ = select.select([self.r], [], [], left)
            if not r:
                raise AssertionError("timed out after %.0fs waiting for %d line(s) on %s; got %r"
                                     % (timeout, n, self.path, out))
            self.buf += os.read(self.r, 65536)
        return out

    def close(self):
        for fd in (self.r, self.w):
            try:
                os.close(fd)
            except OSError:
                pass


class Gates:
    """One FIFO per tag a "wait" handler blocks on until the test opens it."""

    def __init__(self, dir):
        self.dir = dir
        os.makedirs(dir, exist_ok=True)
        os.chmod(dir, 0o777)

    def path(self, tag):
        p = os.path.join(self.dir, tag)
        if not os.path.exists(p):
            os.mkfifo(p)
            os.chmod(p, 0o666)
        return p

    def release(self, tag):
        # the handler opened its gate before it said "start": a reader exists
        fd = os.open(self.path(tag), os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"go\n")
        os.close(fd)


def _short_tmp():
    d = tempfile.gettempdir()
    return d if len(d) < 40 else "/tmp"


class Scratch:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kevt-", dir=_short_tmp())
        os.chmod(self.dir, 0o755)  # handlers may run as nobody
        self.rules = self.mkdir("rules")
        self.out = self.mkdir("out", 0o777)
        self.ctl = os.path.join(self.dir, "ctl")
        self.handler = self.script("h.py", HANDLER.replace("@PYTHON@", PYTHON))
        self.fifo = Fifo(os.path.join(self.dir, "events"))
        self.gates = Gates(os.path.join(self.dir, "gates"))

    def mkdir(self, name, mode=0o755):
        p = os.path.join(self.dir, name)
        os.makedirs(p, exist_ok=True)
        os.chmod(p, mode)
        return p

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def script(self, name, text):
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o755)
        return p

    def write_rule(self, name, text, dir=None):
        """Writes a rule file atomically (a dot file renamed into place), 0644."""
        dir = dir or self.rules
        tmp = os.path.join(dir, "." + name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, os.path.join(dir, name))
        return os.path.join(dir, name)

    def read(self, *parts):
        with open(os.path.join(self.dir, *parts)) as f:
            return f.read()

    def cleanup(self):
        self.fifo.close()
        if os.environ.get("KEVENT_TEST_KEEP"):
            print("kept scratch directory", self.dir, file=sys.stderr)
            return
        shutil.rmtree(self.dir, ignore_errors=True)


def yq(s):
    """A YAML double-quoted scalar."""
    return json.dumps(s)


class Daemon:
    def __init__(self, scratch, args=(), rules_dirs=None, env=None, journal=False, preexec=None,
                 wrap=(), pass_fds=()):
        self.s = scratch
        self.preexec = preexec  # runs in the child before keventd is exec'd
        self.wrap = list(wrap)  # a program that execs keventd (argv before keventd's)
        self.pass_fds = tuple(pass_fds)  # descriptors the child inherits
        self.journal = journal
        self.args = list(args)
        self.rules_dirs = rules_dirs or [scratch.rules]
        self.extra_env = env or {}
        self.proc = None
        # a test may run several keventds, one after another or side by side
        scratch.daemons = getattr(scratch, "daemons", 0) + 1
        suffix = "" if scratch.daemons == 1 else "-%d" % scratch.daemons
        self.log_path = scratch.path("keventd%s.log" % suffix)
        # the journal and the positions: the test's own, one per keventd
        # unless the test names one (a restart that finds the last journal)
        self.state_dir = scratch.path("state" + suffix)
        # the condition table, likewise (a test names one to keep it)
        self.lib_dir = scratch.path("libdir" + suffix)
        self.notify_path = scratch.path("notify" + suffix)
        self.notes = []
        self.nsock = None

    def start(self):
        npath = self.notify_path
        self.nsock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.nsock.bind(npath)
        env = dict(os.environ)
        env[CANARY] = "leaked-from-keventd"
        env["NOTIFY_SOCKET"] = npath
        env["LD_PRELOAD_CANARY"] = "x"
        env.update(self.extra_env)
        argv = [KEVENTD]
        for d in self.rules_dirs:
            argv += ["--rules-dir", d]
        argv += ["--control", self.s.ctl]
        if "--state-dir" not in self.args:
            argv += ["--state-dir", self.state_dir]
        if "--lib-dir" not in self.args:
            argv += ["--lib-dir", self.lib_dir]
        if "--sources" not in self.args:
            # only what the test sends: no host uevents, no kernel module
            argv += ["--sources", "socket"]
        argv += self.args
        self.log = open(self.log_path, "w")
        if self.journal:  # as systemd does when stderr is the journal
            st = os.fstat(self.log.fileno())
            env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
        self.proc = subprocess.Popen(self.wrap + argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env,
                                     preexec_fn=self.preexec, pass_fds=self.pass_fds)
        self.wait_notify("READY=1")
        return self

    def logtext(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def wait_notify(self, state, timeout=TIMEOUT):
        """Waits for a new notify message with the line STATE."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline_left(deadline)
            r, _, _ = select.select([self.nsock], [], [], min(left, 0.2))
            if r:
                msg = self.nsock.recv(4096).decode()
                self.notes.append(msg)
                if state in msg.split("\n"):
                    return msg
                continue
            if self.proc.poll() is not None:
                raise AssertionError("keventd exited with %s before %s; log:\n%s"
                                     % (self.proc.returncode, state, self.logtext()))
            if not left:
                raise AssertionError("no %s from keventd within %.0fs; log:\n%s"
                                     % (state, timeout, self.logtext()))

    def ctl(self, *args, check=None, timeout=TIMEOUT, input=None, prefix=()):
        r = subprocess.run(list(prefix) + [KEVENTCTL, "--control", self.s.ctl] + list(args),
                           capture_output=True, text=True, timeout=timeout, input=input,
                           stdin=None if input is not None else subprocess.DEVNULL)
        if check is not None and r.returncode != check:
            raise AssertionError("keventctl %s: exit %d, wanted %d\nstdout: %s\nstderr: %s\nlog:\n%s"
                                 % (" ".join(args), r.returncode, check, r.stdout, r.stderr,
                                    self.logtext()))
        return r

    def send(self, type, obj, sig, payload=None):
        args = ["send", type, obj, sig] + ([payload] if payload is not None else [])
        return self.ctl(*args, check=0)

    def status(self):
        r = self.ctl("status", "--json", check=0)
        return json.loads(r.stdout)

    def wait_status(self, pred, what, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            st = self.status()
            if pred(st):
                return st
            if not deadline_left(deadline):
                raise AssertionError("status never showed %s within %.0fs; last:\n%s\nlog:\n%s"
                                     % (what, timeout, json.dumps(st, indent=1), self.logtext()))
            time.sleep(0.02)  # polling interval of a status query, not a synchronisation

    def wait_idle(self, received, timeout=TIMEOUT):
        """Waits until RECEIVED events came in and all of them are finished."""
        return self.wait_status(
            lambda st: st["events"]["received"] == received and st["events"]["pending"] == 0
            and st["events"]["handled"] + st["events"]["ratelimited"] == received,
            "%d events received and finished" % received, timeout)

    def wait_log(self, text, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while text not in self.logtext():
            if not deadline_left(deadline):
                raise AssertionError("%r never logged; log:\n%s" % (text, self.logtext()))
            time.sleep(0.02)

    def stop(self, timeout=TIMEOUT):
        """SIGTERM; returns the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError("keventd did not exit within %.0fs of SIGTERM; log:\n%s"
                                 % (timeout, self.logtext()))

    def stop_ok(self, tc, timeout=TIMEOUT):
        rc = self.stop(timeout)
        tc.assertEqual(rc, 0, "keventd exit status after SIGTERM; log:\n" + self.logtext())

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.nsock:
            self.nsock.close()
        if getattr(self, "log", None):
            self.log.close()


class Raw:
    """A control-socket client speaking the wire protocol directly."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)

    @staticmethod
    def encode(*fields):
        return b"".join((f if isinstance(f, bytes) else f.encode()) + b"\0" for f in fields)

    def send_raw(self, data):
        self.sock.send(data)

    def recv(self, timeout=TIMEOUT, quiet_ok=False):
        """One message as a list of fields; None at EOF, or after TIMEOUT
        when quiet_ok (for "nothing more is queued")."""
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            if quiet_ok:
                return None
            raise AssertionError("no reply from keventd within %.0fs" % timeout)
        data = self.sock.recv(16384)
        if not data:
            return None
        return [f.decode(errors="replace") for f in data.split(b"\0")[:-1]]

    def reply(self, timeout=TIMEOUT):
        """Collects data messages up to the final ok/err: (kind, text, data)."""
        data = []
        while True:
            m = self.recv(timeout)
            if m is None:
                raise AssertionError("keventd closed the connection")
            if m[0] == "data":
                data.append(m[1])
                continue
            return m[0], (m[1] if len(m) > 1 else None), data

    def request(self, *fields, timeout=TIMEOUT):
        self.send_raw(self.encode(*fields))
        return self.reply(timeout)

    def close(self):
        self.sock.close()


class DaemonTest(unittest.TestCase):
    """Base: self.s (scratch), self.start(...) -> Daemon."""

    def setUp(self):
        self.s = Scratch()
        self.daemons = []
        self.procs = []
        self.raws = []

    def raw(self):
        """A raw control-socket client, closed at the end of the test."""
        r = Raw(self.s.ctl)
        self.raws.append(r)
        return r

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            for f in (p.stdout, p.stderr):
                if f:
                    f.close()
        for r in self.raws:
            r.close()
        for d in self.daemons:
            d.kill()
        self.s.cleanup()

    def start(self, *args, **kw):
        d = Daemon(self.s, args=args, **kw)
        self.daemons.append(d)
        return d.start()

    def h(self, *args):
        """A YAML flow list running the handler with ARGS."""
        return "[" + ", ".join(yq(a) for a in [self.s.handler] + list(args)) + "]"

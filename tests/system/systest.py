#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The system tests: keventd installed from its .deb on a booted Debian 12.

    systest.py --kernel 6.1|6.12 --image-env FILE --debs-env FILE
               --ssdt TZ.aml --workdir DIR [--timeout S] [--keep] [SCENARIO...]

Boots the image that image.sh built (its own kernel and initrd, root on
/dev/vda) under QEMU/TCG with a QMP socket and a virtio-serial control
channel to the guest's agent (guest/agent.sh), then runs the scenarios of
scenarios/*.py in order, those whose KERNELS name this kernel (or the ones
named on the command line), and powers the guest off.

A scenario is one small file: KERNELS (a tuple of "6.1", "6.12"), and
run(vm), which drives the guest through vm (VM below) and raises Fail
with what it expected when the system says otherwise.  A failure prints
the guest's journal of keventd and the tail of the serial log; the other
scenarios still run.  Every wait is bounded.

Exit status: 0 when every scenario passed, 1 otherwise, 77 when QEMU is
not there (image.sh installs it; it skips with the reason when it cannot).
"""
import argparse
import base64
import datetime
import glob
import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_PORT = "org.keventd.systest"
# the first PCI slot of the disks of VM.attach_disk()
DISK_SLOT = 0x18


class Fail(Exception):
    """A scenario's expectation the system did not meet."""


def utc_seconds(text):
    """A time as keventctl conditions --json writes it
    (2026-12-06T18:18:53Z, UTC, to the second), in seconds of the epoch."""
    t = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp())


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    return env


def log(msg):
    print(msg, flush=True)


class Agent:
    """The host's end of guest/agent.sh's protocol."""

    def __init__(self, path, deadline):
        self.sock = connect_unix(path, deadline)
        self.buf = b""
        self.next_id = 0

    def close(self):
        self.sock.close()

    def request(self, script, timeout):
        """(exit status, stdout, stderr) of script, run by bash in the guest
        under timeout(1) of timeout seconds."""
        self.next_id += 1
        rid = "r%d" % self.next_id
        line = "%s %d %s\n" % (rid, timeout, base64.b64encode(script.encode()).decode())
        try:
            self.sock.sendall(line.encode())
        except OSError as e:
            raise Fail("the guest's agent is gone (%s)" % e)
        deadline = time.monotonic() + timeout + 20
        while True:
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Fail("the guest's agent did not answer within %d s: %s"
                               % (timeout + 20, script[:200]))
                self.sock.settimeout(left)
                try:
                    chunk = self.sock.recv(65536)
                except socket.timeout:
                    continue
                except OSError as e:
                    # QEMU closed the socket with our request unread in it
                    raise Fail("the guest's agent hung up (%s)" % e)
                if not chunk:
                    raise Fail("the guest's agent hung up")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\n", 1)
            parts = raw.decode(errors="replace").split(" ")
            if len(parts) != 4 or parts[0] != rid:
                continue  # the answer to an earlier request given up on
            out = base64.b64decode(parts[2]).decode(errors="replace")
            err = base64.b64decode(parts[3]).decode(errors="replace")
            return int(parts[1]), out, err


class QMP:
    """A QMP client: commands, and the events that arrive meanwhile."""

    def __init__(self, path, deadline):
        self.sock = connect_unix(path, deadline)
        self.buf = b""
        self.events = []
        self._read(10)  # the greeting
        self.cmd("qmp_capabilities")

    def close(self):
        self.sock.close()

    def _read(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fail("QMP: no answer within %d s" % timeout)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError as e:
                raise Fail("QMP: QEMU hung up (%s)" % e)
            if not chunk:
                raise Fail("QMP: QEMU hung up")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\n", 1)
        return json.loads(raw)

    def cmd(self, name, timeout=30, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        try:
            self.sock.sendall((json.dumps(msg) + "\n").encode())
        except OSError as e:
            raise Fail("QMP: QEMU hung up (%s)" % e)
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(max(0.1, deadline - time.monotonic()))
            if "event" in m:
                self.events.append(m)
            elif "error" in m:
                raise Fail("QMP %s %s: %s" % (name, json.dumps(args), m["error"]))
            elif "return" in m:
                return m["return"]

    def wait_event(self, name, timeout, match=None):
        """The first event NAME (whose data contains match) since the last
        call, within timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["event"] == name and all(e.get("data", {}).get(k) == v
                                              for k, v in (match or {}).items()):
                    del self.events[:i + 1]
                    return e
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fail("QMP: no %s event %s within %d s" % (name, match or "", timeout))
            self.events.append(self._read(left))


def connect_unix(path, deadline):
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise Fail("cannot connect to %s" % path)
            time.sleep(0.05)  # QEMU is still starting: polling, bounded


class VM:
    """One boot of the image under QEMU/TCG, and what scenarios use."""

    def __init__(self, args, image, debs):
        self.kernel = args.kernel
        self.kver = image["KVER_6_1" if args.kernel == "6.1" else "KVER_6_12"]
        self.image = image
        self.debs = debs
        self.workdir = os.path.abspath(args.workdir)
        self.ssdt = args.ssdt
        self.figures = []  # (what, value) lines for the summary
        self.proc = None
        self.qmp = None
        self.agent = None
        self.disks = {}  # attach_disk(): id -> (image, serial), given again at a reboot
        # sockets in a short path (108 bytes at most)
        self.sockdir = tempfile.mkdtemp(prefix="systest-", dir="/tmp")
        self.serial = os.path.join(self.workdir, "serial.log")

    # --- boot and power-off -------------------------------------------------

    def boot(self, timeout=240):
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        if not os.path.isdir(self.sockdir):  # a second boot, after poweroff()
            self.sockdir = tempfile.mkdtemp(prefix="systest-", dir="/tmp")
        disk = os.path.join(self.workdir, "root.qcow2")
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                        self.image["IMAGE"], disk], check=True, timeout=60)
        self.start_qemu(timeout)

    def reboot(self, timeout=240):
        """A clean reboot of the guest, its disk kept: systemd stops every
        service, the guest resets (QEMU, run with -no-reboot, exits), and
        the same disk boots again, with the disks attach_disk() added
        (what a scenario added with QMP itself is gone)."""
        self.agent.request("systemctl --no-block reboot", 20)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Fail("the guest did not go down within %d s of reboot" % timeout)
        for c in (self.qmp, self.agent):
            c.close()
        shutil.rmtree(self.sockdir, ignore_errors=True)
        self.sockdir = tempfile.mkdtemp(prefix="systest-", dir="/tmp")
        self.start_qemu(timeout)

    def start_qemu(self, timeout):
        disk = os.path.join(self.workdir, "root.qcow2")
        out = self.image["OUT"]
        qmp = os.path.join(self.sockdir, "qmp")
        agent = os.path.join(self.sockdir, "agent")
        argv = ["qemu-system-x86_64", "-accel", "tcg", "-m", "1024", "-smp", "2",
                "-display", "none", "-nodefaults", "-no-reboot",
                "-kernel", os.path.join(out, "vmlinuz-" + self.kver),
                "-initrd", os.path.join(out, "initrd.img-" + self.kver),
                "-append", "root=/dev/vda rw console=ttyS0 quiet panic=-1",
                "-drive", "file=%s,format=qcow2,if=virtio,cache=unsafe" % disk,
                "-serial", "file:" + self.serial,
                "-qmp", "unix:%s,server=on,wait=off" % qmp,
                "-device", "virtio-serial-pci,id=vser",
                "-chardev", "socket,id=agent,path=%s,server=on,wait=off" % agent,
                "-device", "virtserialport,bus=vser.0,chardev=agent,name=" + AGENT_PORT,
                "-device", "virtio-rng-pci",
                "-acpitable", "file=" + self.ssdt]
        # at the PCI slots they were plugged in at, after the root disk's:
        # the root stays /dev/vda
        for dev, (img, serial, addr) in self.disks.items():
            argv += ["-blockdev", "driver=raw,node-name=%s-node,file.driver=file,file.filename=%s"
                     % (dev, img),
                     "-device", "virtio-blk-pci,id=%s,drive=%s-node,serial=%s,addr=%#x"
                     % (dev, dev, serial, addr)]
        log("systest: booting %s: %s" % (self.kver, " ".join(shlex.quote(a) for a in argv)))
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=open(os.path.join(self.workdir, "qemu.log"), "w"),
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = self.t0 + 30
        self.qmp = QMP(qmp, deadline)
        self.agent = Agent(agent, deadline)
        # The request waits in the socket until the guest's agent opens its
        # port, once udevd has made it: one request, bounded by the boot's
        # timeout, or an error as soon as QEMU hangs up.
        try:
            rc, out, _ = self.agent.request("echo up", timeout)
        except Fail as e:
            raise Fail("the guest did not answer on its control channel within %d s (%s; QEMU %s)"
                       % (timeout, e, "exited %s" % self.proc.poll()
                          if self.proc.poll() is not None else "running"))
        if (rc, out) != (0, "up\n"):
            raise Fail("the guest's agent answered %r, exit %d" % (out, rc))
        self.figure("agent answering, from QEMU's start", "%.1f s" % (time.monotonic() - self.t0))

    def poweroff(self, timeout=60):
        if not self.proc:
            return
        if self.proc.poll() is None:
            try:
                self.agent.request("systemctl --no-block poweroff", 20)
            except Fail:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                log("systest: the guest did not power off within %d s: killing QEMU" % timeout)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        for c in (self.qmp, self.agent):
            if c:
                c.close()
        shutil.rmtree(self.sockdir, ignore_errors=True)

    # --- what scenarios use -------------------------------------------------

    def attach_disk(self, dev, size_mb, serial):
        """A blank virtio disk of size_mb hot-plugged now (QMP), serial
        its /dev/disk/by-id/virtio-SERIAL, and given again on QEMU's
        command line at each reboot(), as a disk that stays in the
        machine would be.  Its image is in the workdir."""
        img = os.path.join(self.workdir, dev + ".img")
        subprocess.run(["truncate", "-s", "0", img], check=True)
        subprocess.run(["truncate", "-s", "%dM" % size_mb, img], check=True)
        self.qmp.cmd("blockdev-add", driver="raw", **{"node-name": dev + "-node"},
                     file={"driver": "file", "filename": img})
        addr = DISK_SLOT + len(self.disks)
        self.qmp.cmd("device_add", driver="virtio-blk-pci", id=dev, drive=dev + "-node",
                     serial=serial, addr="%#x" % addr)
        self.disks[dev] = (img, serial, addr)

    def disk_name(self, serial):
        """The kernel's name of the virtio disk of that serial (vdb)."""
        return self.sh("basename $(readlink -f /dev/disk/by-id/virtio-%s)" % serial).strip()

    def detach_disk(self, dev):
        """The disk of attach_disk() unplugged, its image removed."""
        img = self.disks.pop(dev)[0]
        self.qmp.cmd("device_del", id=dev)
        self.qmp.wait_event("DEVICE_DELETED", 60, {"device": dev})
        self.qmp.cmd("blockdev-del", **{"node-name": dev + "-node"})
        os.unlink(img)

    def run(self, script, timeout=60):
        """(exit status, stdout, stderr) of a bash script in the guest."""
        return self.agent.request(script, timeout)

    def sh(self, script, timeout=60, what=None):
        """stdout of a bash script in the guest; Fail unless it exits 0."""
        rc, out, err = self.run(script, timeout)
        if rc != 0:
            raise Fail("%s: exit %d\n--- script:\n%s\n--- stdout:\n%s--- stderr:\n%s"
                       % (what or "a guest command failed", rc, script, out, err))
        return out

    def ok(self, script, timeout=60):
        return self.run(script, timeout)[0] == 0

    def wait(self, script, timeout, what):
        """Runs script in the guest every 0.1 s until it exits 0, at most
        timeout seconds; Fail naming what was expected otherwise."""
        loop = ("end=$((SECONDS + %d))\nuntil { %s\n} >/dev/null 2>&1; do\n"
                "\t[ $SECONDS -lt $end ] || exit 1\n\tsleep 0.1\ndone\n" % (timeout, script))
        if self.run(loop, timeout + 10)[0] != 0:
            raise Fail("expected %s within %d s" % (what, timeout))

    def json(self, script, timeout=60, what=None):
        out = self.sh(script, timeout, what)
        try:
            return json.loads(out)
        except ValueError:
            raise Fail("%s: not JSON:\n%s" % (what or script, out))

    def show(self, unit, *props):
        """systemctl show's properties of unit, as a dict."""
        out = self.sh("systemctl show %s -p %s" % (shlex.quote(unit), ",".join(props)))
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def cursor(self):
        """The journal's current cursor: what follows it is new."""
        out = self.sh("journalctl -q -n 0 --show-cursor")
        return out.strip().split("cursor: ", 1)[1]

    def journal(self, cursor, *matches, timeout=30):
        """The journal's entries after cursor (journalctl -o json), as dicts,
        those whose fields have the values matches name ("FIELD=VALUE").
        The matches are applied here: journalctl 252 with matches and
        --after-cursor loses entries."""
        out = self.sh("journalctl -q -o json --no-pager --after-cursor=%s" % shlex.quote(cursor),
                      timeout)
        want = [m.split("=", 1) for m in matches]
        res = []
        for line in out.split("\n"):
            if line.startswith("{"):
                e = json.loads(line)
                if all(e.get(k) == v for k, v in want):
                    res.append(e)
        return res

    def wait_journal(self, cursor, pattern, timeout, what, *matches):
        """Waits (bounded) for a journal entry after cursor whose MESSAGE
        contains pattern; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            for e in self.journal(cursor, *matches):
                msg = e.get("MESSAGE")
                if isinstance(msg, str) and pattern in msg:
                    return e
            if time.monotonic() > deadline:
                raise Fail("expected %s within %d s: a journal entry with %r"
                           % (what, timeout, pattern))
            time.sleep(0.3)  # polling interval of a bounded wait

    def events(self, pattern="*"):
        """The files record.sh wrote (/run/systest/events/RULE-SOURCE-SEQ-PID),
        as {name: {variable: value}}."""
        out = self.sh("cd /run/systest/events 2>/dev/null || exit 0\n"
                      "for f in %s; do [ -f \"$f\" ] || continue; echo \"== $f\"; cat \"$f\"; done"
                      % pattern)
        res, cur = {}, None
        for line in out.splitlines():
            if line.startswith("== "):
                cur = res.setdefault(line[3:], {})
            elif cur is not None and "=" in line:
                k, v = line.split("=", 1)
                cur[k] = v
        return res

    def wait_event_file(self, pattern, timeout, what):
        self.wait("ls /run/systest/events/%s" % pattern, timeout, what)
        return self.events(pattern)

    def keventctl_status(self):
        return self.json("keventctl status --json", what="keventctl status --json")

    def user_instance(self, unit, uid, rules):
        """A keventd --user of uid, started by hand (setpriv; no login
        session: a uid of no account will do), with rules as its
        ~/.config/keventd/rules.d/50-systest.yaml, in /tmp/UNIT (home/,
        run/ its XDG_RUNTIME_DIR, keventd.log, pid); back once the system
        instance counts it.  Returns its home and a keventctl --user
        command line as that user."""
        d = "/tmp/" + unit
        before = self.keventctl_status()["users"]["instances"]
        as_user = ("setpriv --reuid={u} --regid={u} --clear-groups env -i HOME={d}/home "
                   "XDG_RUNTIME_DIR={d}/run PATH=/usr/sbin:/usr/bin:/sbin:/bin"
                   .format(u=uid, d=d))
        self.sh("rm -rf {d} && mkdir -p {d}/home/.config/keventd/rules.d {d}/run && "
                "cat > {d}/home/.config/keventd/rules.d/50-systest.yaml <<'EOF'\n{r}EOF\n"
                "chown -R {u}:{u} {d} && chmod 700 {d}/run && "
                "(setsid {a} keventd --user >{d}/keventd.log 2>&1 </dev/null & echo $! >{d}/pid)"
                .format(d=d, r=rules, u=uid, a=as_user))
        try:
            self.wait("keventctl status --json | grep -q '\"instances\":%d'" % (before + 1),
                      60, "%s's keventd --user connected" % unit)
        except Fail as e:
            raise Fail("%s; its log:\n%s" % (e, self.run("cat %s/keventd.log" % d)[1]))
        return d + "/home", as_user + " keventctl --user"

    def user_idle(self, ctl, what):
        """Waits until the user instance of keventctl command ctl has
        handled what it received."""
        self.wait(ctl + " status --json | python3 -c 'import json, sys; "
                  "sys.exit(json.load(sys.stdin)[\"events\"][\"pending\"] != 0)'", 30, what)

    def stop_user_instance(self, unit):
        self.run("test -e /tmp/{u}/pid && kill $(cat /tmp/{u}/pid); rm -rf /tmp/{u}"
                 .format(u=unit))

    def figure(self, what, value):
        self.figures.append((what, value))
        log("systest: FIGURE %s: %s" % (what, value))

    def kernel_trouble(self):
        """The guest kernel's own words of a crash in the serial log."""
        try:
            with open(self.serial, errors="replace") as f:
                text = f.read()
        except OSError:
            return False
        return any(w in text for w in ("Kernel panic", "BUG:", "Oops", "general protection",
                                       "Call Trace:"))

    def diagnostics(self):
        """What a failure prints: keventd's journal and the serial log's tail."""
        text = []
        if self.proc and self.proc.poll() is None:
            try:
                rc, out, err = self.run("journalctl -u keventd -b --no-pager -n 120 -o short-monotonic", 30)
                text.append("--- journalctl -u keventd (last 120 lines):\n" + out + err)
            except Fail as e:
                text.append("--- journalctl -u keventd: %s" % e)
        else:
            text.append("--- QEMU exited with status %s" % (self.proc.poll() if self.proc else None))
        for what, path, n in (("serial log", self.serial, 40),
                              ("QEMU's output", os.path.join(self.workdir, "qemu.log"), 20)):
            try:
                with open(path, errors="replace") as f:
                    tail = f.read().splitlines()[-n:]
                text.append("--- %s (%s), last %d lines:\n%s" % (what, path, n, "\n".join(tail)))
            except OSError as e:
                text.append("--- %s: %s" % (what, e))
        return "\n".join(text)


def load_scenarios():
    res = []
    for path in sorted(glob.glob(os.path.join(HERE, "scenarios", "*.py"))):
        name = os.path.basename(path)[:-3]
        spec = importlib.util.spec_from_file_location("scenario_" + name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        res.append((name, mod))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True, choices=("6.1", "6.12"))
    ap.add_argument("--image-env", required=True)
    ap.add_argument("--debs-env", required=True)
    ap.add_argument("--ssdt", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--timeout", type=int, default=240, help="seconds to boot")
    ap.add_argument("scenario", nargs="*")
    args = ap.parse_args()
    for tool in ("qemu-system-x86_64", "qemu-img"):
        if not shutil.which(tool):
            print("SKIP: %s is not installed (image.sh installs it: qemu-system-x86, qemu-utils)"
                  % tool)
            return 77
    for f in (args.image_env, args.debs_env, args.ssdt):
        if not os.path.exists(f):
            print("SKIP: %s is missing (the system-image test makes it)" % f)
            return 77
    sys.path.insert(0, HERE)
    scenarios = [(n, m) for n, m in load_scenarios()
                 if (n in args.scenario or n.split("_", 1)[-1] in args.scenario)
                 or (not args.scenario and args.kernel in m.KERNELS)]
    if not scenarios:
        print("systest: no scenario for kernel %s" % args.kernel)
        return 1

    vm = VM(args, read_env(args.image_env), read_env(args.debs_env))
    start = time.monotonic()
    passed, failed = [], []
    try:
        try:
            vm.boot(args.timeout)
        except Fail as e:
            log("systest: FAIL boot: %s\n%s" % (e, vm.diagnostics()))
            if vm.proc.poll() is None or vm.kernel_trouble():
                failed.append("boot")
                return 1
            # QEMU went away before the guest's agent answered, and the guest's
            # kernel said nothing of a panic or oops (kevent.ko loads at boot:
            # that would fail here).  Seen once in many TCG boots; no scenario
            # has run yet.  One more boot, said aloud; the scenarios decide.
            log("systest: QEMU exited during boot (status %s): booting once more"
                % vm.proc.poll())
            vm.figure("boots QEMU did not finish", "1")
            vm.poweroff()
            try:
                vm.boot(args.timeout)
            except Fail as e:
                log("systest: FAIL boot (second): %s\n%s" % (e, vm.diagnostics()))
                failed.append("boot")
                return 1
        for name, mod in scenarios:
            t = time.monotonic()
            log("systest: == %s (%s)" % (name, (mod.__doc__ or "").strip().splitlines()[0]))
            try:
                mod.run(vm)
            except Fail as e:
                log("systest: FAIL %s: %s\n%s" % (name, e, vm.diagnostics()))
                failed.append(name)
                continue
            except Exception:
                log("systest: FAIL %s: %s\n%s" % (name, traceback.format_exc(), vm.diagnostics()))
                failed.append(name)
                continue
            log("systest: PASS %s (%.1f s)" % (name, time.monotonic() - t))
            passed.append(name)
    finally:
        vm.poweroff()
        log("systest: kernel %s, %.1f s in all" % (vm.kver, time.monotonic() - start))
        for what, value in vm.figures:
            log("systest:   %s: %s" % (what, value))
        if failed:
            log("systest: failed: %s" % " ".join(failed))
        log("%d passed, %d failed" % (len(passed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0-or-later
"""The .deb, from the source tree to a running keventd.  Never installs it.

  test_deb.py build    configure a tree for /usr with KEVENT_DEB=ON, build it,
                       cpack -G DEB into $KEVENT_DEB_DIR (the ctest fixture)
  test_deb.py inspect  dpkg-deb -c / -I / -e: every file, mode and owner, the
                       control fields, the maintainer scripts (run against
                       stub dkms and systemd helpers: with and without dkms);
                       lintian, which must report no error or warning
  test_deb.py run      dpkg-deb -x into a scratch root; start that keventd as
                       its unit would (no systemd: ExecStart with --control
                       and --rules-dir pointing into the root, --sources socket
                       so that the host's uevents stay out of it, the unit's
                       UMask and RuntimeDirectory, readiness on NOTIFY_SOCKET,
                       reload on SIGHUP); man -l renders each page from the root;
                       a rule dropped into the root's /etc/keventd/rules.d
                       fires (its handler writes a file)

Environment (ctest sets it): KEVENT_SOURCE_DIR, KEVENT_DEB_DIR, KEVENT_VERSION.
"""
import glob
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

E = os.environ
SRC = E.get("KEVENT_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
OUT = E.get("KEVENT_DEB_DIR", "")
VERSION = E.get("KEVENT_VERSION", "0.1.0")
TIMEOUT = float(E.get("KEVENT_TEST_TIMEOUT", "20"))
HERE = os.path.dirname(os.path.abspath(__file__))
MAN = {"usr/share/man/man8/keventd.8.gz", "usr/share/man/man8/keventctl.8.gz",
       "usr/share/man/man5/keventd.rules.5.gz",
       "usr/share/man/man5/keventd.yaml.5.gz", "usr/share/man/man9/send_kevent.9.gz"}


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def need(*tools):
    for t in tools:
        if not shutil.which(t):
            skip("%s is not installed (sh scripts/deps.sh test installs it)" % t)


def read(path):
    with open(path) as f:
        return f.read()


def run(argv, check_rc=True, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 600)
    r = subprocess.run(argv, **kw)
    if r.returncode != 0 and check_rc:
        raise AssertionError("%s: exit %d\n%s%s" % (" ".join(argv), r.returncode,
                                                      r.stdout, r.stderr))
    return r


def the_deb():
    debs = glob.glob(os.path.join(OUT, "keventd_*.deb"))
    if len(debs) != 1:
        raise AssertionError("expected one keventd_*.deb in %s (ops-deb-build makes it), found %r"
                             % (OUT, debs))
    return debs[0]


def build():
    need("cmake", "cpack", "dpkg-shlibdeps", "dpkg-deb", "gzip", "objcopy")
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    tree = os.path.join(OUT, "build")
    env = dict(os.environ)
    for k in ("DESTDIR", "CFLAGS", "LDFLAGS"):  # a package is built clean
        env.pop(k, None)
    run(["cmake", "-S", SRC, "-B", tree, "-DCMAKE_INSTALL_PREFIX=/usr", "-DKEVENT_DEB=ON",
         "-DBUILD_TESTING=OFF", "-DKEVENT_SANITIZE=OFF", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
        env=env)
    run(["cmake", "--build", tree, "-j%d" % (os.cpu_count() or 2)], env=env)
    run(["cpack", "-G", "DEB", "-B", OUT], cwd=tree, env=env)
    print("built", the_deb())


class Inspect(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.deb = the_deb()
        cls.tmp = tempfile.mkdtemp(prefix="kevent-deb-")
        cls.entries = {}
        for line in run(["dpkg-deb", "-c", cls.deb]).stdout.splitlines():
            # drwxr-xr-x root/root 0 2026-12-03 05:00 ./etc/keventd/
            f = line.split(None, 5)
            cls.entries[f[5].lstrip("./").rstrip("/")] = (f[0], f[1])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def entry(self, path, mode):
        self.assertIn(path, self.entries, "missing from the .deb: " + path)
        self.assertEqual(self.entries[path], (mode, "root/root"), path)

    def test_contents(self):
        exe, reg, d = "-rwxr-xr-x", "-rw-r--r--", "drwxr-xr-x"
        self.entry("usr/sbin/keventd", exe)
        self.entry("usr/bin/keventctl", exe)
        rules = sorted(os.path.basename(f) for f in glob.glob(os.path.join(SRC, "rules.d/*.yaml")))
        self.assertTrue(rules)
        self.assertEqual(sorted(p[len("usr/lib/keventd/rules.d/"):] for p in self.entries
                                if p.startswith("usr/lib/keventd/rules.d/")), rules)
        for r in rules:
            self.entry("usr/lib/keventd/rules.d/" + r, reg)
        self.entry("etc/keventd/rules.d", d)
        self.assertFalse([p for p in self.entries if p.startswith("etc/keventd/rules.d/")])
        self.entry("lib/systemd/system/keventd.service", reg)
        for m in MAN:
            self.entry(m, reg)
        self.entry("usr/include/kevent/kevent.h", reg)
        self.entry("usr/share/bash-completion/completions/keventctl", reg)
        self.entry("usr/share/dbus-1/interfaces/org.kernel.Event.xml", reg)
        self.entry("usr/share/dbus-1/system.d/org.kernel.Event1.conf", reg)
        self.entry("usr/share/doc/keventd/copyright", reg)
        self.entry("usr/share/doc/keventd/changelog.Debian.gz", reg)
        dkms = "usr/src/kevent-%s/" % VERSION
        for f in ("dkms.conf", "Makefile", "Kbuild", "Kconfig", "kevent_bridges.c", "kevent_core.c",
                  "kevent_debugfs.c", "kevent_internal.h", "include/linux/kevent.h",
                  "include/uapi/linux/kevent.h"):
            self.entry(dkms + f, reg)
        self.entry(dkms + "dkms-post-build.sh", exe)  # dkms.conf's POST_BUILD
        self.entry("usr/share/pkgconfig/keventd.pc", reg)
        # nothing from the build tree or the tests
        for p in self.entries:
            self.assertFalse(re.search(r"(^|/)(tests?|CMakeFiles|\.git)(/|$)", p), p)

    def test_control(self):
        f = {k: run(["dpkg-deb", "-f", self.deb, k]).stdout.strip()
             for k in ("Package", "Version", "Section", "Depends", "Recommends", "Suggests")}
        self.assertEqual(f["Package"], "keventd")
        self.assertEqual(f["Version"], VERSION + "-1")
        self.assertEqual(f["Section"], "admin")
        for lib in ("libnl-3-200", "libnl-genl-3-200", "libyaml-0-2", "libudev1", "libc6"):
            self.assertIn(lib, f["Depends"])
        # dlopen()ed when keventd.yaml has a broker: not a dependency
        self.assertNotIn("libmosquitto1", f["Depends"])
        self.assertIn("libmosquitto1", f["Recommends"])
        self.assertIn("dkms", f["Suggests"])

    def test_dkms_conf(self):
        d = os.path.join(self.tmp, "x")
        run(["dpkg-deb", "-x", self.deb, d])
        conf = read(os.path.join(d, "usr/src/kevent-%s/dkms.conf" % VERSION))
        self.assertIn('PACKAGE_NAME="kevent"', conf)
        self.assertIn('PACKAGE_VERSION="%s"' % VERSION, conf,
                      "kernel/dkms.conf's PACKAGE_VERSION must be the project's version")
        self.assertIn('BUILT_MODULE_NAME[0]="kevent"', conf)

    def maintainer_scripts(self):
        d = os.path.join(self.tmp, "control")
        if not os.path.isdir(d):
            run(["dpkg-deb", "-e", self.deb, d])
        return d

    def stubs(self, with_dkms, dkms_status=""):
        """A PATH of stubs that log their argv; the real dkms and systemd
        helpers are never reached."""
        d = tempfile.mkdtemp(dir=self.tmp)
        log = os.path.join(d, "calls")
        names = ["deb-systemd-helper", "deb-systemd-invoke", "systemctl"]
        if with_dkms:
            names.append("dkms")
        for n in names:
            with open(os.path.join(d, n), "w") as f:
                f.write('#!/bin/sh\necho "%s $*" >> %s\n' % (n, log))
                if n == "dkms":
                    f.write('[ "$1" = status ] && printf "%%s" "%s"\n' % dkms_status)
                f.write("exit 0\n")
            os.chmod(os.path.join(d, n), 0o755)
        # /usr/bin and /bin for sh, grep, uname; not /usr/sbin, where dkms is
        env = {"PATH": d + ":/usr/bin:/bin", "LC_ALL": "C"}
        return env, log

    def calls(self, log):
        return read(log).splitlines() if os.path.exists(log) else []

    def test_maintainer_scripts(self):
        d = self.maintainer_scripts()
        for s in ("postinst", "prerm", "postrm"):
            p = os.path.join(d, s)
            self.assertEqual(os.stat(p).st_mode & 0o777, 0o755, s)
            run(["sh", "-n", p])
        # no dkms: configure still succeeds, and says how to build the module
        env, log = self.stubs(with_dkms=False)
        r = run(["sh", os.path.join(d, "postinst"), "configure"], env=env)
        self.assertIn("dkms is not installed", r.stderr)
        self.assertIn("deb-systemd-helper enable keventd.service", self.calls(log))
        r = run(["sh", os.path.join(d, "prerm"), "remove"], env=env)
        # with dkms: add (once), then install for every kernel whose headers
        # are installed (not only the running one: a chroot runs the host's)
        env, log = self.stubs(with_dkms=True)
        run(["sh", os.path.join(d, "postinst"), "configure"], env=env)
        calls = self.calls(log)
        self.assertIn("dkms add -m kevent -v %s" % VERSION, calls)
        kernels = [k for k in sorted(glob.glob("/lib/modules/*"))
                   if os.path.exists(os.path.join(k, "build", "Makefile"))]
        self.assertEqual(sorted(c for c in calls if c.startswith("dkms install")),
                         sorted("dkms install -m kevent -v %s -k %s" % (VERSION, os.path.basename(k))
                                for k in kernels), calls)
        # already added (an upgrade): no second add
        env, log = self.stubs(with_dkms=True, dkms_status="kevent/%s: added" % VERSION)
        run(["sh", os.path.join(d, "postinst"), "configure", "0.0.9-1"], env=env)
        self.assertFalse([c for c in self.calls(log) if c.startswith("dkms add")])
        run(["sh", os.path.join(d, "prerm"), "remove"], env=env)
        self.assertIn("dkms remove -m kevent -v %s --all" % VERSION, self.calls(log))
        # an upgrade to a new revision keeps the module; to a new version, not
        env, log = self.stubs(with_dkms=True, dkms_status="kevent/%s: added" % VERSION)
        run(["sh", os.path.join(d, "prerm"), "upgrade", "1:%s-9" % VERSION], env=env)
        self.assertFalse([c for c in self.calls(log) if c.startswith("dkms remove")])
        run(["sh", os.path.join(d, "prerm"), "upgrade", "%s.1-1" % VERSION], env=env)
        self.assertIn("dkms remove -m kevent -v %s --all" % VERSION, self.calls(log))

    def test_lintian(self):
        if not shutil.which("lintian"):
            skip("lintian is not installed (sh scripts/deps.sh test installs it)")
        r = run(["lintian", "--display-info", "--pedantic", "--show-overrides", "--tag-display-limit",
                 "0", self.deb], check_rc=False)
        out = [l for l in (r.stdout + r.stderr).splitlines()
               if l and "running with root privileges" not in l]
        print("lintian says:\n  " + ("\n  ".join(out) if out else "(nothing)"))
        bad = [l for l in out if l.startswith(("E:", "W:"))]
        self.assertEqual(bad, [], "lintian errors or warnings")


class Notify:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)

    def close(self):
        self.sock.close()

    def wait(self, state, proc, logf):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.sock], [], [], 0.2)
            if r and state in self.sock.recv(4096).decode().split("\n"):
                return
            if proc.poll() is not None:
                break
        raise AssertionError("no %s from keventd (exit %s); log:\n%s"
                             % (state, proc.poll(), read(logf)))


class RunUnpacked(unittest.TestCase):
    def setUp(self):
        self.deb = the_deb()
        self.dir = tempfile.mkdtemp(prefix="kevent-root-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.root = os.path.join(self.dir, "root")
        run(["dpkg-deb", "-x", self.deb, self.root])
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not E.get("KEVENT_TEST_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def r(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def unit(self):
        keys = {}
        for line in read(self.r("/lib/systemd/system/keventd.service")).splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "[")):
                k, v = line.split("=", 1)
                keys[k] = v
        return keys

    def test_man_pages_render(self):
        pages = sorted(self.r(m) for m in MAN)
        r = run(["sh", os.path.join(HERE, "check-man.sh")] + pages, check_rc=False)
        if r.returncode == 77:
            skip(r.stdout)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count("ok: "), len(MAN), r.stdout)

    def test_rule_fires(self):
        unit = self.unit()
        self.assertEqual(unit["Type"], "notify")
        argv = unit["ExecStart"].split()
        self.assertEqual(argv, ["/usr/sbin/keventd"])
        keventd = self.r(argv[0])
        keventctl = self.r("/usr/bin/keventctl")
        # the compiled-in directories are the package's
        help = run([keventd, "--help"]).stdout
        self.assertIn("/run/keventd/rules.d, /usr/lib/keventd/rules.d)", " ".join(help.split()))

        # as systemd would: RuntimeDirectory=keventd, UMask=0022, clean environment
        rundir = self.r("/run/keventd")
        os.makedirs(os.path.join(rundir, "rules.d"), mode=0o755)
        os.chmod(rundir, int(unit.get("RuntimeDirectoryMode", "0755"), 8))
        ctl = os.path.join(rundir, "control")
        admin = self.r("/etc/keventd/rules.d")
        nsock = os.path.join(self.dir, "notify")
        notify = Notify(nsock)
        self.addCleanup(notify.close)
        logf = os.path.join(self.dir, "keventd.log")
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "NOTIFY_SOCKET": nsock, "LANG": "C.UTF-8"}
        cmd = [keventd, "--control", ctl, "--sources", "socket",
               "--rules-dir", admin, "--rules-dir", self.r("/run/keventd/rules.d"),
               "--rules-dir", self.r("/usr/lib/keventd/rules.d")]
        old = os.umask(int(unit.get("UMask", "0022"), 8))
        try:
            with open(logf, "w") as log:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, env=env)
        finally:
            os.umask(old)
        notify.wait("READY=1", self.proc, logf)

        def ctlrun(*args):
            return run([keventctl, "--control", ctl] + list(args), timeout=TIMEOUT)

        st = json.loads(ctlrun("status", "--json").stdout)
        vendor_rules = st["ruleset"]["rules"]
        self.assertGreater(vendor_rules, 0, "the vendor rules are loaded")

        # drop a rule into the admin directory; the handler writes a file,
        # then tells us on a FIFO (bounded select, no fixed sleep)
        out = os.path.join(self.dir, "fired")
        fifo = os.path.join(self.dir, "done")
        os.mkfifo(fifo)
        rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        wfd = os.open(fifo, os.O_WRONLY)  # ours, so the reader never sees EOF
        try:
            rule = os.path.join(admin, "90-e2e.yaml")
            tmp = os.path.join(admin, ".90-e2e.yaml.tmp")
            with open(tmp, "w") as f:
                f.write("""rules:
  - name: e2e
    match: {type: general, object: /org/kernel/test/e2e}
    shell: 'printf "%%s %%s\\n" "$KEVENT_SIGNAL" "$KEVENT_RULE_FILE" > %s && echo done > %s'
""" % (out, fifo))
            os.chmod(tmp, 0o644)
            os.rename(tmp, rule)
            # inotify picks it up; poll status (the daemon alone knows) until it does
            deadline = time.monotonic() + TIMEOUT
            while json.loads(ctlrun("status", "--json").stdout)["ruleset"]["rules"] \
                    != vendor_rules + 1:
                self.assertLess(time.monotonic(), deadline, "the new rule was never loaded; log:\n"
                                + read(logf))
                time.sleep(0.05)  # polling interval, not a synchronisation
            ctlrun("send", "general", "/org/kernel/test/e2e", "fire")
            r, _, _ = select.select([rfd], [], [], TIMEOUT)
            self.assertTrue(r, "the rule's handler never ran; log:\n" + read(logf))
            self.assertEqual(os.read(rfd, 100), b"done\n")
        finally:
            os.close(rfd)
            os.close(wfd)
        self.assertEqual(read(out), "fire %s\n" % rule)
        # the handler has told us; its run is logged once it has exited
        deadline = time.monotonic() + TIMEOUT
        while json.loads(ctlrun("status", "--json").stdout)["events"]["handled"] != 1:
            self.assertLess(time.monotonic(), deadline, "the event never finished; log:\n"
                            + read(logf))
            time.sleep(0.05)  # polling interval, not a synchronisation
        self.assertRegex(read(logf), r"rule=e2e file=%s:2 seq=1 pid=\d+ exit=0 "
                         % re.escape(rule))
        # the metrics work from the package too
        self.assertIn('keventd_rule_runs_total{rule="e2e",file="%s"} 1' % rule,
                      ctlrun("status", "--prometheus").stdout)
        # ExecReload: SIGHUP reloads, with RELOADING=1 then READY=1
        self.proc.send_signal(signal.SIGHUP)
        notify.wait("RELOADING=1", self.proc, logf)
        notify.wait("READY=1", self.proc, logf)
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(TIMEOUT), 0, read(logf))


if __name__ == "__main__":
    if not OUT:
        skip("KEVENT_DEB_DIR not set (run through ctest)")
    what = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if what == "build":
        build()
    elif what in ("inspect", "run"):
        need("dpkg-deb")
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
        import kdtest  # its run_tests(): 77 when a test skipped
        kdtest.run_tests(defaultTest="Inspect" if what == "inspect" else "RunUnpacked")
    else:
        print("usage: test_deb.py build|inspect|run", file=sys.stderr)
        sys.exit(2)

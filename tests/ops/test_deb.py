# SPDX-License-Identifier: GPL-2.0-or-later
"""The Debian packages, from a copy of the tree to a running keventd.  Never
installs them.

  test_deb.py build    copy the tree (the files git knows), make the
                       .orig.tar.xz and the source package (dpkg-source -b),
                       dpkg-buildpackage -us -uc -b, into $KEVENT_DEB_DIR
                       (the ctest fixture)
  test_deb.py inspect  each package's files against the tables of
                       docs/packaging.md, both ways, with modes and owners;
                       the control fields; the maintainer scripts (run against
                       stub dkms and systemd helpers); lintian at >=warning on
                       the source and binary packages, every override with
                       its reason
  test_deb.py run      dpkg-deb -x keventd into a scratch root; start that
                       keventd as its unit would (no systemd: ExecStart with
                       --control and --rules-dir pointing into the root,
                       --sources socket so that the host's uevents stay out
                       of it, the unit's UMask and RuntimeDirectory, readiness
                       on NOTIFY_SOCKET, reload on SIGHUP); man -l renders
                       each page from the root; a rule dropped into the root's
                       /etc/keventd/rules.d fires (its handler writes a file)

Environment (ctest sets it): KEVENT_SOURCE_DIR, KEVENT_DEB_DIR.
"""
import fnmatch
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
TIMEOUT = float(E.get("KEVENT_TEST_TIMEOUT", "20"))
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = ("keventd", "kevent-dkms", "keventd-dev")
MAN = {"usr/share/man/man8/keventd.8.gz": "keventd", "usr/share/man/man8/keventctl.8.gz": "keventd",
       "usr/share/man/man5/keventd.rules.5.gz": "keventd",
       "usr/share/man/man5/keventd.yaml.5.gz": "keventd",
       "usr/share/man/man7/keventd.sources.7.gz": "keventd",
       "usr/share/man/man9/send_kevent.9.gz": "kevent-dkms"}


def skip(why):
    """Outside a test (a test calls self.skipTest(), which unittest counts;
    SystemExit in a test is an error)."""
    print("SKIP: " + why, file=sys.stderr)
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


def changelog_version():
    """The version of debian/changelog's first entry: 0.1.0-1."""
    m = re.match(r"\S+ \(([^)]+)\)", read(os.path.join(SRC, "debian/changelog")))
    return m.group(1)


def the_deb(package):
    arch = "all" if package != "keventd" else "*"
    debs = glob.glob(os.path.join(OUT, "%s_*_%s.deb" % (package, arch)))
    if len(debs) != 1:
        raise AssertionError("expected one %s .deb in %s (ops-deb-build makes it), found %r"
                             % (package, OUT, debs))
    return debs[0]


def copy_tree(dest):
    """The files git knows (tracked, and new ones not ignored), as a
    clean checkout has them, symlinks kept; without git, the tree less
    its build directories."""
    os.makedirs(dest)
    r = run(["git", "-C", SRC, "ls-files", "-z", "-co", "--exclude-standard"], check_rc=False)
    if r.returncode == 0 and r.stdout:
        files = [f for f in r.stdout.split("\0") if f and os.path.lexists(os.path.join(SRC, f))]
        lst = os.path.join(os.path.dirname(dest), "files")
        with open(lst, "w") as f:
            f.write("\0".join(files))
        run(["tar", "-C", SRC, "--null", "-T", lst, "-cf", lst + ".tar"])
        run(["tar", "-C", dest, "-xf", lst + ".tar"])
    else:
        shutil.copytree(SRC, dest, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("build*", ".git", ".run", "obj-*"))


def build():
    need("dpkg-buildpackage", "dpkg-source", "dpkg-checkbuilddeps", "dh", "dh_dkms", "tar", "xz")
    r = run(["dpkg-checkbuilddeps", os.path.join(SRC, "debian/control")], check_rc=False)
    if r.returncode != 0:
        skip("build dependencies missing (sh scripts/deps.sh test installs them): "
             + r.stderr.strip())
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    version = changelog_version()
    upstream = version.rsplit("-", 1)[0]
    tree = os.path.join(OUT, "keventd-" + upstream)
    copy_tree(tree)
    env = dict(os.environ)
    for k in list(env):  # a package is built clean
        if k in ("DESTDIR", "CFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS", "MFLAGS") or \
                k.startswith(("CTEST_", "DEB_")):
            env.pop(k)
    env["DEB_BUILD_OPTIONS"] = "parallel=%d" % min(os.cpu_count() or 1, 2)
    run(["tar", "-C", OUT, "--exclude", "keventd-%s/debian" % upstream, "-cJf",
         os.path.join(OUT, "keventd_%s.orig.tar.xz" % upstream), "keventd-" + upstream])
    run(["dpkg-source", "-b", "keventd-" + upstream], cwd=OUT, env=env)
    start = time.monotonic()
    r = run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree, env=env, check_rc=False,
            timeout=1200)
    with open(os.path.join(OUT, "build.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise AssertionError("dpkg-buildpackage -us -uc -b failed, exit %d:\n%s"
                             % (r.returncode, "\n".join((r.stdout + r.stderr).splitlines()[-60:])))
    # the build-time tests ran, and passed
    if not re.search(r"100% tests passed, 0 tests failed out of [1-9]", r.stdout):
        raise AssertionError("dpkg-buildpackage ran no tests (see %s/build.log)" % OUT)
    print("FIGURE dpkg-buildpackage -b: %.0f s" % (time.monotonic() - start))
    for p in PACKAGES:
        print("built", the_deb(p))


def doc_lists():
    """docs/packaging.md's tables under "### PACKAGE": {package: [(path, mode)]}."""
    lists, pkg = {}, None
    for line in read(os.path.join(SRC, "docs/packaging.md")).splitlines():
        m = re.match(r"### (\S+)$", line)
        if m:
            pkg = m.group(1) if m.group(1) in PACKAGES else None
            continue
        if line.startswith("## "):
            pkg = None
        m = re.match(r"\| `(/[^`]+)` \| (0[0-7]{3}) \|$", line)
        if pkg and m:
            lists.setdefault(pkg, []).append((m.group(1), m.group(2)))
    return lists


class Inspect(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kevent-deb-")
        cls.version = changelog_version()
        cls.upstream = cls.version.rsplit("-", 1)[0]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def entries(self, package):
        """{path: (mode string, owner)} of the package's files, /-rooted."""
        res = {}
        for line in run(["dpkg-deb", "-c", the_deb(package)]).stdout.splitlines():
            # drwxr-xr-x root/root 0 2026-12-03 05:00 ./etc/keventd/
            f = line.split(None, 5)
            path = f[5].split(" -> ")[0].lstrip("./").rstrip("/")
            if path:
                res["/" + path] = (f[0], f[1])
        return res

    def test_file_lists(self):
        """Each package holds what docs/packaging.md's table says, no more,
        no less: every row matches a file of it, every file (and every
        empty directory) a row, with the row's mode, owned by root."""
        lists = doc_lists()
        self.assertEqual(sorted(lists), sorted(PACKAGES), "a table per package in docs/packaging.md")
        modes = {"0755": ("-rwxr-xr-x", "drwxr-xr-x"), "0644": ("-rw-r--r--",),
                 "0700": ("drwx------",)}
        for package, rows in lists.items():
            entries = self.entries(package)
            # files, and directories with nothing in them
            files = {p for p, (m, _) in entries.items()
                     if not m.startswith("d") or not any(q.startswith(p + "/") for q in entries)}
            rows = [(p.replace("<version>", self.upstream), mode) for p, mode in rows]
            for path, mode in rows:
                hits = [f for f in files if fnmatch.fnmatchcase(f, path.rstrip("/"))
                        and "/" not in f[len(os.path.dirname(path)) + 1:]]
                self.assertTrue(hits, "%s: docs/packaging.md lists %s, the package has no such file"
                                % (package, path))
                for h in hits:
                    self.assertIn(entries[h][0], modes[mode], "%s: %s" % (package, h))
                    self.assertEqual(entries[h][1], "root/root", "%s: %s" % (package, h))
                    self.assertEqual(entries[h][0].startswith("d"), path.endswith("/"), h)
            for f in files:
                self.assertTrue(any(fnmatch.fnmatchcase(f, p.rstrip("/"))
                                    and "/" not in f[len(os.path.dirname(p)) + 1:]
                                    for p, _ in rows),
                                "%s holds %s, which docs/packaging.md does not list" % (package, f))
        # the globs stand for the tree's files
        for tree in ("rules.d", "user-rules.d"):
            rules = sorted(os.path.basename(f)
                           for f in glob.glob(os.path.join(SRC, tree, "*.yaml")))
            self.assertTrue(rules, tree)
            self.assertEqual(sorted(os.path.basename(p) for p in self.entries("keventd")
                                    if p.startswith("/usr/lib/keventd/%s/" % tree)), rules)
        src = sorted(os.path.basename(f) for f in glob.glob(os.path.join(SRC, "kernel/*.[ch]")))
        self.assertEqual(sorted(os.path.basename(p) for p in self.entries("kevent-dkms")
                                if re.match(r"/usr/src/kevent-[^/]+/[^/]+\.[ch]$", p)), src)

    def control(self, package, *fields):
        return {k: run(["dpkg-deb", "-f", the_deb(package), k]).stdout.strip() for k in fields}

    def test_cited_docs_are_installed(self):
        """Every file under /usr/share/doc/keventd/ that a man page cites is
        in the keventd package, uncompressed, by that path; and so is
        every recipe of docs/ that the man pages point to."""
        entries = self.entries("keventd")
        cited = set()
        for page in ("keventd.8", "keventctl.8", "keventd.rules.5", "keventd.yaml.5",
                     "keventd.sources.7"):
            cited |= set(re.findall(r"/usr/share/doc/keventd/[A-Za-z_.-]+\.md",
                                    read(os.path.join(SRC, "docs", page))))
        self.assertIn("/usr/share/doc/keventd/sources.md", cited)
        for path in sorted(cited):
            self.assertIn(path, entries, "a man page cites %s; the package has no such file"
                          % path)
        for name in ("sources.md", "acpid.md", "fleet.md", "trace-recipes.md",
                     "examples/keventd.yaml"):
            self.assertIn("/usr/share/doc/keventd/" + name, entries)

    def test_control(self):
        f = self.control("keventd", "Version", "Section", "Depends", "Recommends", "Suggests",
                         "Architecture")
        self.assertEqual(f["Version"], self.version)
        self.assertEqual(f["Section"], "admin")
        for lib in ("libnl-3-200", "libnl-genl-3-200", "libyaml-0-2", "libudev1", "libc6"):
            self.assertIn(lib, f["Depends"])
        # dlopen()ed when keventd.yaml has a broker: not a dependency
        self.assertNotIn("libmosquitto1", f["Depends"])
        self.assertIn("libmosquitto1", f["Recommends"])
        self.assertEqual(f["Suggests"], "kevent-dkms")
        self.assertNotIn("kevent-dkms", f["Depends"])  # the daemon works without the module
        f = self.control("kevent-dkms", "Version", "Section", "Depends", "Architecture")
        self.assertEqual((f["Version"], f["Section"], f["Architecture"]),
                         (self.version, "kernel", "all"))
        self.assertRegex(f["Depends"], r"(^|, )dkms( |,|$)")  # dh_dkms's
        f = self.control("keventd-dev", "Version", "Section", "Architecture")
        self.assertEqual((f["Version"], f["Section"], f["Architecture"]),
                         (self.version, "devel", "all"))

    def unpack(self, package):
        d = os.path.join(self.tmp, package)
        if not os.path.isdir(d):
            run(["dpkg-deb", "-x", the_deb(package), d])
            run(["dpkg-deb", "-e", the_deb(package), os.path.join(d, "DEBIAN")])
        return d

    def test_dkms_conf(self):
        conf = read(os.path.join(self.unpack("kevent-dkms"),
                                 "usr/src/kevent-%s/dkms.conf" % self.upstream))
        self.assertIn('PACKAGE_NAME="kevent"', conf)
        self.assertIn('PACKAGE_VERSION="%s"' % self.upstream, conf,
                      "dkms.conf's PACKAGE_VERSION must be the package's upstream version")
        self.assertIn('BUILT_MODULE_NAME[0]="kevent"', conf)
        # the rest is kernel/dkms.conf's
        ours = [l for l in read(os.path.join(SRC, "kernel/dkms.conf")).splitlines()
                if not l.startswith("PACKAGE_VERSION=")]
        self.assertEqual([l for l in conf.splitlines() if not l.startswith("PACKAGE_VERSION=")], ours)

    def test_header_and_pc(self):
        d = self.unpack("keventd-dev")
        self.assertEqual(read(os.path.join(d, "usr/include/kevent/kevent.h")),
                         read(os.path.join(SRC, "kernel/include/uapi/linux/kevent.h")))
        if not shutil.which("pkg-config") or not shutil.which("cc"):
            self.skipTest("no pkg-config or cc")
        pc = read(os.path.join(d, "usr/share/pkgconfig/keventd.pc"))
        self.assertIn("rulesdir=${prefix}/lib/keventd/rules.d", pc)
        # a listener compiles with <kevent/kevent.h> from the package alone
        src = os.path.join(self.tmp, "listener.c")
        with open(src, "w") as f:
            f.write("#include <kevent/kevent.h>\nint main(void) { return "
                    "KEVENT_CMD_EVENT > 0 && KEVENT_A_SEQNUM > 0 ? 0 : 1; }\n")
        run(["cc", "-Wall", "-Werror", "-I", os.path.join(d, "usr/include"), "-fsyntax-only", src])

    def stubs(self, with_dkms=True):
        """A PATH of stubs that log their argv; the real dkms and systemd
        helpers are never reached."""
        d = tempfile.mkdtemp(dir=self.tmp)
        log = os.path.join(d, "calls")
        names = ["deb-systemd-helper", "deb-systemd-invoke", "systemctl", "rmmod"]
        if with_dkms:
            names.append("dkms")
        for n in names:
            with open(os.path.join(d, n), "w") as f:
                f.write('#!/bin/sh\necho "%s $*" >> %s\nexit 0\n' % (n, log))
            os.chmod(os.path.join(d, n), 0o755)
        # /usr/bin and /bin for sh; not /usr/sbin, where dkms is
        return {"PATH": d + ":/usr/bin:/bin", "LC_ALL": "C"}, log

    def calls(self, log):
        return read(log).splitlines() if os.path.exists(log) else []

    def test_keventd_scripts(self):
        d = os.path.join(self.unpack("keventd"), "DEBIAN")
        for s in ("postinst", "prerm", "postrm"):
            p = os.path.join(d, s)
            self.assertEqual(os.stat(p).st_mode & 0o777, 0o755, s)
            run(["sh", "-n", p])
        # dh_installsystemd's: enable on configure, stop on remove, purge
        env, log = self.stubs()
        run(["sh", os.path.join(d, "postinst"), "configure"], env=env)
        self.assertIn("deb-systemd-helper enable keventd.service", self.calls(log))
        # dh_installsystemduser's: the user unit enabled for every user
        # (systemctl --global), started by nobody: each user's manager
        # starts it at the next login
        self.assertIn("deb-systemd-helper --user enable keventd.service", self.calls(log))
        self.assertEqual([c for c in self.calls(log) if "--user" in c and
                          ("start" in c.split() or "restart" in c.split())], [])
        env, log = self.stubs()
        run(["sh", os.path.join(d, "postrm"), "purge"], env=env)
        self.assertIn("deb-systemd-helper purge keventd.service", self.calls(log))
        self.assertIn("deb-systemd-helper --user purge keventd.service", self.calls(log))
        # the user unit as shipped: never for system users
        unit = read(os.path.join(self.unpack("keventd"), "usr/lib/systemd/user/keventd.service"))
        self.assertIn("\nConditionUser=!@system\n", unit)
        self.assertIn("\nExecStart=/usr/sbin/keventd --user\n", unit)
        # the trigger on the vendor rule directory, and what it runs
        self.assertEqual([l.split() for l in read(os.path.join(d, "triggers")).splitlines()
                          if l and not l.startswith("#")],
                         [["interest-noawait", "/usr/lib/keventd/rules.d"]])
        post = read(os.path.join(d, "postinst"))
        self.assertRegex(post, r'"\$1" = triggered .*\n\s*deb-systemd-invoke '
                         r'try-reload-or-restart keventd\.service')
        # a trigger reloads keventd where systemd runs the machine, and
        # does nothing and succeeds elsewhere, or for a root dpkg works on
        # from outside (DPKG_ROOT)
        systemd = os.path.isdir("/run/systemd/system")
        for dpkg_root in ("", self.tmp):
            env, log = self.stubs()
            if dpkg_root:
                env["DPKG_ROOT"] = dpkg_root
            run(["sh", os.path.join(d, "postinst"), "triggered", "/usr/lib/keventd/rules.d"],
                env=env)
            self.assertEqual(self.calls(log), [
                "deb-systemd-invoke try-reload-or-restart keventd.service"]
                if systemd and not dpkg_root else [], "DPKG_ROOT=%s" % dpkg_root)
        # no DKMS in the daemon's package
        self.assertNotIn("dkms", post + read(os.path.join(d, "prerm")))

    def test_dkms_scripts(self):
        d = os.path.join(self.unpack("kevent-dkms"), "DEBIAN")
        for s in ("postinst", "prerm"):
            self.assertEqual(os.stat(os.path.join(d, s)).st_mode & 0o777, 0o755, s)
            run(["sh", "-n", os.path.join(d, s)])
        # dh_dkms's: DKMS's common.postinst with the module's name and version
        self.assertRegex(read(os.path.join(d, "postinst")),
                         r"DKMS_NAME=kevent\n(.*\n)*DKMS_VERSION=%s\n" % re.escape(self.upstream))
        self.assertIn("/usr/lib/dkms/common.postinst", read(os.path.join(d, "postinst")))
        # prerm: removal takes the module out of DKMS (its status is asked
        # first); no rmmod where systemd does not run the machine
        # (from a root dpkg works on from outside, DPKG_ROOT, never)
        systemd = os.path.isdir("/run/systemd/system")
        for dpkg_root in ("", self.tmp):
            env, log = self.stubs()
            if dpkg_root:
                env["DPKG_ROOT"] = dpkg_root
            with open(os.path.join(os.path.dirname(log), "dkms"), "w") as f:
                f.write('#!/bin/sh\necho "dkms $*" >> %s\n[ "$1" = status ] && '
                        'echo "kevent/%s: added"\nexit 0\n' % (log, self.upstream))
            run(["sh", os.path.join(d, "prerm"), "remove"], env=env)
            self.assertIn("dkms remove -m kevent -v %s --all" % self.upstream, self.calls(log))
            rmmod = [c for c in self.calls(log) if c.startswith("rmmod")]
            if dpkg_root or not systemd or not os.path.isdir("/sys/module/kevent"):
                self.assertEqual(rmmod, [], "DPKG_ROOT=%s" % dpkg_root)
            else:  # loaded here: taken out unless in use
                self.assertIn(rmmod, ([], ["rmmod kevent"]))

    def test_lintian(self):
        if not shutil.which("lintian"):
            self.skipTest("lintian is not installed (sh scripts/deps.sh test installs it)")
        what = glob.glob(os.path.join(OUT, "*.dsc")) + glob.glob(os.path.join(OUT, "*.changes"))
        self.assertEqual(len(what), 2, what)
        r = run(["lintian", "--display-level", ">=warning", "--show-overrides",
                 "--tag-display-limit", "0"] + what, check_rc=False)
        out = [l for l in (r.stdout + r.stderr).splitlines()
               if l and "running with root privileges" not in l]
        print("lintian says:\n  " + ("\n  ".join(out) if out else "(nothing)"))
        bad = [l for l in out if l.startswith(("E:", "W:"))]
        self.assertEqual(bad, [], "lintian errors or warnings")
        # every override has its reason, a comment, beside it
        for f in glob.glob(os.path.join(SRC, "debian/*lintian-overrides")):
            comment = False
            for line in read(f).splitlines():
                if line.startswith("#"):
                    comment = True
                elif line.strip():
                    self.assertTrue(comment, "%s: %r has no reason above it" % (f, line))
                else:
                    comment = False


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
        self.deb = the_deb("keventd")
        self.dir = tempfile.mkdtemp(prefix="kevent-root-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.root = os.path.join(self.dir, "root")
        run(["dpkg-deb", "-x", self.deb, self.root])
        run(["dpkg-deb", "-x", the_deb("kevent-dkms"), self.root])  # send_kevent(9)
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
            self.skipTest((r.stdout + r.stderr).strip())
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
        # the state directory too (the default, /run/keventd, in the root)
        cmd = [keventd, "--control", ctl, "--state-dir", rundir, "--sources", "socket",
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

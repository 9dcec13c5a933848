# SPDX-License-Identifier: GPL-2.0-or-later
"""`cmake --install` into a scratch DESTDIR, and the tree it makes.

Every file of issue 7's list (and keventd.pc), its mode, the unit's ExecStart, the bash
completion, and that the installed keventd's compiled-in vendor directory is
where the default rules went (keventd --help prints the directories).

Environment (ctest sets it): KEVENT_BUILD_DIR, KEVENT_SOURCE_DIR,
KEVENT_PREFIX, KEVENT_SBINDIR, KEVENT_BINDIR, KEVENT_INCLUDEDIR,
KEVENT_MANDIR, KEVENT_DATADIR, KEVENT_UNITDIR (all absolute, as installed).
"""
import glob
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

E = os.environ
MAN_PAGES = {"keventd.8": "man8", "keventctl.8": "man8", "keventd.rules.5": "man5",
             "keventd.yaml.5": "man5", "keventd.sources.7": "man7",
             "send_kevent.9": "man9"}


def read(path):
    with open(path) as f:
        return f.read()


class InstallTree(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dest = tempfile.mkdtemp(prefix="kevent-install-")
        env = dict(os.environ, DESTDIR=cls.dest)
        r = subprocess.run(["cmake", "--install", E["KEVENT_BUILD_DIR"]], env=env,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError("cmake --install failed:\n" + r.stdout + r.stderr)
        cls.manifest = read(os.path.join(E["KEVENT_BUILD_DIR"], "install_manifest.txt"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dest, ignore_errors=True)

    def p(self, path):
        return self.dest + path

    def assertMode(self, path, mode, kind=stat.S_IFREG):
        st = os.lstat(self.p(path))
        self.assertEqual(stat.S_IFMT(st.st_mode), kind, path)
        self.assertEqual(stat.S_IMODE(st.st_mode), mode,
                         "%s: mode %o, wanted %o" % (path, stat.S_IMODE(st.st_mode), mode))

    def test_programs(self):
        self.assertMode(E["KEVENT_SBINDIR"] + "/keventd", 0o755)
        self.assertMode(E["KEVENT_BINDIR"] + "/keventctl", 0o755)
        self.assertFalse(os.path.exists(self.p(E["KEVENT_BINDIR"] + "/keventd")))

    def test_vendor_rules(self):
        vendor = E["KEVENT_PREFIX"].rstrip("/") + "/lib/keventd/rules.d"
        src = sorted(os.path.basename(f)
                     for f in glob.glob(os.path.join(E["KEVENT_SOURCE_DIR"], "rules.d", "*.yaml")))
        self.assertTrue(src)
        self.assertEqual(sorted(os.listdir(self.p(vendor))), src)
        self.assertMode(vendor, 0o755, stat.S_IFDIR)
        for f in src:
            self.assertMode(vendor + "/" + f, 0o644)
        # the daemon's compiled-in vendor directory is where they went
        r = subprocess.run([self.p(E["KEVENT_SBINDIR"] + "/keventd"), "--help"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("default /etc/keventd/rules.d, /run/keventd/rules.d, %s)" % vendor,
                      " ".join(r.stdout.split()))
        # and the installed rules are valid
        r = subprocess.run([self.p(E["KEVENT_BINDIR"] + "/keventctl"), "verify",
                            self.p(vendor)], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_admin_rules_dir_empty(self):
        self.assertMode("/etc/keventd/rules.d", 0o755, stat.S_IFDIR)
        self.assertEqual(os.listdir(self.p("/etc/keventd/rules.d")), [])

    def test_uapi_header(self):
        """The UAPI header is <kevent/kevent.h>: <includedir>/linux is the
        kernel's own headers' directory."""
        h = E["KEVENT_INCLUDEDIR"] + "/kevent/kevent.h"
        self.assertFalse(os.path.exists(self.p(E["KEVENT_INCLUDEDIR"] + "/linux")))
        self.assertMode(h, 0o644)
        self.assertEqual(read(self.p(h)),
                         read(os.path.join(E["KEVENT_SOURCE_DIR"], "kernel/include/uapi/linux/kevent.h")))
        # a listener compiles against the installed header alone
        cc = shutil.which("cc")
        if not cc:
            self.skipTest("no cc: a listener's compile against the installed header not tried")
        src = os.path.join(self.dest, "listener.c")
        with open(src, "w") as f:
            f.write("#include <kevent/kevent.h>\nint main(void) { return "
                    "KEVENT_CMD_EVENT > 0 && KEVENT_A_SEQNUM > 0 ? 0 : 1; }\n")
        r = subprocess.run([cc, "-Wall", "-Werror", "-I", self.p(E["KEVENT_INCLUDEDIR"]),
                            "-fsyntax-only", src], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_man_pages(self):
        for page, sect in MAN_PAGES.items():
            self.assertMode("%s/%s/%s" % (E["KEVENT_MANDIR"], sect, page), 0o644)

    def test_unit(self):
        unit = E["KEVENT_UNITDIR"] + "/keventd.service"
        self.assertMode(unit, 0o644)
        text = read(self.p(unit))
        keys = {}
        for line in text.splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                keys.setdefault(k, []).append(v)
        self.assertEqual(keys["Type"], ["notify"])
        self.assertEqual(keys["ExecStart"], [E["KEVENT_SBINDIR"] + "/keventd"])
        self.assertEqual(keys["ExecReload"], ["/bin/kill -HUP $MAINPID"])
        self.assertEqual(keys["KillMode"], ["mixed"])
        self.assertIn("WantedBy", keys)
        # coldplug (keventd(8), Boot): up before udevd's trigger of the
        # devices present, so keventd hears their "add" uevents; hence no
        # default dependencies (they would be an ordering cycle through
        # sysinit.target), and stopped at shutdown by hand
        after = " ".join(keys["After"]).split()
        before = " ".join(keys["Before"]).split()
        self.assertIn("systemd-udevd.service", after)
        self.assertIn("systemd-udev-trigger.service", before)
        self.assertEqual(keys["DefaultDependencies"], ["no"])
        self.assertIn("shutdown.target", " ".join(keys["Conflicts"]).split())
        self.assertIn("shutdown.target", before)
        for early in ("sysinit.target", "basic.target", "local-fs.target", "dbus.service"):
            self.assertNotIn(early, after, "an ordering cycle with udevd's trigger")
        self.assertNotIn("@", text.replace("man:", ""), "unconfigured @VAR@ in the unit")
        # systemd-analyze verify checks the syntax and every setting's name
        # and value
        sa = shutil.which("systemd-analyze")
        if not sa:
            self.skipTest("no systemd-analyze: the unit's settings not verified")
        tmp = os.path.join(self.dest, "verify")
        os.makedirs(tmp)
        with open(os.path.join(tmp, "keventd.service"), "w") as f:
            f.write(text.replace("ExecStart=" + E["KEVENT_SBINDIR"] + "/keventd",
                                 "ExecStart=/bin/true"))
        r = subprocess.run([sa, "verify", "--man=no", os.path.join(tmp, "keventd.service")],
                           capture_output=True, text=True, timeout=60)
        problems = [l for l in (r.stdout + r.stderr).splitlines()
                    if "keventd.service" in l]
        self.assertEqual(problems, [], r.stdout + r.stderr)

    def test_user_unit(self):
        """The user unit (keventd(8), USER INSTANCE): keventd --user under
        the user's manager, never for system users; and the admin's rule
        directory for every user's instance."""
        unit = E["KEVENT_USERUNITDIR"] + "/keventd.service"
        self.assertMode(unit, 0o644)
        self.assertMode("/etc/keventd/user-rules.d", 0o755, stat.S_IFDIR)
        text = read(self.p(unit))
        keys = {}
        for line in text.splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                keys.setdefault(k, []).append(v)
        self.assertEqual(keys["Type"], ["notify"])
        self.assertEqual(keys["ExecStart"], [E["KEVENT_SBINDIR"] + "/keventd --user"])
        self.assertEqual(keys["ExecReload"], ["/bin/kill -HUP $MAINPID"])
        self.assertEqual(keys["Restart"], ["on-failure"])
        self.assertEqual(keys["ConditionUser"], ["!@system"])
        self.assertEqual(keys["WantedBy"], ["default.target"])
        # nothing a user manager cannot do, nor a system unit's ordering
        for k in ("Delegate", "User", "DefaultDependencies", "RuntimeDirectory",
                  "NoNewPrivileges", "ProtectSystem"):
            self.assertNotIn(k, keys)
        self.assertNotIn("@", text.replace("man:", "").replace("!@system", ""),
                         "unconfigured @VAR@ in the unit")
        sa = shutil.which("systemd-analyze")
        if not sa:
            self.skipTest("no systemd-analyze: the user unit's settings not verified")
        tmp = os.path.join(self.dest, "verify-user")
        run_dir = os.path.join(self.dest, "xdg-run")
        os.makedirs(tmp)
        os.makedirs(run_dir, 0o700)
        with open(os.path.join(tmp, "keventd.service"), "w") as f:
            f.write(text.replace("ExecStart=" + E["KEVENT_SBINDIR"] + "/keventd",
                                 "ExecStart=/bin/true"))
        # a user manager's view of it (systemd-analyze wants a run-time
        # directory for that, as a user manager has)
        r = subprocess.run([sa, "--user", "verify", "--man=no",
                            os.path.join(tmp, "keventd.service")],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, XDG_RUNTIME_DIR=run_dir))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        problems = [l for l in (r.stdout + r.stderr).splitlines()
                    if "keventd.service" in l]
        self.assertEqual(problems, [], r.stdout + r.stderr)

    def test_pkgconfig(self):
        """keventd.pc names the vendor rule directory (the one keventd reads)
        and the configuration directory, for packagers of rule packs."""
        pc = E["KEVENT_DATADIR"] + "/pkgconfig/keventd.pc"
        self.assertMode(pc, 0o644)
        if not shutil.which("pkg-config"):
            self.skipTest("no pkg-config")
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(self.p(pc)), PKG_CONFIG_LIBDIR="")

        def var(name):
            r = subprocess.run(["pkg-config", "--variable=" + name, "keventd"], env=env,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout.strip()
        self.assertEqual(var("rulesdir"), E["KEVENT_PREFIX"].rstrip("/") + "/lib/keventd/rules.d")
        self.assertEqual(var("confdir"), "/etc/keventd")
        self.assertEqual(var("includedir"), E["KEVENT_INCLUDEDIR"])

    def test_dbus_interface(self):
        self.assertMode(E["KEVENT_DATADIR"] + "/dbus-1/interfaces/org.kernel.Event.xml", 0o644)

    def test_dbus_policy(self):
        """Only root may own keventd's name (keventd(8), --dbus)."""
        path = E["KEVENT_DATADIR"] + "/dbus-1/system.d/org.kernel.Event1.conf"
        self.assertMode(path, 0o644)
        root = ET.parse(self.p(path)).getroot()
        owners = [(p.get("user"), p.get("context")) for p in root.findall("policy")
                  if p.find("allow[@own='org.kernel.Event1']") is not None]
        self.assertEqual(owners, [("root", None)])
        self.assertFalse(root.findall(".//allow[@own_prefix]"))

    def test_bash_completion(self):
        comp = E["KEVENT_DATADIR"] + "/bash-completion/completions/keventctl"
        self.assertMode(comp, 0o644)
        bash = shutil.which("bash")
        if not bash:
            self.skipTest("no bash")
        r = subprocess.run([bash, "-n", self.p(comp)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lib = "/usr/share/bash-completion/bash_completion"
        if not os.path.exists(lib):
            self.skipTest("no %s: the completions not tried" % lib)
        # complete "keventctl st" and "keventctl status --p"
        script = r'''
. %s
. %s
complete_for() {
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _keventctl keventctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo "${COMPREPLY[*]}"
}
complete_for keventctl st
complete_for keventctl status --p
complete_for keventctl --control /x send po
''' % (lib, self.p(comp))
        r = subprocess.run([bash, "-c", script], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.stdout.splitlines(), ["status", "--prometheus", "power"],
                         r.stderr)

    def test_zsh_fish_completion(self):
        for comp in (E["KEVENT_DATADIR"] + "/zsh/vendor-completions/_keventctl",
                     E["KEVENT_DATADIR"] + "/fish/vendor_completions.d/keventctl.fish"):
            self.assertMode(comp, 0o644)
        with open(self.p(E["KEVENT_DATADIR"] + "/zsh/vendor-completions/_keventctl")) as f:
            self.assertEqual(f.readline(), "#compdef keventctl\n")

    def test_example_config(self):
        self.assertMode(E["KEVENT_DATADIR"] + "/doc/keventd/examples/keventd.yaml", 0o644)

    def test_manifest_has_nothing_else(self):
        allowed = [E["KEVENT_SBINDIR"], E["KEVENT_BINDIR"], E["KEVENT_PREFIX"].rstrip("/") + "/lib/keventd",
                   E["KEVENT_INCLUDEDIR"] + "/kevent/kevent.h", E["KEVENT_MANDIR"],
                   E["KEVENT_UNITDIR"], E["KEVENT_USERUNITDIR"] + "/keventd.service",
                   E["KEVENT_DATADIR"] + "/bash-completion",
                   E["KEVENT_DATADIR"] + "/zsh/vendor-completions/_keventctl",
                   E["KEVENT_DATADIR"] + "/fish/vendor_completions.d/keventctl.fish",
                   E["KEVENT_DATADIR"] + "/dbus-1/interfaces/org.kernel.Event.xml",
                   E["KEVENT_DATADIR"] + "/dbus-1/system.d/org.kernel.Event1.conf",
                   E["KEVENT_DATADIR"] + "/pkgconfig/keventd.pc",
                   E["KEVENT_DATADIR"] + "/doc/keventd/examples/keventd.yaml"]
        for f in self.manifest.split():
            self.assertTrue(any(f.startswith(self.dest + a) or f.startswith(a) for a in allowed),
                            "unexpected installed file " + f)


if __name__ == "__main__":
    for k in ("KEVENT_BUILD_DIR", "KEVENT_SOURCE_DIR", "KEVENT_PREFIX", "KEVENT_UNITDIR"):
        if k not in E:
            print("SKIP: %s not set (run through ctest)" % k, file=sys.stderr)
            sys.exit(77)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "integration"))
    import kdtest  # its run_tests(): 77 when a test skipped
    kdtest.run_tests()

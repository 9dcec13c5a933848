# SPDX-License-Identifier: GPL-2.0-or-later
"""Live reload: a rule dropped into /etc/keventd/rules.d takes effect,
systemctl reload keventd succeeds, and a broken file keeps its last good
version running (keventd.rules(5))."""
from systest import Fail

KERNELS = ("6.1",)
F = "/etc/keventd/rules.d/70-live.yaml"
RULE = """rules:
  - name: live
    match: {type: general, object: /org/kernel/test/live}
    shell: 'echo %s > /run/systest/live'
"""


def put(vm, text):
    """As an editor saves: a new file renamed over the old one."""
    vm.sh("mkdir -p /run/systest && cat > /etc/keventd/rules.d/.live.tmp <<'EOF'\n%sEOF\n"
          "chmod 644 /etc/keventd/rules.d/.live.tmp && mv /etc/keventd/rules.d/.live.tmp %s"
          % (text, F))


def fires(vm, version):
    vm.sh("rm -f /run/systest/live && keventctl send general /org/kernel/test/live go")
    vm.wait("grep -qx %s /run/systest/live" % version, 20, "the live rule's handler to write %s"
            % version)


def rules(vm):
    return vm.keventctl_status()["ruleset"]["rules"]


def run(vm):
    before = rules(vm)
    put(vm, RULE % "v1")
    vm.wait("keventctl status --json | grep -q '\"name\":\"live\"'", 10,
            "keventd to load the dropped-in rule (inotify)")
    fires(vm, "v1")

    cur = vm.cursor()
    vm.sh("systemctl reload keventd", 60, "systemctl reload keventd")
    vm.wait_journal(cur, "Reloaded keventd.service", 30, "systemd to say the reload is done",
                    "_PID=1")
    fires(vm, "v1")

    # broken: an unknown key; keventd says where, and keeps v1
    cur = vm.cursor()
    put(vm, (RULE % "v2").replace("    shell:", "    bogus: 1\n    shell:"))
    e = vm.wait_journal(cur, "70-live.yaml:", 20, "keventd to report the broken file",
                        "_SYSTEMD_UNIT=keventd.service")
    if ": error: " not in e["MESSAGE"]:
        raise Fail("expected FILE:LINE:COLUMN: error: MESSAGE, got %r" % e["MESSAGE"])
    rc, out, err = vm.run("keventctl verify %s" % F)
    if rc != 1 or "70-live.yaml:4:" not in out + err:
        raise Fail("expected keventctl verify to exit 1 naming line 4, got %d %r" % (rc, out + err))
    vm.sh("systemctl reload keventd", 60, "systemctl reload keventd with a broken file")
    if vm.show("keventd.service", "ActiveState")["ActiveState"] != "active":
        raise Fail("expected keventd to stay active with a broken rule file")
    fires(vm, "v1")

    vm.sh("rm -f %s" % F)
    vm.wait("[ \"$(keventctl status --json | grep -c '\"name\":\"live\"')\" = 0 ]", 10,
            "keventd to drop the removed file's rule")
    if rules(vm) != before:
        raise Fail("expected %d rules again, got %d" % (before, rules(vm)))

# SPDX-License-Identifier: GPL-2.0-or-later
"""MQTT publishing through a broker outage on a booted Debian: the
guest's own mosquitto is stopped, events sent meanwhile wait in keventd's
spool (keventd.yaml(5), PUBLISHING), keventd is killed with SIGKILL while
they wait, and when the broker returns every one of them reaches a
subscriber that was away too (a persistent QoS 1 session), each at least
once (those the kill cut off may come twice: from the spool, and again
from the journal's redelivery)."""
import json

from systest import Fail

KERNELS = ("6.1", "6.12")
N = 20
SUB = "mosquitto_sub -h 127.0.0.1 -q 1 -c -i systest-outage-sub -t 'keventd/outage/general/#'"
CONFIG = """mqtt:
  url: mqtt://127.0.0.1:1883
  client_id: systest-outage
  topic_prefix: keventd/outage
  publish: all
"""


def run(vm):
    vm.sh("systemctl start mosquitto", 60)
    vm.wait("systemctl is-active -q mosquitto", 30, "mosquitto")
    vm.sh("mkdir -p /etc/keventd && cat > /etc/keventd/keventd.yaml <<'EOF'\n%sEOF\n"
          "systemctl restart keventd" % CONFIG, 90)
    try:
        vm.wait("keventctl status | grep -q 'mqtt: connected'", 30,
                "keventd connected to the broker")
        # the subscriber's persistent session, then it goes away
        vm.sh("%s -E" % SUB, 30, "the subscriber's session")
        vm.sh("systemctl stop mosquitto", 60)
        vm.wait("keventctl status | grep -q 'mqtt: connecting\\|mqtt: disconnected\\|"
                "mqtt: waiting'", 30, "keventd to see the broker gone")
        for i in range(N):
            vm.sh("keventctl send general /org/kernel/test/outage o%d 'N: %d'" % (i, i))
            if i == N // 2:
                pid = vm.show("keventd.service", "MainPID")["MainPID"]
                vm.sh("kill -9 %s" % pid)
                vm.wait("p=$(systemctl show -p MainPID --value keventd) && [ \"$p\" != %s ] && "
                        "[ \"$p\" != 0 ] && systemctl is-active -q keventd" % pid, 90,
                        "systemd to start keventd again after the kill")
        vm.sh("systemctl start mosquitto", 60)
        vm.wait("systemctl is-active -q mosquitto", 30, "mosquitto back")
        # every event at least once: the spool's copies, and the journal's
        # redelivery of those the kill cut off may come twice
        # until every one came in: the loop ends it (mosquitto_sub's -W
        # only bounds it)
        vm.sh("mkdir -p /run/systest; out=/run/systest/outage.out; : >$out\n"
              "while IFS= read -r l; do\n"
              "\tprintf '%%s\\n' \"$l\" >>$out\n"
              "\t[ $(grep -o '\"N: [0-9]*' $out | sort -u | wc -l) -ge %d ] && break\n"
              "done < <(%s -W 110)\n"
              "pkill -f systest-outage-sub; true" % (N, SUB), 130,
              "the %d events from the spool" % N)
        seen = {}
        for line in vm.sh("cat /run/systest/outage.out").splitlines():
            m = json.loads(line)
            seen.setdefault(int(m["payload"].split(": ")[1]), []).append(m)
        if sorted(seen) != list(range(N)):
            raise Fail("expected events 0..%d through the outage and the kill, got %r"
                       % (N - 1, sorted(seen)))
        copies = sum(len(v) for v in seen.values())
        vm.figure("broker outage with a SIGKILL (%s)" % vm.kver,
                  "%d events sent while the broker was away, all delivered (%d copies)"
                  % (N, copies))
    finally:
        vm.run("pkill -f systest-outage-sub; rm -f /run/systest/outage.out "
               "/etc/keventd/keventd.yaml; systemctl restart keventd; "
               "systemctl stop mosquitto")

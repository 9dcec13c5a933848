#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs in the image's chroot at image-build time (image.sh), as root, with
# the .debs and this directory in /var/lib/systest:
#   install.sh KEVENTD.deb KEVENT-DKMS.deb KEVENTD-DEV.deb
# 1. what the purge scenario compares with: users, groups, DKMS, modules;
# 2. keventd, as an admin installs it: apt-get install ./keventd_*.deb
#    ./kevent-dkms_*.deb ./keventd-dev_*.deb (its output is kept in
#    /var/lib/systest/install.log);
# 3. the test's own pieces: the agent, the admin's rule file and its
#    handler, a rule pack built as docs/packaging.md says (the rule pack
#    scenario installs it on the running system), and a third-party module
#    built through DKMS against kevent.ko.
set -euo pipefail
S=/var/lib/systest
G=$S/guest
. "$S/kernels"
cd "$S"

echo "== a person at the console"
# The session scenario's user, logged in on tty1 at boot (agetty
# --autologin), so that logind has an active session on seat0.  Part of
# the system before keventd: the purge scenario leaves it.
useradd -m -s /bin/bash desk
mkdir -p /etc/systemd/system/getty@tty1.service.d
cat >/etc/systemd/system/getty@tty1.service.d/autologin.conf <<'EOF'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin desk --noclear %I $TERM
EOF

echo "== the system before keventd"
cp /etc/passwd passwd.before
cp /etc/group group.before
dkms status >dkms.before 2>&1 || true
find /lib/modules -name '*.ko*' | LC_ALL=C sort >modules.before

echo "== apt-get install ./$1 ./$2 ./$3"
# 2>&1: what the admin's terminal shows
apt-get install -y -o Dpkg::Use-Pty=0 "./$1" "./$2" "./$3" 2>&1 | tee install.log
[ "${PIPESTATUS[0]}" = 0 ] || { echo "install.sh: apt-get install failed"; exit 1; }
dpkg-query -W -f='${Version}\n' keventd >version.installed

echo "== the test's pieces"
install -D -m 0755 "$G/agent.sh" /usr/local/lib/systest/agent.sh
install -D -m 0755 "$G/record.sh" /usr/local/lib/systest/record.sh
install -D -m 0644 "$G/systest-agent.service" /etc/systemd/system/systest-agent.service
systemctl enable systest-agent.service
# The admin's own rules: kept by an upgrade, left by a purge.
install -m 0644 "$G/80-systest.yaml" /etc/keventd/rules.d/80-systest.yaml
keventctl verify /etc/keventd/rules.d/80-systest.yaml
# An ext4 file system a hot-plugged disk's handler mounts.
mkdir -p /mnt/systest

echo "== a rule pack, built as docs/packaging.md says (installed by a scenario)"
bash "$G/rulepack/build.sh" "$S/rulepack"

echo "== a third-party module through DKMS, against kevent.ko"
cp -r "$G/kevent-thirdparty" /usr/src/kevent-thirdparty-1.0
dkms add kevent-thirdparty/1.0
for k in $KVER_6_1 $KVER_6_12; do
	dkms install kevent-thirdparty/1.0 -k "$k"
done
dkms status

# The scenarios' installs and removals under TCG need not re-index every
# man page (man-db's trigger); the index made above stays.
rm -f /var/lib/man-db/auto-update

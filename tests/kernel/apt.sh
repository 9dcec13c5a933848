# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the kernel tests' scripts (sh or bash), which define log()
# and set APT_LOG, the file apt's output goes to (and, with .lock, the
# lock that serialises the scripts' installs).

# installed PKG...: every PKG is installed.
installed() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || return 1
	done
}

# apt_install PKG...: installs what is missing (as root; once more after an
# apt-get update if the first try fails).  0, or 1 with apt's last lines
# on stderr.
apt_install() {
	installed "$@" && return 0
	[ "$(id -u)" = 0 ] || { log "not root, cannot install: $*"; return 1; }
	(
		flock -w 900 9 || { log "timed out waiting for the apt lock"; exit 1; }
		installed "$@" && exit 0
		log "apt-get install $*"
		export DEBIAN_FRONTEND=noninteractive
		set -- -y -q -o Dpkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 \
			--no-install-recommends "$@"
		apt-get install "$@" >"$APT_LOG" 2>&1 ||
			{ apt-get update -q >>"$APT_LOG" 2>&1 &&
			  apt-get install "$@" >>"$APT_LOG" 2>&1; } ||
			{ tail -n 20 "$APT_LOG" >&2; exit 1; }
	) 9>"$APT_LOG.lock"
}

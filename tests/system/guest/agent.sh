#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The guest's end of the system tests' control channel: a virtio-serial
# port (/dev/virtio-ports/org.keventd.systest) that the host writes
# requests to, one line each:
#     ID TIMEOUT BASE64(bash script)
# and reads one line per request back:
#     ID EXIT-STATUS BASE64(stdout) BASE64(stderr)
# Requests run one at a time, as root, each under timeout(1) (SIGKILL 5 s
# after the SIGTERM), with stdin from /dev/null and output to files, so a
# background process a script leaves behind cannot hold the reply back.
set -u
PORT=/dev/virtio-ports/org.keventd.systest
for _ in $(seq 300); do
	[ -e "$PORT" ] && break
	sleep 0.1
done
exec 3<>"$PORT" || exit 1
D=$(mktemp -d /run/systest-agent.XXXXXX)
while read -r id t script <&3; do
	case "$id" in
	'' | *[!0-9A-Za-z_-]*) continue ;;
	esac
	case "$t" in
	'' | *[!0-9]*) t=60 ;;
	esac
	printf '%s' "$script" | base64 -d >"$D/script" 2>/dev/null
	(cd / && exec timeout -k 5 "$t" bash "$D/script") </dev/null >"$D/out" 2>"$D/err"
	rc=$?
	printf '%s %s %s %s\n' "$id" "$rc" "$(base64 -w0 <"$D/out")" "$(base64 -w0 <"$D/err")" >&3
done

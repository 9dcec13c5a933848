#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Records each run in /tmp/once/<KEVENT_SEQNUM> (its object and
# KEVENT_RECOVERED); a second run of a number also leaves
# /tmp/once/twice-<KEVENT_SEQNUM>.  For the object .../gate it then holds
# its object's later events back: it waits until /tmp/once-open exists,
# which the guest script makes (at most 60 s).
f=/tmp/once/$KEVENT_SEQNUM
[ -e "$f" ] && : >"/tmp/once/twice-$KEVENT_SEQNUM"
printf 'KEVENT_OBJECT=%s\nKEVENT_RECOVERED=%s\n' "$KEVENT_OBJECT" "${KEVENT_RECOVERED:-0}" >"$f.tmp"
mv "$f.tmp" "$f"
case $KEVENT_OBJECT in
*/gate)
	i=0
	while [ ! -e /tmp/once-open ] && [ "$i" -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	;;
esac
exit 0

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A handler of the system tests' rules (80-systest.yaml): writes its whole
# environment, sorted, to /run/systest/events/RULE-SOURCE-SEQNUM-PID (a
# restarted keventd counts its socket events from 1 again), in one rename,
# so that a file there is always complete.
d=/run/systest/events
mkdir -p "$d"
f="$d/$KEVENT_RULE-$KEVENT_SOURCE-$KEVENT_SEQNUM-$$"
env | LC_ALL=C sort >"$d/.tmp.$$" && mv "$d/.tmp.$$" "$f"

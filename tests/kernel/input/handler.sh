#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Records the handler's environment in /tmp/out/input-SEQNUM (guest-input.sh).
env | sort >"/tmp/out/input-$KEVENT_SEQNUM.part"
mv "/tmp/out/input-$KEVENT_SEQNUM.part" "/tmp/out/input-$KEVENT_SEQNUM"

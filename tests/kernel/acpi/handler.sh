#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Records the handler's environment in /tmp/out/TAG-SEQNUM (guest-acpi.sh).
env | sort >"/tmp/out/$1-$KEVENT_SEQNUM.part"
mv "/tmp/out/$1-$KEVENT_SEQNUM.part" "/tmp/out/$1-$KEVENT_SEQNUM"

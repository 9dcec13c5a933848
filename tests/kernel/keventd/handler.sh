#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Records what keventd gave this handler: argv and the KEVENT_* environment,
# in /tmp/out/<object's last part>-<signal>.
name=$(basename "$KEVENT_OBJECT")-$1
env | grep '^KEVENT_' | sort >"/tmp/out/$name.tmp"
echo "ARGV1=$1" >>"/tmp/out/$name.tmp"
mv "/tmp/out/$name.tmp" "/tmp/out/$name"

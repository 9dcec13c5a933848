#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Records the KEVENT_* environment in /tmp/out/<signal>-<n>.
n=$(ls /tmp/out | wc -l)
env | grep '^KEVENT_' | sort >"/tmp/out/.tmp$$"
mv "/tmp/out/.tmp$$" "/tmp/out/$KEVENT_SIGNAL-$n"

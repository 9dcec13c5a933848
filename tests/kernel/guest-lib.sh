# SPDX-License-Identifier: GPL-2.0
# Helpers for guest scripts run by run-guest.sh: ". /ktest/lib.sh".
# Copied to /ktest/lib.sh in every initramfs.

KTEST_FAILS=0

# ok MESSAGE / fail MESSAGE: one marker line per check.
ok() { echo "KTEST-OK: $*"; }
fail() { echo "KTEST-FAIL: $*"; KTEST_FAILS=$((KTEST_FAILS + 1)); }

# check MESSAGE COMMAND...: ok if COMMAND succeeds, else fail.
check() {
	msg=$1
	shift
	if "$@"; then ok "$msg"; else fail "$msg"; fi
}

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it
# succeeds (0) or SECONDS have passed (1).  The guest has no inotify tool:
# polling, bounded, is how its scripts wait.
wait_until() {
	i=0
	n=$(($1 * 10))
	shift
	while [ "$i" -lt "$n" ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# kernel_caught_up POSFILE: whether keventd's kernel position (the file it
# writes after each batch it handled, $KEVENTD_KERNEL_POS) names kevent.ko's
# current instance and last sequence number: every event sent so far has
# been handled, received or counted lost.  A condition, not a guess from a
# count that stopped moving.
kernel_caught_up() {
	grep -qx "$(sed -n 's/^instance: //p' /sys/kernel/debug/kevent/stats) $(sed -n 's/^seqnum: //p' /sys/kernel/debug/kevent/stats)" "$1" 2>/dev/null
}

# wait_for FILE PATTERN SECONDS: wait until grep -q PATTERN FILE, bounded.
wait_for() { wait_until "$3" grep -q -- "$2" "$1" 2>/dev/null; }

# wait_pid PID SECONDS: wait for a background process, bounded; kills it
# on timeout.  Returns its exit status (or 124 on timeout).
wait_pid() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		if [ "$i" -ge $(($2 * 10)) ]; then
			kill -9 "$1" 2>/dev/null
			wait "$1" 2>/dev/null
			return 124
		fi
		sleep 0.1
		i=$((i + 1))
	done
	wait "$1"
}

# finish: exit status of the script, from the checks so far.
finish() {
	if [ "$KTEST_FAILS" -eq 0 ]; then exit 0; fi
	echo "KTEST: $KTEST_FAILS check(s) failed"
	exit 1
}

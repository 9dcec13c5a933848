#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest script of run-trace-bench.sh (prints figures, asserts nothing but
# that each step ran): what keventd's trace source costs the code it
# traces.  kevent.ko's bench loop of send_kevent() hits the tracepoint
# kevent/kevent_send once per event; its rate is measured with nobody
# tracing it, with keventd tracing it through a filter that passes nothing
# (the hit and the filter alone), and with keventd taking every hit (the
# samples written and keventd's wake-ups besides).  TRACE_ROUNDS rounds
# (env, default 5) of TRACE_COUNT events (default 200,000) each, the three
# in turn, the order rotated; the figures are the medians of the rates
# and of each round's ratio to the untraced rate.
. /ktest/lib.sh

D=/sys/kernel/debug/kevent
M=/ktest/modules/kevent.ko
R=${TRACE_ROUNDS:-5}
N=${TRACE_COUNT:-200000}
C=/tmp/keventd.ctl

rate() { dmesg | grep 'kevent: bench:' | tail -n 1 | sed 's/.*(\([0-9]*\) events\/s).*/\1/'; }
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%d", v[int((NR + 1) / 2)] }'; }
trace_num() {
	keventctl --control "$C" status --json |
		sed -n "s/.*\"trace\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"
}

check "insmod" insmod "$M"
mkdir -p /tmp/rules
# the rule matches every event and runs nothing
cat >/tmp/rules/10-bench.yaml <<'RULES'
rules:
  - name: bench
    match: {object: /org/kernel/trace/kevent, signal: kevent_send}
RULES
cat >/tmp/all.yaml <<'CONF'
trace:
  - event: kevent/kevent_send
CONF
cat >/tmp/none.yaml <<'CONF'
trace:
  - event: kevent/kevent_send
    filter: "type == 999"
CONF
chmod 0644 /tmp/rules/10-bench.yaml /tmp/all.yaml /tmp/none.yaml

# one MODE: off (not traced), none (the filter passes nothing), all
one() {
	kpid=
	if [ "$1" != off ]; then
		rm -rf /tmp/state "$C"
		keventd --rules-dir /tmp/rules --config "/tmp/$1.yaml" --sources trace \
			--control "$C" --state-dir /tmp/state >/tmp/keventd.log 2>&1 &
		kpid=$!
		check "keventd reads kevent/kevent_send ($1)" \
			wait_for /tmp/keventd.log "trace: reading kevent/kevent_send" 30
	fi
	echo "$N general" >"$D/bench"
	rate >>"/tmp/rate-$1"
	if [ -n "$kpid" ]; then
		# the samples it was woken for, read: what it received and lost
		wait_until 10 sh -c "[ \$(keventctl --control $C status --json |
			grep -c '\"pending\":0') -gt 0 ]" || true
		echo "$(trace_num received) $(trace_num lost)" >>"/tmp/got-$1"
		kill -TERM "$kpid"
		wait_pid "$kpid" 20
	fi
}

# the round's number is not "i", which lib.sh's wait_until and wait_pid use
rm -f /tmp/rate-* /tmp/ratio-* /tmp/got-*
round=0
while [ "$round" -lt "$R" ]; do
	case $((round % 3)) in
	0) order="off none all" ;;
	1) order="all off none" ;;
	2) order="none all off" ;;
	esac
	for m in $order; do one "$m"; done
	off=$(tail -n 1 /tmp/rate-off)
	for m in none all; do
		echo $(($(tail -n 1 /tmp/rate-$m) * 1000 / off)) >>/tmp/ratio-$m
	done
	round=$((round + 1))
done
line="KBENCH $KTEST_KVER kevent_send, $N events, $R rounds, medians: not traced $(median /tmp/rate-off) ev/s"
for m in none all; do
	line="$line; traced, filter passes $m: $(median /tmp/rate-$m) ev/s, ratio $(median /tmp/ratio-$m)/1000"
	line="$line (rounds: $(tr '\n' ' ' </tmp/ratio-$m | sed 's/ $//'))"
done
echo "$line"
echo "KBENCH $KTEST_KVER keventd received/lost per round, all pass: $(tr '\n' ',' </tmp/got-all | sed 's/,$//')"
check "rmmod" rmmod kevent
finish

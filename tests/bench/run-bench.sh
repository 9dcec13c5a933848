#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# keventd against the machine's limits and against its peers (acpid, and
# busybox mdev run once per event, the /sbin/hotplug model), on the same
# event streams and the same rule counts.  Run by hand, as root (acpid and
# mdev are run in a private mount namespace; nothing of the system's own is
# touched).  Installs acpid and busybox with apt-get if they are missing.
# Every measurement runs ROUNDS times, the rounds interleaved (round 1 of
# everything, then round 2, ...), and the table shows medians.
#
# Usage: tests/bench/run-bench.sh [BUILD_DIR] [ROUNDS]     (default: build 3)
# From a fresh clone it installs the packages it needs (scripts/deps.sh
# bench) and builds keventd and its tools in BUILD_DIR first.
# KEVENTD=/path/to/keventd measures another keventd (e.g. an older build)
# with this build's tools.
# Takes about 5 minutes with 3 rounds on 2 CPUs.  See docs/PERFORMANCE.md.
set -eu
build=${1:-build}
rounds=${2:-3}
bin=$build/tests/bench
keventd=${KEVENTD:-$build/keventd/keventd}
keventctl=$build/keventd/keventctl
[ "$(id -u)" = 0 ] || { echo "run-bench: run as root (acpid, mdev, private mounts)" >&2; exit 1; }
src=$(cd "$(dirname "$0")/../.." && pwd)
sh "$src/scripts/deps.sh" bench
tools="keventd keventctl loadgen bench-raw bench-latency bench-stamp bench-match"
for f in "$build/keventd/keventd" "$build/keventd/keventctl" "$bin/loadgen" "$bin/bench-raw" \
	"$bin/bench-latency" "$bin/bench-stamp"; do
	[ -x "$f" ] && continue
	echo "run-bench: building keventd and the benchmark tools in $build" >&2
	cmake -S "$src" -B "$build" -DBUILD_TESTING=ON >/dev/null
	# shellcheck disable=SC2086
	cmake --build "$build" -j"$(nproc)" --target $tools >/dev/null
	break
done
[ -x "$keventd" ] || { echo "run-bench: no keventd at $keventd" >&2; exit 1; }
bin=$(cd "$bin" && pwd)
keventd=$(cd "$(dirname "$keventd")" && pwd)/keventd
keventctl=$(cd "$(dirname "$keventctl")" && pwd)/keventctl
acpid=$(command -v acpid)
busybox=$(command -v busybox)

tmp=$(mktemp -d /tmp/kevent-bench.XXXXXX)
chmod 0755 "$tmp"
kpid=
apid=
cleanup() {
	# (no "[ ... ] && kill": with set -e, a kill of a process already gone
	# would end the clean-up there)
	if [ -n "$kpid" ]; then kill "$kpid" 2>/dev/null || true; fi
	if [ -n "$apid" ]; then kill "$apid" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	if [ "${made_mdev_conf:-0}" = 1 ]; then rm -f /etc/mdev.conf; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$tmp/res"
load_start=$(cut -d' ' -f1 /proc/loadavg)

# ---------------------------------------------------------------- rule sets
. "$(dirname "$0")/bench-rules.sh"
# keventd, RULES rules in files of 1,000: rule k matches (power, signal s<k>,
# object /org/kernel/bench/*) and runs /bin/true; the last rule is the one
# the test events match.  In "filter" sets it runs nothing (intake and
# matching only); in "true" sets it runs /bin/true.
gen_kevent() { # dir rules last-rule-runs(0|1)
	bench_rules "$1" "$2" "$3" "[$bin/bench-stamp, $tmp/done, \"0\"]"
}
# acpid: one rule file per rule, as acpid wants: rule k is the regex
# "^bench/x<k> X<k> " running /bin/true (through /bin/sh -c, as acpid does);
# plus the rule that ends a run by creating a marker file.
gen_acpid() { # dir rules
	mkdir -p "$1"
	awk -v n="$2" -v dir="$1" 'BEGIN {
		for (k = 0; k < n; k++) {
			f = sprintf("%s/r%05d", dir, k)
			print "event=^bench/x" k " X" k " [0-9a-f]+" > f
			print "action=/bin/true" > f
			close(f)
		}
	}'
	printf 'event=^bench done$\naction=/bin/touch %s\n' "$tmp/acpid.done" >"$1/zz-done"
}
# mdev.conf: line k matches the device name "bench<k>" and runs /bin/true
# (busybox runs @-commands through /bin/sh -c)
gen_mdev() { # file rules
	awk -v n="$2" 'BEGIN { for (k = 0; k < n; k++) print "bench" k "$ 0:0 660 @/bin/true" }' >"$1"
}
for n in 10 1000 10000; do
	gen_kevent "$tmp/kf$n" $n 0
	gen_kevent "$tmp/kt$n" $n 1
	gen_acpid "$tmp/acpid$n" $n
	gen_mdev "$tmp/mdev$n.conf" $n
done
mkdir "$tmp/klat"
cat >"$tmp/klat/10-latency.yaml" <<YAML
rules:
  - name: latency
    match: {type: power, signal: latency}
    run: [$bin/bench-stamp, $tmp/latency, "\${KEVENT_T}"]
YAML
chmod 0644 "$tmp/klat"/*.yaml
mkdir "$tmp/k1000files"
i=0
while [ $i -lt 1000 ]; do
	printf 'rules:\n  - name: f%d\n    match: {type: power, signal: s%d, object: "/org/kernel/bench/*"}\n    run: [/bin/true]\n' \
		$i $i >"$tmp/k1000files/$(printf %04d $i)-file.yaml"
	i=$((i + 1))
done
chmod 0644 "$tmp/k1000files"/*.yaml

# ----------------------------------------------------------------- helpers
put() { echo "$2" >>"$tmp/res/$1"; } # key value
now_ns() { date +%s%N; }
ctl=$tmp/control
# starts keventd and sets started_us: from exec to the control socket
# accepting (keventd loads its rules before it opens the socket)
kstart() { # rules-dir
	rm -f "$ctl"
	t0=$(now_ns)
	"$keventd" --rules-dir "$1" --control "$ctl" --sources socket --log-level err \
		2>>"$tmp/keventd.log" &
	kpid=$!
	started_us=$("$bin/bench-raw" wait "$ctl" "$t0")
}
kstop() {
	kill -TERM "$kpid"
	wait "$kpid" || true
	kpid=
}
# resident KiB: all (VmRSS), or one part (RssAnon: the heap and other
# private memory; RssFile: the program and its libraries, shared with
# every process that maps them)
rss_kib() { awk -v f="${2:-VmRSS}:" '$1 == f { print $2 }' "/proc/$1/status"; }
put_rss() { # key pid
	put "$1" "$(rss_kib "$2")"
	put "$1.anon" "$(rss_kib "$2" RssAnon)"
	put "$1.file" "$(rss_kib "$2" RssFile)"
}
# the machine's busy time so far (user, nice, system, irq, softirq), in
# clock ticks: a run's CPU cost, unlike its rate, does not move when the
# host lends this VM less time
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
cpu_us_per() { # ticks-before ticks-after runs
	awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.0f\n", (b - a) * 1e6 / hz / n }'
}
# loadgen's line: "events N  accepted in Xs (A/s)  handled in Ys (H/s)"
accepted() { sed -n 's/.*accepted in [^(]*(\([0-9]*\)\/s).*/\1/p'; }
handled() { sed -n 's/.*handled in [^(]*(\([0-9]*\)\/s).*/\1/p'; }

# acpid in the foreground, reading its "event file" (a FIFO); stops by
# itself when the writer closes the FIFO.
acpid_run() { # rules events match-rule(-1: none)
	rm -f "$tmp/fifo" "$tmp/acpid.done"
	mkfifo "$tmp/fifo"
	"$acpid" -f -c "$tmp/acpid$1" -e "$tmp/fifo" -S -L "$tmp/acpid.lock" \
		-p "$tmp/acpid.pid" >/dev/null 2>&1 &
	apid=$!
	"$bin/bench-raw" feed "$tmp/fifo" "$2" "$3" "$tmp/acpid.done"
	wait "$apid" 2>/dev/null || true
	apid=
}

# busybox mdev once per event, as /sbin/hotplug: a fresh process per event,
# with the uevent in its environment, one at a time.  A private mount
# namespace gives it our mdev.conf and an empty /dev.
mdev_run() { # rules events
	[ -e /etc/mdev.conf ] || { : >/etc/mdev.conf && made_mdev_conf=1; }
	k=$(($1 - 1))
	unshare -m sh -c "mount --bind '$tmp/mdev$1.conf' /etc/mdev.conf &&
		mount -t tmpfs none /dev && exec env -i ACTION=add SUBSYSTEM=bench \
		DEVPATH=/devices/virtual/bench/bench$k '$bin/bench-raw' spawn $2 1 '$busybox' mdev"
	if [ "${made_mdev_conf:-0}" = 1 ]; then rm -f /etc/mdev.conf && made_mdev_conf=0; fi
}

# ------------------------------------------------------------------- rounds
one_round() {
	put raw.dgram "$("$bin/bench-raw" dgram 300000)"
	put raw.seqpacket "$("$bin/bench-raw" seqpacket 300000)"
	put raw.echo "$("$bin/bench-raw" echo 300000)"
	put raw.spawn1 "$("$bin/bench-raw" spawn 2000 1 /bin/true)"
	b0=$(busy_ticks)
	put raw.spawn8 "$("$bin/bench-raw" spawn 2000 8 /bin/true)"
	put raw.spawn8.cpu "$(cpu_us_per "$b0" "$(busy_ticks)" 2000)"
	put raw.sh1 "$("$bin/bench-raw" spawn 1000 1 /bin/sh -c /bin/true)"

	# intake + matching, no handler
	for n in 10 1000 10000; do
		kstart "$tmp/kf$n"
		# RSS with the rules loaded (before the storm: loadgen's "status
		# --json" polls render every rule's counters, which the heap keeps)
		[ $n = 10000 ] && put_rss kev.rss10000 $kpid
		put "kev.post.$n" "$("$bin/loadgen" --post "$ctl" 200000 64 64 s$((n - 1)) | accepted)"
		put "kev.intake.$n" "$("$bin/loadgen" "$ctl" 200000 64 64 s$((n - 1)) | accepted)"
		kstop
	done
	put acpid.nomatch.10 "$(acpid_run 10 20000 -1)"
	put acpid.nomatch.1000 "$(acpid_run 1000 4000 -1)"
	put acpid.nomatch.10000 "$(acpid_run 10000 500 -1)"

	# handlers: a no-op handler per event, the rule counts in a different
	# order each round (1, 2, 3, then again), so that no count always runs
	# in the same spot of the round, right after the same other program
	case $(($1 % 3)) in
	1) order="10 1000 10000" ;;
	2) order="1000 10000 10" ;;
	*) order="10000 10 1000" ;;
	esac
	for n in $order; do
		kstart "$tmp/kt$n"
		[ $n = 10 ] && put_rss kev.idle.rss $kpid
		# 64 objects: up to --max-children (8) in flight
		b0=$(busy_ticks)
		put "kev.run8.$n" "$("$bin/loadgen" "$ctl" 3000 64 64 s$((n - 1)) "$tmp/done" | handled)"
		put "kev.run8.$n.cpu" "$(cpu_us_per "$b0" "$(busy_ticks)" 3064)"
		# 1 object: one at a time
		[ $n = 10 ] && put kev.run1 "$("$bin/loadgen" "$ctl" 1500 1 64 s9 "$tmp/done" | handled)"
		kstop
	done
	put acpid.true.10 "$(acpid_run 10 600 9)"
	put acpid.true.1000 "$(acpid_run 1000 400 999)"
	put acpid.true.10000 "$(acpid_run 10000 150 9999)"
	put mdev.10 "$(mdev_run 10 500)"
	put mdev.1000 "$(mdev_run 1000 400)"
	put mdev.10000 "$(mdev_run 10000 150)"

	# latency at 100 events/s (10 s: 1,000 samples, so p99 is not 3 of them),
	# and the same without keventd: the spawn's own share
	kstart "$tmp/klat"
	lat=$("$bin/bench-latency" "$ctl" 100 1000 "$tmp/latency")
	put kev.lat.median "${lat% *}"
	put kev.lat.p99 "${lat#* }"
	kstop
	# the floor: the same handler spawned at the same pace, with no keventd
	lat=$("$bin/bench-latency" --raw "$bin/bench-stamp" 100 1000 "$tmp/latency")
	put raw.lat.median "${lat% *}"
	put raw.lat.p99 "${lat#* }"

	# load and reload of 1,000 rule files (one rule each)
	kstart "$tmp/k1000files"
	put kev.load1000 "$started_us"
	touch "$tmp/k1000files"/*.yaml # every file changed: a full re-parse
	t0=$(now_ns)
	"$keventctl" --control "$ctl" reload >/dev/null
	t1=$(now_ns)
	put kev.reload1000 $(((t1 - t0) / 1000))
	t0=$(now_ns)
	"$keventctl" --control "$ctl" reload >/dev/null
	t1=$(now_ns)
	put kev.reload1000same $(((t1 - t0) / 1000))
	kstop
	# start-up with no rules, to tell loading from starting
	mkdir -p "$tmp/kempty"
	kstart "$tmp/kempty"
	put kev.load0 "$started_us"
	kstop
}

r=1
while [ $r -le "$rounds" ]; do
	echo "run-bench: round $r of $rounds" >&2
	one_round $r
	r=$((r + 1))
done
load_end=$(cut -d' ' -f1 /proc/loadavg)

# ------------------------------------------------------------------- table
med() { sort -n "$tmp/res/$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for f in "$tmp"/res/*; do
	echo "$(basename "$f") $(med "$(basename "$f")")"
done >"$tmp/medians"
awk -v cpus="$(nproc)" -v rounds="$rounds" -v l0="$load_start" -v l1="$load_end" \
	-v kver="$("$keventd" --version 2>/dev/null | head -n1)" \
	-v aver="$("$acpid" -v 2>&1 | head -n1)" \
	-v bver="$("$busybox" 2>&1 | head -n1 | cut -d' ' -f1-2)" '
function g(k) { return (k in m) ? m[k] : -1 }
function num(x) { # 12345 -> 12,345
	if (x < 0) return "-"
	s = sprintf("%.0f", x); out = ""
	while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
	return s out
}
function pct(a, b) { return (a < 0 || b <= 0) ? "-" : sprintf("%.0f %%", 100 * a / b) }
function row(label, a, b, c, note) { printf "  %-52s %10s %10s %10s   %s\n", label, a, b, c, note }
function head(t) { printf "\n%s\n", t }
{ m[$1] = $2 }
END {
	printf "keventd benchmark: %s CPUs, %s rounds interleaved, medians; load average %s at start, %s at end\n", cpus, rounds, l0, l1
	printf "(%s; %s; %s)\n", kver, aver, bver
	dg = g("raw.dgram"); sp = g("raw.seqpacket"); s1 = g("raw.spawn1"); s8 = g("raw.spawn8")
	head("Raw limits of this machine (per second)")
	row("AF_UNIX SOCK_DGRAM, 200 B, 1 sender -> 1 receiver", num(dg), "", "", "messages")
	row("AF_UNIX SOCK_SEQPACKET, same", num(sp), "", "", "messages")
	row("SOCK_SEQPACKET request + reply, both sides batched", num(g("raw.echo")), "", "", "requests (ceiling of any request/reply intake)")
	row("posix_spawn + waitpid of /bin/true, 1 in flight", num(s1), "", "", "runs")
	row("posix_spawn + waitpid of /bin/true, 8 in flight", num(s8), "", "", "runs (8 = keventd --max-children default here)")
	row("posix_spawn of /bin/sh -c /bin/true, 1 in flight", num(g("raw.sh1")), "", "", "runs (what acpid and mdev pay per action)")
	printf "\n  %-52s %10s %10s %10s\n", "", "10 rules", "1,000", "10,000"
	head("Intake + matching, no handler (events/s)")
	row("acpid, FIFO, events matching no rule", num(g("acpid.nomatch.10")), num(g("acpid.nomatch.1000")), num(g("acpid.nomatch.10000")), "")
	row("  as a share of raw SOCK_DGRAM", pct(g("acpid.nomatch.10"), dg), pct(g("acpid.nomatch.1000"), dg), pct(g("acpid.nomatch.10000"), dg), "")
	row("keventd, control socket, post (1 message/event)", num(g("kev.post.10")), num(g("kev.post.1000")), num(g("kev.post.10000")), "event matches 1 rule")
	row("  as a share of raw SOCK_DGRAM", pct(g("kev.post.10"), dg), pct(g("kev.post.1000"), dg), pct(g("kev.post.10000"), dg), "target >= 50 %")
	row("  as a share of raw SOCK_SEQPACKET", pct(g("kev.post.10"), sp), pct(g("kev.post.1000"), sp), pct(g("kev.post.10000"), sp), "")
	row("keventd, control socket, send (request + reply)", num(g("kev.intake.10")), num(g("kev.intake.1000")), num(g("kev.intake.10000")), "what keventctl send uses")
	row("  as a share of raw SOCK_DGRAM", pct(g("kev.intake.10"), dg), pct(g("kev.intake.1000"), dg), pct(g("kev.intake.10000"), dg), "")
	row("  as a share of the request/reply ceiling", pct(g("kev.intake.10"), g("raw.echo")), pct(g("kev.intake.1000"), g("raw.echo")), pct(g("kev.intake.10000"), g("raw.echo")), "")
	head("Handler runs, each event runs one no-op handler (runs/s)")
	row("busybox mdev per event (/sbin/hotplug), 1 at a time", num(g("mdev.10")), num(g("mdev.1000")), num(g("mdev.10000")), "")
	row("acpid, FIFO, action /bin/true (via /bin/sh -c)", num(g("acpid.true.10")), num(g("acpid.true.1000")), num(g("acpid.true.10000")), "")
	row("  as a share of raw spawn, 1 in flight", pct(g("acpid.true.10"), s1), pct(g("acpid.true.1000"), s1), pct(g("acpid.true.10000"), s1), "")
	row("keventd, 64 objects (8 in flight), run: [/bin/true]", num(g("kev.run8.10")), num(g("kev.run8.1000")), num(g("kev.run8.10000")), "")
	row("  as a share of raw spawn, 8 in flight", pct(g("kev.run8.10"), s8), pct(g("kev.run8.1000"), s8), pct(g("kev.run8.10000"), s8), "target >= 90 %")
	row("  CPU time of the whole machine per run (us)", num(g("kev.run8.10.cpu")), num(g("kev.run8.1000.cpu")), num(g("kev.run8.10000.cpu")), sprintf("raw spawn, 8 in flight: %s", num(g("raw.spawn8.cpu"))))
	row("keventd, 1 object (1 in flight), run: [/bin/true]", num(g("kev.run1")), "", "", "")
	row("  as a share of raw spawn, 1 in flight", pct(g("kev.run1"), s1), "", "", "target >= 90 %")
	head("keventd latency, footprint, loading")
	row("send -> handler start at 100 events/s, median (us)", num(g("kev.lat.median")), "", "", sprintf("raw posix_spawn alone: %s", num(g("raw.lat.median"))))
	row("send -> handler start at 100 events/s, p99 (us)", num(g("kev.lat.p99")), "", "", sprintf("target < 2,000; raw posix_spawn alone: %s", num(g("raw.lat.p99"))))
	row("RSS idle, 10 rules (KiB)", num(g("kev.idle.rss")), "", "", "")
	row("  of which RssAnon (KiB)", num(g("kev.idle.rss.anon")), "", "", "private: heap, rules, stacks")
	row("  of which RssFile (KiB)", num(g("kev.idle.rss.file")), "", "", "keventd and its libraries")
	row("RSS with 10,000 rules (KiB)", num(g("kev.rss10000")), "", "", "target < 8,192")
	row("  of which RssAnon (KiB)", num(g("kev.rss10000.anon")), "", "", "")
	row("  of which RssFile (KiB)", num(g("kev.rss10000.file")), "", "", "")
	row("start-up to ready, no rules (ms)", sprintf("%.1f", g("kev.load0") / 1000), "", "", "")
	row("start-up to ready, 1,000 rule files (ms)", sprintf("%.1f", g("kev.load1000") / 1000), "", "", sprintf("target < 200; loading alone ~ %.1f", (g("kev.load1000") - g("kev.load0")) / 1000))
	row("reload, all 1,000 files changed (ms)", sprintf("%.1f", g("kev.reload1000") / 1000), "", "", "keventctl reload, round trip")
	row("reload, no file changed (ms)", sprintf("%.1f", g("kev.reload1000same") / 1000), "", "", "")
}' "$tmp/medians"

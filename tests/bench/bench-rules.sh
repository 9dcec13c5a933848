# SPDX-License-Identifier: GPL-2.0-or-later
# The benchmarks' rule sets (sourced, not run): RULES rules in files of
# 1,000 in DIR, rule k matching (power, signal s<k>, object
# /org/kernel/bench/*), the events of a benchmark matching the last one.
# RUNS: "none", no rule runs anything; "0", every rule but the last runs
# /bin/true; "1", every rule does.  DONE, when given, is the run: list of
# loadgen's sentinel rule (signal done; see loadgen.c).
bench_rules() { # dir rules runs [done-run-list]
	mkdir -p "$1"
	awk -v n="$2" -v dir="$1" -v runs="$3" 'BEGIN {
		for (k = 0; k < n; k++) {
			if (k % 1000 == 0) {
				if (f) close(f)
				f = sprintf("%s/%05d-bench.yaml", dir, k / 1000)
				print "rules:" > f
			}
			print "  - name: r" k > f
			print "    match: {type: power, signal: s" k ", object: \"/org/kernel/bench/*\"}" > f
			if (runs != "none" && (k < n - 1 || runs == "1"))
				print "    run: [/bin/true]" > f
		}
	}'
	[ $# -lt 4 ] || printf 'rules:\n  - name: done\n    match: {type: power, signal: done}\n    run: %s\n' \
		"$4" >"$1/99999-done.yaml"
	chmod 0644 "$1"/*.yaml
}

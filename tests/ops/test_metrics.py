# SPDX-License-Identifier: GPL-2.0-or-later
"""keventctl status --prometheus against a real keventd: the format, checked
by a strict parser (promparse.py), and the numbers, checked against the
events sent and against status --json."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
sys.path.insert(0, HERE)
import kdtest  # noqa: E402  the integration tests' harness
import promparse  # noqa: E402

HOSTILE = 'q"uote\\back\\nslash'  # a rule name every label escape is needed for


class Metrics(kdtest.DaemonTest):
    def setUp(self):
        super().setUp()
        s = self.s
        self.file = s.write_rule("10-metrics.yaml", """rules:
  - name: %s
    match: {signal: ok}
    run: %s
  - name: fails
    match: {signal: bad}
    shell: 'exit 3'
  - name: never
    match: {signal: nothing-sends-this}
""" % (kdtest.yq(HOSTILE), self.h("append", s.path("out", "ran"), "x", s.fifo.path)))

    def scrape(self, d):
        r = d.ctl("status", "--prometheus", check=0)
        try:
            return promparse.parse(r.stdout)
        except promparse.FormatError as e:
            self.fail("%s\n--- output:\n%s" % (e, r.stdout))

    def test_format_and_counters(self):
        d = self.start()
        fam = self.scrape(d)  # before any event: everything zero, still well-formed
        self.assertEqual(promparse.value(fam, "keventd_events_received_total", source="socket"), 0)

        d.send("general", "/org/kernel/test/a", "ok")
        self.s.fifo.line()
        d.send("general", "/org/kernel/test/b", "bad")
        d.send("general", "/org/kernel/test/c", "unmatched")
        st = d.wait_idle(3)
        fam = self.scrape(d)
        v = lambda name, **l: promparse.value(fam, "keventd_" + name, **l)  # noqa: E731

        for src in ("kernel", "udev", "thermal", "socket"):
            self.assertEqual(v("events_received_total", source=src),
                             st["sources"][src]["received"])
            self.assertEqual(v("events_rejected_total", source=src),
                             st["sources"][src]["rejected"])
            self.assertEqual(v("receive_overruns_total", source=src),
                             st["sources"][src]["overruns"])
            self.assertEqual(v("events_lost_total", source=src), st["sources"][src]["lost"])
            self.assertEqual(v("queue_source_pending", source=src), st["sources"][src]["pending"])
            self.assertEqual(v("queue_source_share", source=src), st["sources"][src]["share"])
            self.assertEqual(v("queue_source_paused", source=src),
                             int(st["sources"][src]["paused"]))
            self.assertEqual(v("queue_source_pauses_total", source=src),
                             st["sources"][src]["paused_times"])
        self.assertEqual(v("events_received_total", source="socket"), 3)
        self.assertEqual(v("events_matched_total"), 2)
        self.assertEqual(v("events_handled_total"), 3)
        self.assertEqual(v("handler_runs_total"), 2)
        self.assertEqual(v("handler_failures_total"), 1)
        self.assertEqual(v("handler_timeouts_total"), 0)
        self.assertEqual(v("rules"), 3)
        self.assertEqual(v("rule_files"), 1)
        self.assertEqual(v("build_info", version=os.environ.get("KEVENT_VERSION", "0.1.0")), 1)
        # JSON's runs/queue/control/ruleset counters, each under its name
        pairs = {"runs": {"started": "handler_runs_total", "failures": "handler_failures_total",
                          "timeouts": "handler_timeouts_total",
                          "ratelimited": "handler_ratelimited_total",
                          "dry_run": "handler_dry_runs_total",
                          "debounced": "handler_debounced_total",
                          "output_dropped_bytes": "handler_output_dropped_bytes_total",
                          "ratelimit_full": "handler_ratelimit_full_total"},
                 "events": {"handled": "events_handled_total",
                            "ratelimited": "events_ratelimited_total",
                            "debounced": "events_debounced_total",
                            "matched": "events_matched_total", "pending": "events_pending"},
                 "queue": {"running": "queue_running", "max_children": "queue_max_children",
                           "size": "queue_size", "paused_times": "queue_pauses_total"},
                 "control": {"refused": "control_refused_total",
                             "bad_requests": "control_bad_requests_total",
                             "over_limit": "control_over_limit_total",
                             "monitor_dropped": "monitor_dropped_total",
                             "over_user_limit": "control_over_user_limit_total",
                             "root_slot_refused": "control_root_slot_refused_total",
                             "idle_dropped": "control_idle_dropped_total",
                             "triggers_refused": "control_triggers_refused_total"},
                 "history": {"entries": "history_entries", "capacity": "history_capacity",
                             "bytes": "history_bytes", "not_kept": "history_not_kept_total"},
                 "ruleset": {"rules": "rules", "files": "rule_files",
                             "reloads": "reloads_total", "reload_errors": "reload_errors_total",
                             "broken": "rule_files_broken"}}
        for group, names in pairs.items():
            for jname, pname in names.items():
                self.assertEqual(v(pname), st[group][jname], "%s.%s" % (group, jname))

        # per rule, with rule and file labels; the hostile name round-trips
        for r in st["rules"]:
            lab = {"rule": r["name"], "file": r["file"]}
            self.assertEqual(v("rule_matched_total", **lab), r["matched"])
            self.assertEqual(v("rule_runs_total", **lab), r["runs"])
            self.assertEqual(v("rule_failures_total", **lab), r["failures"])
            self.assertEqual(v("rule_timeouts_total", **lab), r["timeouts"])
            self.assertEqual(v("rule_ratelimited_total", **lab), r["ratelimited"])
            self.assertEqual(v("rule_debounced_total", **lab), r["debounced"])
        self.assertEqual(v("rule_runs_total", rule=HOSTILE, file=self.file), 1)
        self.assertEqual(v("rule_failures_total", rule="fails", file=self.file), 1)
        self.assertEqual(v("rule_matched_total", rule="never", file=self.file), 0)
        for name, f in fam.items():
            self.assertTrue(name.startswith("keventd_"), name)
            self.assertTrue(f["help"], name)
        d.stop_ok(self)

    def test_parser_is_strict(self):
        good = "# HELP a_total x\n# TYPE a_total counter\na_total{l=\"v\"} 1\n"
        promparse.parse(good)
        bad = [
            good.replace("a_total", "a"),  # counter without _total
            "a_total 1\n",  # no HELP/TYPE
            good.replace('"v"', '"v\\x"'),  # bad escape
            good.replace("l=", "1l="),  # bad label name
            good.replace("a_total{", "a-total{"),  # bad metric name
            good + good,  # family twice
            good[:-1],  # no final newline
            good.replace("} 1", "} 1 1700000000"),  # timestamp
            good + "a_total{l=\"v\"} 2\n",  # duplicate series
        ]
        for text in bad:
            with self.assertRaises(promparse.FormatError, msg=repr(text)):
                promparse.parse(text)

    def test_usage(self):
        d = self.start()
        r = d.ctl("status", "--json", "--prometheus")
        self.assertEqual(r.returncode, 2, r.stderr)
        r = d.ctl("status", "--help", check=0)
        self.assertIn("--prometheus", r.stdout)


if __name__ == "__main__":
    kdtest.main()

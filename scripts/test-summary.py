#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What one ctest run covered, a line per label: how many tests ran (and of
those how many failed), how many skipped, how many did not run (a fixture
they need failed); then each skipped test with its reason, the first line
its output starts with "SKIP".

Usage: test-summary.py BUILD_DIR JUNIT_XML TITLE
JUNIT_XML is what `ctest --output-junit` wrote; the labels come from
`ctest --show-only=json-v1` in BUILD_DIR, which the JUnit file lacks.
"""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def labels_of(build):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True,
                         text=True, check=True).stdout
    labels = {}
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels[t["name"]] = props.get("LABELS") or ["(no label)"]
    return labels


def reason(case):
    out = case.findtext("system-out") or ""
    for line in out.splitlines():
        if line.lstrip().upper().startswith("SKIP"):
            return line.strip()
    return "no reason printed"


def main():
    build, junit, title = sys.argv[1:4]
    labels = labels_of(build)
    counts = {}
    skipped = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name, status = case.get("name"), case.get("status")
        skip = case.find("skipped")
        if status == "run":
            kind = "passed"
        elif status == "fail":
            kind = "failed"
        elif skip is not None and skip.get("message", "").startswith("SKIP_"):
            kind = "skipped"
            skipped.append((name, reason(case)))
        else:
            kind = "notrun"
        for label in labels.get(name, ["(no label)"]):
            c = counts.setdefault(label, {"passed": 0, "failed": 0, "skipped": 0, "notrun": 0})
            c[kind] += 1
    print("== summary: %s ==" % title)
    for label in sorted(counts):
        c = counts[label]
        line = "%s: %d ran (%d failed), %d skipped" % (
            label, c["passed"] + c["failed"], c["failed"], c["skipped"])
        if c["notrun"]:
            line += ", %d not run (a test they need failed)" % c["notrun"]
        print(line)
    for name, why in skipped:
        print("skipped: %s: %s" % (name, why))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-2.0-or-later
"""A small, strict parser of the Prometheus text exposition format 0.0.4.

parse(text) returns {family: {"help": str, "type": str, "samples":
[(name, {label: value}, float)]}} or raises FormatError naming the line.
Stricter than Prometheus itself where keventd has no reason to differ:
HELP and TYPE precede every family's samples, a family's samples are
contiguous, counters end in _total, no empty lines, no other comments,
no timestamps, no duplicate series, and the text ends in a newline.
"""
import math
import re

METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class FormatError(Exception):
    pass


def _unescape_help(s, where):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s) or s[i + 1] not in "\\n":
                raise FormatError("%s: bad escape in HELP" % where)
            out.append("\\" if s[i + 1] == "\\" else "\n")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _labels(s, where):
    """Parses 'a="x",b="y"' (what is inside the braces)."""
    labels, i = {}, 0
    while i < len(s):
        eq = s.find("=", i)
        if eq < 0:
            raise FormatError("%s: label without '='" % where)
        name = s[i:eq]
        if not LABEL.match(name) or name.startswith("__"):
            raise FormatError("%s: bad label name %r" % (where, name))
        if name in labels:
            raise FormatError("%s: label %r twice" % (where, name))
        if eq + 1 >= len(s) or s[eq + 1] != '"':
            raise FormatError("%s: label value of %r not quoted" % (where, name))
        j, val = eq + 2, []
        while True:
            if j >= len(s):
                raise FormatError("%s: unterminated label value" % where)
            c = s[j]
            if c == "\\":
                nxt = s[j + 1] if j + 1 < len(s) else ""
                if nxt not in ('\\', '"', 'n'):
                    raise FormatError("%s: bad escape \\%s in label value" % (where, nxt))
                val.append({"\\": "\\", '"': '"', "n": "\n"}[nxt])
                j += 2
            elif c == '"':
                break
            elif c == "\n":
                raise FormatError("%s: raw newline in label value" % where)
            else:
                val.append(c)
                j += 1
        labels[name] = "".join(val)
        i = j + 1
        if i < len(s):
            if s[i] != ",":
                raise FormatError("%s: expected ',' after label %r" % (where, name))
            i += 1
            if i == len(s):
                break  # a trailing comma is allowed
    return labels


def _value(s, where):
    if s in ("+Inf", "-Inf", "NaN"):
        return float(s.replace("Inf", "inf").replace("NaN", "nan"))
    try:
        v = float(s)
    except ValueError:
        raise FormatError("%s: bad value %r" % (where, s))
    if math.isnan(v) or math.isinf(v):
        raise FormatError("%s: bad value %r" % (where, s))
    return v


def parse(text):
    if not text.endswith("\n"):
        raise FormatError("the text does not end in a newline")
    families, current, done = {}, None, set()
    for n, line in enumerate(text[:-1].split("\n"), 1):
        where = "line %d (%r)" % (n, line)
        if not line:
            raise FormatError("%s: empty line" % where)
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) < 4 or parts[0] != "#" or parts[1] not in ("HELP", "TYPE"):
                raise FormatError("%s: a comment other than HELP or TYPE" % where)
            _, kind, name, rest = parts
            if not METRIC.match(name):
                raise FormatError("%s: bad metric name %r" % (where, name))
            if name != current:
                if name in done or name in families:
                    raise FormatError("%s: family %s is not contiguous" % (where, name))
                if current:
                    done.add(current)
                current = name
                families[name] = {"help": None, "type": None, "samples": []}
            fam = families[name]
            if fam["samples"]:
                raise FormatError("%s: %s after samples" % (where, kind))
            if kind == "HELP":
                if fam["help"] is not None:
                    raise FormatError("%s: second HELP" % where)
                fam["help"] = _unescape_help(rest, where)
            else:
                if fam["type"] is not None:
                    raise FormatError("%s: second TYPE" % where)
                if rest not in TYPES:
                    raise FormatError("%s: unknown type %r" % (where, rest))
                if rest == "counter" and not name.endswith("_total"):
                    raise FormatError("%s: counter %s does not end in _total" % (where, name))
                fam["type"] = rest
            continue
        m = re.match(r"([^{ ]+)(?:\{(.*)\})? (\S+)\Z", line)
        if not m:
            raise FormatError("%s: not a sample (or has a timestamp)" % where)
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        if not METRIC.match(name):
            raise FormatError("%s: bad metric name %r" % (where, name))
        if name != current:
            raise FormatError("%s: sample of %s outside its family (HELP/TYPE first)"
                              % (where, name))
        fam = families[name]
        if fam["help"] is None or fam["type"] is None:
            raise FormatError("%s: %s has no %s" % (where, name,
                                                     "HELP" if fam["help"] is None else "TYPE"))
        lab = _labels(labels, where)
        key = tuple(sorted(lab.items()))
        if any(tuple(sorted(l.items())) == key for _, l, _ in fam["samples"]):
            raise FormatError("%s: duplicate series" % where)
        v = _value(value, where)
        if fam["type"] == "counter" and v < 0:
            raise FormatError("%s: negative counter" % where)
        fam["samples"].append((name, lab, v))
    for name, fam in families.items():
        if fam["help"] is None or fam["type"] is None:
            raise FormatError("family %s lacks HELP or TYPE" % name)
    return families


def value(families, name, **labels):
    """The value of one series; KeyError when absent."""
    for _, lab, v in families[name]["samples"]:
        if lab == labels:
            return v
    raise KeyError("%s%r" % (name, labels))

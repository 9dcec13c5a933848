#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-layers.py BUILD_SRC_DIR: keeps libkevent's shape (docs/HACKING.md).

Reads the symbols of the static libraries in BUILD_SRC_DIR (nm) and fails
when
  - an object file of a library uses a symbol defined in a library that is
    not below it in LAYERS (a call in the wrong direction), or
  - object files use each other's symbols in a cycle (A -> B -> ... -> A),
    inside a library or across them, or
  - a program in PROGRAMS includes a header or uses a symbol beyond its
    face: keventd sees the daemon through src/daemon/daemon.h alone.
Prints each problem; exit 1 if any, 0 otherwise, 77 when nm is missing."""
import os
import re
import shutil
import subprocess
import sys

# Each library and the libraries it may use (besides itself).
LAYERS = {
    "base": set(),
    "event": {"base"},
    "rules": {"event", "base"},
    "exec": {"rules", "event", "base"},
    "cond": {"rules", "event", "base"},
    "sources": {"event", "base"},
    "outputs": {"exec", "sources", "rules", "event", "base"},
    "control": {"exec", "sources", "rules", "event", "base"},
    "users": {"control", "outputs", "exec", "sources", "rules", "event", "base"},
    "daemon": {"users", "control", "outputs", "cond", "exec", "sources", "rules", "event",
               "base"},
}

# Each program's source, its object under the build directory, the one
# header of libkevent above base it may include, and the libraries whose
# symbols it may use besides the functions that header declares.
PROGRAMS = {
    "keventd/keventd.c": ("keventd/CMakeFiles/keventd.dir/keventd.c.o",
                          "src/daemon/daemon.h", {"base", "event"}),
}
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def symbols(lib):
    """{object: (defined, used)} of one archive, from nm's POSIX format:
    "LIB[OBJ]: NAME TYPE ..."."""
    out = subprocess.run(["nm", "-A", "-P", lib], capture_output=True, text=True,
                         check=True).stdout
    objs = {}
    for line in out.splitlines():
        head, _, rest = line.partition("]: ")
        parts = rest.split()
        if not rest or len(parts) < 2 or "[" not in head:
            continue
        obj = head[head.rindex("[") + 1:]
        defined, used = objs.setdefault(obj, (set(), set()))
        if parts[1] == "U":
            used.add(parts[0])
        elif parts[1].isupper() and parts[1] not in ("N",):
            defined.add(parts[0])
    return objs


def find_cycles(edges):
    """The strongly connected components of 2+ nodes (iterative Tarjan)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def declared(header):
    """The names a header declares as functions (comments left out)."""
    with open(os.path.join(SOURCE, header)) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    return set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text))


def check_program(src, obj, header, libs, build, where):
    """The problems of one program: an include beyond its header and
    base's, a symbol of a library beyond libs that its header does not
    declare."""
    problems = []
    base = set(os.listdir(os.path.join(SOURCE, "src", "base")))
    allowed = {os.path.basename(header), "config.h"} | {h for h in base if h.endswith(".h")}
    with open(os.path.join(SOURCE, src)) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and m.group(1) not in allowed:
                problems.append("%s:%d includes %s: it sees the daemon through %s alone"
                                % (src, n, m.group(1), header))
    path = os.path.join(build, obj)
    if not os.path.exists(path):
        return problems + ["check-layers: %s is missing: build first" % path]
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True,
                         check=True).stdout
    faces = declared(header)
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[1] != "U" or parts[0] not in where:
            continue
        lib, o = where[parts[0]]
        if lib not in libs and parts[0] not in faces:
            problems.append("%s uses %s of %s/%s: not in %s"
                            % (src, parts[0], lib, o, header))
    return problems


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if not shutil.which("nm"):
        print("check-layers: nm is missing (binutils)")
        sys.exit(77)
    where = {}   # symbol -> (library, object)
    objects = {}  # (library, object) -> used symbols
    for name in LAYERS:
        lib = os.path.join(sys.argv[1], "libkevent-%s.a" % name)
        if not os.path.exists(lib):
            print("check-layers: %s is missing: build first" % lib)
            sys.exit(1)
        for obj, (defined, used) in symbols(lib).items():
            objects[(name, obj)] = used
            for s in defined:
                where[s] = (name, obj)
    built = {f[len("libkevent-"):-2] for f in os.listdir(sys.argv[1])
             if f.startswith("libkevent-") and f.endswith(".a")}
    problems = ["library %s is not in LAYERS: say what it may use" % b
                for b in sorted(built - set(LAYERS))]
    edges = {}
    for (lib, obj), used in sorted(objects.items()):
        for s in sorted(used):
            to = where.get(s)
            if not to or to == (lib, obj):
                continue
            edges.setdefault("%s/%s" % (lib, obj), set()).add("%s/%s" % to)
            if to[0] != lib and to[0] not in LAYERS[lib]:
                problems.append("%s/%s uses %s of %s/%s: %s may not use %s"
                                % (lib, obj, s, to[0], to[1], lib, to[0]))
    for comp in find_cycles(edges):
        problems.append("cycle: " + " <-> ".join(comp))
    build = os.path.dirname(os.path.abspath(sys.argv[1]))
    for src, (obj, header, libs) in sorted(PROGRAMS.items()):
        problems += check_program(src, obj, header, libs, build, where)
    for p in problems:
        print(p)
    print("check-layers: %d objects in %d libraries, %d programs, %d problems"
          % (len(objects), len(LAYERS), len(PROGRAMS), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

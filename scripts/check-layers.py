#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-layers.py BUILD_SRC_DIR: keeps libkevent's shape (docs/HACKING.md).

Reads the symbols of the static libraries in BUILD_SRC_DIR (nm) and fails
when
  - an object file of a library uses a symbol defined in a library that is
    not below it in LAYERS (a call in the wrong direction), or
  - object files use each other's symbols in a cycle (A -> B -> ... -> A),
    inside a library or across them.
Prints each problem; exit 1 if any, 0 otherwise, 77 when nm is missing."""
import os
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
    "daemon": {"control", "outputs", "cond", "exec", "sources", "rules", "event", "base"},
}


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
    for p in problems:
        print(p)
    print("check-layers: %d objects in %d libraries, %d problems"
          % (len(objects), len(LAYERS), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails if two modules of src/ include each other, directly or through other modules.

A module is a file pair name.c / name.h with its companions name_internal.h, name_generic.h and
name_decl_generic.h (mjcf_parse.c is the module mjcf_parse; mjcf_internal.h belongs to the module mjcf).
Every `#include "..."` of a file of src/ that names another file of src/ is an edge between their modules;
a strongly connected component of more than one module is a cycle, printed with one path around it.

Usage: check_include_cycles.py SRC_DIR   (exit 0: no cycle; 1: cycles, listed)
"""
import os
import re
import sys

SUFFIXES = ("_decl_generic", "_generic")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(name):
    base = os.path.splitext(os.path.basename(name))[0]
    for s in SUFFIXES:
        if base.endswith(s):
            return base[: -len(s)]
    return base


def read_graph(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith((".c", ".h", ".cc")):
                files[n] = os.path.join(root, n)
    graph = {}
    for n, path in sorted(files.items()):
        a = module_of(n)
        graph.setdefault(a, set())
        with open(path, encoding="utf-8", errors="replace") as f:
            for inc in INCLUDE.findall(f.read()):
                if "/" in inc:  # a public header (grit/...) or a library's, not a file of src/
                    continue
                b = inc
                if b in files and module_of(b) != a:
                    graph[a].add(module_of(b))
    return graph


def cycles(graph):
    """Tarjan's strongly connected components of more than one node (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def path_around(graph, comp):
    """One cycle through the component's first module (breadth-first back to it)."""
    members, start = set(comp), comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    graph = read_graph(sys.argv[1])
    found = cycles(graph)
    for comp in found:
        print("include cycle among modules %s: %s" % (", ".join(comp), " -> ".join(path_around(graph, comp))))
    if not found:
        print("no include cycle among %d modules" % len(graph))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

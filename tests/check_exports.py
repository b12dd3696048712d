#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The exported symbols of grit's shared libraries are exactly the functions their public headers declare.

usage: check_exports.py NM LIB.so HEADER... [-- LIB.so HEADER...]...

For each library: the defined dynamic symbols (NM -D --defined-only) must be the functions declared with
GRIT_API / GRIT_ILQR_API in its headers, and every function declaration in those headers (at file scope,
not static inline) must carry the mark. Prints each difference and exits 1 if there is any."""
import re
import subprocess
import sys

MARKED = re.compile(r'^GRIT(?:_ILQR)?_API\b[^;(]*?\b(\w+)\s*\(', re.M)
# A file-scope line starting a function declaration without the mark (types, statics and macros aside).
UNMARKED = re.compile(r'^(?!static\b|typedef\b|extern\b|struct\b|enum\b|union\b|GRIT_|#)[A-Za-z_][^;{}()]*?\b(\w+)\s*\(', re.M)
LINKER = {'_init', '_fini', '_edata', '_end', '__bss_start'}


def declared(headers):
    names, problems = set(), []
    for h in headers:
        text = open(h, encoding='utf-8').read()
        text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
        names.update(MARKED.findall(text))
        for m in UNMARKED.finditer(text):
            line = text.count('\n', 0, m.start()) + 1
            problems.append(f'{h}:{line}: {m.group(1)} is declared without GRIT_API (not exported)')
    return names, problems


# The C++ run-time type information of a dependency's class (urdfdom's console_bridge::OutputHandler,
# subclassed in src/io/urdf_parse.cc) is emitted as a weak, default-visibility symbol wherever the class is
# used: the dependency's ABI, not grit's API.
def foreign_rtti(sym):
    return (sym.startswith('_ZTI') or sym.startswith('_ZTS')) and 'grit' not in sym


def exported(nm, lib):
    out = subprocess.run([nm, '-D', '--defined-only', lib], check=True, capture_output=True, text=True).stdout
    syms = {f.split()[-1].split('@')[0] for f in out.splitlines() if f.strip()} - LINKER
    return {s for s in syms if not foreign_rtti(s)}


def main(argv):
    nm, groups, cur = argv[1], [], []
    for a in argv[2:] + ['--']:
        if a == '--':
            if cur:
                groups.append(cur)
            cur = []
        else:
            cur.append(a)
    failed = False
    for lib, *headers in groups:
        names, problems = declared(headers)
        exp = exported(nm, lib)
        for p in problems:
            print(p)
        for s in sorted(exp - names):
            print(f'{lib}: exports {s}, which no public header declares with GRIT_API')
        for s in sorted(names - exp):
            print(f'{lib}: does not export {s}, declared public')
        failed |= bool(problems or exp - names or names - exp)
        print(f'{lib}: {len(exp)} exported symbols, {len(names)} public declarations')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

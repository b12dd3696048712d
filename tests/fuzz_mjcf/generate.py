#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the MJCF fuzz corpus of tests/test_mjcf.c into this directory, deterministically (fixed seed),
by mutating the valid model files of the repository. Each file's prefix says what the loader must do:

  err_*   fail with an error (the mutation always breaks the XML, a number, a name or a rule)
  warn_*  load, with at least one warning (something unsupported was added)
  bad_*   fail, or load with at least one warning (a renamed element or attribute: which one depends
          on what was renamed)

None may crash or hang. Run from anywhere: python3 tests/fuzz_mjcf/generate.py
"""
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASES = ["examples/models/falling_sphere.xml", "examples/models/sliding_box.xml", "examples/models/sliding_rod.xml",
         "examples/models/conveyor.xml", "examples/models/arm7.xml", "tests/mjcf/defaults.xml",
         "tests/mjcf/inertia.xml", "tests/mjcf/general.xml"]
PER_BASE = 34

# Elements whose every attribute the loader reads or reports (so renaming one is always noticed).
CHECKED = {"mujoco", "compiler", "option", "flag", "body", "inertial", "joint", "freejoint", "geom", "motor",
           "general", "key", "mesh"}
# Numeric attributes the loader parses, per element (a bad number in them is always an error).
NUMERIC = {"option": ["timestep", "gravity"],
           "body": ["pos", "quat", "euler", "axisangle", "xyaxes", "zaxis"],
           "inertial": ["pos", "mass", "diaginertia", "quat", "fullinertia", "euler", "axisangle"],
           "joint": ["pos", "axis", "range", "damping", "armature", "stiffness", "springref", "ref"],
           "geom": ["size", "pos", "quat", "euler", "axisangle", "xyaxes", "zaxis", "fromto", "mass", "density",
                    "friction"],
           "motor": ["gear", "ctrlrange", "forcerange"], "general": ["gear", "ctrlrange", "gainprm"],
           "key": ["qpos", "qvel", "ctrl", "time"]}
# Attributes with an exact count of numbers (one removed is always an error).
EXACT = {"body": ["pos", "quat", "euler", "axisangle", "xyaxes", "zaxis"], "joint": ["pos", "axis", "range"],
         "geom": ["pos", "quat", "fromto"], "inertial": ["pos", "diaginertia"], "option": ["gravity"]}
# Elements into which an unknown child element is reported.
PARENTS = {"body", "worldbody", "default", "asset", "keyframe"}

TAG = re.compile(r"<([A-Za-z_][\w]*)((?:\s+[\w:]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>")
ATTR = re.compile(r"([\w:]+)(\s*=\s*)(\"([^\"]*)\"|'([^']*)')")
COMMENT = re.compile(r"<!--.*?-->", re.S)


def tags(text):
    """Start tags outside comments: (name, start, end, attribute matches, self-closing)."""
    spans = [m.span() for m in COMMENT.finditer(text)]
    out = []
    for m in TAG.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        attrs = [(a, m.start(2) + a.start(), m.start(2) + a.end()) for a in ATTR.finditer(m.group(2))]
        out.append((m.group(1), m.start(), m.end(), attrs, m.group(3) == "/"))
    return out


def default_spans(text):
    """The spans of <default> sections (their elements are only templates)."""
    return [m.span() for m in re.finditer(r"<default\b.*?</default>\s*(?=<(?!/?default)|</mujoco)", text, re.S)]


def outside_defaults(text, cands):
    spans = default_spans(text)
    return [c for c in cands if not any(a <= c[1] < b for a, b in spans)]


def value_span(a, a0):
    v0 = a0 + a.start(3) - a.start() + 1
    return v0, v0 + len(a.group(4) if a.group(4) is not None else a.group(5))


def numeric_attrs(text, exact=False):
    """(start, end) of the values of numeric attributes the loader parses (with <numeric name="grit_*">
    data when not exact)."""
    table = EXACT if exact else NUMERIC
    out = []
    for name, s, e, attrs, _ in tags(text):
        names = {a.group(1): a for a, _, _ in attrs}
        grit_numeric = name == "numeric" and (names["name"].group(4) or "").startswith("grit_") if "name" in names else False
        for a, a0, a1 in attrs:
            if a.group(1) in table.get(name, []) or (grit_numeric and a.group(1) == "data" and not exact):
                out.append(value_span(a, a0))
    return [sp for sp in out if text[sp[0]:sp[1]].strip()]


def replace_token(rng, text, span, new):
    s, e = span
    value = text[s:e]
    toks = list(re.finditer(r"\S+", value))
    if not toks:
        return text[:s] + new + text[e:]
    t = rng.choice(toks)
    return text[:s + t.start()] + new + text[s + t.end():]


def mutate(rng, text, kind):
    """One mutation of `kind`; returns (prefix, new text) or None when the text offers no place for it."""
    end_root = text.rfind("</mujoco>")
    all_tags = tags(text)
    if kind == "truncate":
        return "err", text[:rng.randrange(0, end_root)]
    if kind == "ctrlchar":
        p = rng.randrange(0, len(text))
        c = rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 20, 25, 27, 31])
        return "err", text[:p] + chr(c) + text[p + 1:]
    if kind == "badutf8":
        p = rng.randrange(0, len(text))
        return "err", text[:p] + "\udcff" + text[p + 1:]  # written as the byte 0xFF
    if kind in ("hugenum", "nan", "badnum"):
        spans = numeric_attrs(text)
        if not spans:
            return None
        new = {"hugenum": ["1e999", "-1e400", "1" + "0" * 400, "1e308e"],
               "nan": ["nan", "NaN", "inf", "-inf", "Infinity"],
               "badnum": ["1.2.3", "0x", "--1", "1e", "abc", "1,5", "+-3", "."]}[kind]
        return "err", replace_token(rng, text, rng.choice(spans), rng.choice(new))
    if kind == "countnum":
        spans = numeric_attrs(text, exact=True)
        if not spans:
            return None
        s, e = rng.choice(spans)
        toks = list(re.finditer(r"\S+", text[s:e]))
        t = rng.choice(toks)
        return "err", text[:s + t.start()] + text[s + t.end():]
    if kind == "missingquote":
        cands = [(a0, a1) for _, _, _, attrs, _ in all_tags for _, a0, a1 in attrs]
        a0, a1 = rng.choice(cands)
        return "err", text[:a1 - 1] + text[a1:]
    if kind == "deepnest":
        w = text.find("<worldbody>")
        if w < 0:
            return None
        n = rng.randrange(101, 130)
        w += len("<worldbody>")
        we = text.find("</worldbody>")
        return "err", text[:w] + "<body>" * n + text[w:we] + "</body>" * n + text[we:]
    if kind == "garbage":
        n = rng.randrange(1, 600)
        data = bytes([rng.randrange(0, 9)]) + bytes(rng.randrange(0, 256) for _ in range(n))
        return "err", data
    if kind == "unclosed":
        closes = [m for m in re.finditer(r"</(body|worldbody|default|actuator|keyframe|custom)>", text)]
        if not closes:
            return None
        m = rng.choice(closes)
        return "err", text[:m.start()] + text[m.end():]
    if kind == "dupattr":
        cands = [(s, e, attrs) for _, s, e, attrs, _ in all_tags if attrs]
        s, e, attrs = rng.choice(cands)
        a, a0, a1 = rng.choice(attrs)
        return "err", text[:a1] + " " + text[a0:a1].strip() + text[a1:]
    if kind == "badenum":
        cands = []
        for name, s, e, attrs, _ in all_tags:
            for a, a0, a1 in attrs:
                if (name, a.group(1)) in (("geom", "type"), ("joint", "type"), ("compiler", "angle"),
                                          ("joint", "limited"), ("motor", "ctrllimited"),
                                          ("compiler", "inertiafromgeom")):
                    cands.append((a0 + a.start(3) - a.start() + 1, a1 - 1))
        if not cands:
            return None
        s, e = rng.choice(cands)
        return "err", text[:s] + rng.choice(["tetrahedron", "TRUE", "yes", "", "grad", "spheres"]) + text[e:]
    if kind == "entity":
        return "err", '<!DOCTYPE mujoco [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n' + text
    if kind == "badclass":
        cands = outside_defaults(text, [(name, s, e) for name, s, e, attrs, sc in all_tags
                                        if name in ("geom", "joint", "motor")])
        _, s, e = rng.choice(cands)
        p = s + 1 + len(text[s + 1:e].split()[0].rstrip("/>"))
        return "err", text[:p] + ' class="no_such_class"' + text[p:]
    if kind == "negsize":
        cands = outside_defaults(text, [(name, s, e) for name, s, e, attrs, sc in all_tags
                                        if name == "geom" and "size=" in text[s:e] and "plane" not in text[s:e]])
        if not cands:
            return None
        _, s, e = rng.choice(cands)
        m = re.search(r"size=\"([^\"]*)\"", text[s:e])
        return "err", text[:s + m.start(1)] + "-" + text[s + m.start(1):]
    if kind == "zeroquat":
        orient = ("quat=", "euler=", "axisangle=", "xyaxes=", "zaxis=", "fromto=")
        cands = outside_defaults(text, [(name, s, e) for name, s, e, attrs, sc in all_tags
                                        if name in ("body", "geom") and not any(o in text[s:e] for o in orient)])
        if not cands:
            return None
        _, s, e = rng.choice(cands)
        p = s + 1 + len(text[s + 1:e].split()[0].rstrip("/>"))
        return "err", text[:p] + ' quat="0 0 0 0"' + text[p:]
    if kind == "renameopen":  # the opening tag of an element with content: mismatched tags
        cands = [(name, s) for name, s, e, attrs, sc in all_tags if not sc and name != "mujoco"]
        name, s = rng.choice(cands)
        p = s + 1 + rng.randrange(0, len(name))
        return "err", text[:p] + "Q" + text[p + 1:]
    if kind == "renameselfclosing":  # an unknown element: a warning, or an error for what it removed
        cands = [(name, s) for name, s, e, attrs, sc in all_tags if sc]
        if not cands:
            return None
        name, s = rng.choice(cands)
        p = s + 1 + rng.randrange(0, len(name))
        return "bad", text[:p] + "Q" + text[p + 1:]
    if kind == "renameattr":  # an unknown attribute: a warning, or an error for what it removed
        cands = [(a0, a) for name, s, e, attrs, sc in all_tags if name in CHECKED for a, a0, a1 in attrs]
        a0, a = rng.choice(cands)
        p = a0 + rng.randrange(0, len(a.group(1)))
        return "bad", text[:p] + "Q" + text[p + 1:]
    if kind == "addattr":
        cands = [(s, e) for name, s, e, attrs, sc in all_tags if name in CHECKED]
        s, e = rng.choice(cands)
        p = s + 1 + len(text[s + 1:e].split()[0].rstrip("/>"))
        extra = rng.choice(['x_unknown="1"', 'solref="0.02 1"', 'margin="0.01"', 'solreffriction="0.02 1"', 'gap="0"'])
        return "warn", text[:p] + " " + extra + text[p:]
    if kind == "addelement":
        cands = [(s, e) for name, s, e, attrs, sc in all_tags if name in PARENTS and not sc]
        if not cands:
            return None
        s, e = rng.choice(cands)
        return "warn", text[:e] + rng.choice(["<widget/>", "<replicate count=\"2\"/>", "<plugin/>",
                                              "<replicate count=\"2\"/>"]) + text[e:]
    if kind == "addsection":
        sec = rng.choice(['<sensor><jointpos joint="x"/></sensor>', "<contact><exclude body1=\"a\" body2=\"b\"/></contact>",
                          "<equality><distance/></equality>", "<tendon><widget/></tendon>", "<extension/>",
                          "<deformable/>"])
        return "warn", text[:end_root] + sec + "\n" + text[end_root:]
    raise ValueError(kind)


KINDS = ["truncate", "ctrlchar", "badutf8", "hugenum", "nan", "badnum", "countnum", "missingquote", "deepnest",
         "garbage", "unclosed", "dupattr", "badenum", "entity", "badclass", "negsize", "zeroquat", "renameopen",
         "renameselfclosing", "renameattr", "addattr", "addelement", "addsection"]


def main():
    rng = random.Random(20240611)
    for f in os.listdir(HERE):
        if f.endswith(".xml") and f.split("_")[0] in ("err", "warn", "bad"):
            os.remove(os.path.join(HERE, f))
    count = 0
    for base in BASES:
        with open(os.path.join(ROOT, base), encoding="utf-8") as fh:
            text = fh.read()
        stem = os.path.splitext(os.path.basename(base))[0]
        made, i = 0, 0
        while made < PER_BASE:
            kind = KINDS[i % len(KINDS)] if i < len(KINDS) else rng.choice(KINDS)
            i += 1
            r = mutate(rng, text, kind)
            if r is None:
                continue
            prefix, out = r
            data = out if isinstance(out, bytes) else out.encode("utf-8", "surrogateescape")
            name = "%s_%s_%s_%02d.xml" % (prefix, stem, kind, made)
            with open(os.path.join(HERE, name), "wb") as fh:
                fh.write(data)
            made += 1
            count += 1
    print("wrote %d files" % count)


if __name__ == "__main__":
    main()

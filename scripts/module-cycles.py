#!/usr/bin/env python3
"""Lists cycles between sibling modules of src/ (a `use` of one module by
another, in both directions through any path). Exit 1 when there is one."""
import os, re, sys, itertools

src = os.path.join(os.path.dirname(__file__), "..", "src")
edges = {}
for root, _, files in os.walk(src):
    for f in files:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(root, f)
        rel = os.path.relpath(path, src)[:-3].replace(os.sep, "::")
        rel = rel.removesuffix("::mod")
        if rel in ("lib", "main"):
            continue
        parent = rel.rsplit("::", 1)[0] if "::" in rel else ""
        text = open(path).read()
        text = text.split("#[cfg(test)]")[0]
        text = re.sub(r"//[^\n]*", "", text)
        deps = set()
        for m in re.finditer(r"\b(super|crate)::((?:\w+::)*\w+)", text):
            base, rest = m.group(1), m.group(2).split("::")
            full = (parent.split("::") if parent else []) + rest if base == "super" else rest
            # the module path: the longest prefix that is a file
            for n in range(len(full), 0, -1):
                cand = "::".join(full[:n])
                p = os.path.join(src, *full[:n])
                if os.path.exists(p + ".rs") or os.path.exists(os.path.join(p, "mod.rs")):
                    if cand != rel:
                        deps.add(cand)
                    break
        edges[rel] = deps

def reach(a, b, seen=None):
    seen = seen or set()
    for d in edges.get(a, ()):
        if d == b:
            return True
        if d not in seen:
            seen.add(d)
            if reach(d, b, seen):
                return True
    return False

cycles = set()
for a in edges:
    for b in edges[a]:
        same_parent = a.rsplit("::", 1)[0] == b.rsplit("::", 1)[0]
        if same_parent and reach(b, a):
            cycles.add(tuple(sorted((a, b))))
for a, b in sorted(cycles):
    print(f"cycle: {a} <-> {b}")
sys.exit(1 if cycles else 0)

#!/usr/bin/env python3
"""Lists functions in src/ longer than a limit (default 100 lines, from the
`fn` line to its closing brace). Exit 1 when there is one."""
import os, re, sys

limit = int(sys.argv[1]) if len(sys.argv) > 1 else 100
src = os.path.join(os.path.dirname(__file__), "..", "src")
found = []
for root, _, files in os.walk(src):
    for f in files:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(root, f)
        lines = open(path).read().split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"^(\s*)(pub(\([a-z]+\))? )?(const )?fn (\w+)", lines[i])
            if m:
                indent = len(m.group(1))
                j = i
                while j < len(lines) and not lines[j].rstrip().endswith("{"):
                    j += 1
                k = j + 1
                while k < len(lines) and lines[k].rstrip() != " " * indent + "}":
                    k += 1
                if k - i + 1 > limit:
                    found.append((k - i + 1, os.path.relpath(path, src), m.group(5)))
                i = k
            i += 1
for n, p, name in sorted(found, reverse=True):
    print(f"{n:4} lines  src/{p}  {name}")
sys.exit(1 if found else 0)

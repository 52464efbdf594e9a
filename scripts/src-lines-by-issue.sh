#!/bin/sh
# Where src/'s lines came from since a commit (default: 664377d, the day
# issue 44 was filed): every commit on main's first-parent line, its
# src/ delta (`git diff --numstat C^1 C -- src`, so a merge counts what its
# branch brought), grouped by the issue it served. A merge is placed by
# its branch's name, any other commit by the issue its subject names or
# by the "one way" subjects of issue 44; the rest is "other". Prints one
# line per group (commits, added, removed, net) and the total beside
# `find src -name '*.rs' | xargs cat | wc -l` at both ends. Needs git and
# python3; reads only.
set -eu
cd "$(dirname "$0")/.."
since=${1:-664377d}
python3 - "$since" <<'PY'
import re, subprocess, sys
since = sys.argv[1]
def git(*a):
    return subprocess.run(("git",) + a, capture_output=True, text=True, check=True).stdout
def issue(subject):
    m = re.match(r"Merge branch '([^']+)'", subject) or re.match(r"merge (\w+)", subject)
    name = m.group(1) if m else ""
    for pat, who in ((r"^(fs|err|kw|shell|names|i44|shrink)", "44"),
                     (r"^(i45|nu|mfix|time|train|serve)", "45"),
                     (r"^(i46|cost46)", "46"),
                     (r"^i41", "41"), (r"^i42", "42"), (r"^i43", "43")):
        if name and re.match(pat, name):
            return who
    if re.search(r"\(nu5[0-9]", subject):
        return "45"
    m = re.search(r"issues? (4[0-9])", subject)
    if m:
        return m.group(1)
    if re.match(r"one (way|error)", subject):
        return "44"
    return "other"
groups = {}
def walk(head, stop):
    # A branch that merged main in and was then taken by a fast-forward
    # puts that merge on the first-parent line: main's side is walked
    # instead (its own merges named), the merge itself not counted again.
    for line in git("log", "--first-parent", "--format=%H %P%x09%s", head, f"^{stop}").splitlines():
        head_parents, subject = line.split("\t", 1)
        sha, *parents = head_parents.split()
        if len(parents) == 2 and re.match(r"Merge (branch 'main'|main)", subject):
            walk(parents[1], parents[0])
            continue
        add = rem = 0
        for row in git("diff", "--numstat", f"{sha}^1", sha, "--", "src").splitlines():
            a, r, _ = row.split("\t", 2)
            if a != "-":
                add += int(a); rem += int(r)
        g = groups.setdefault(issue(subject), [0, 0, 0])
        g[0] += 1; g[1] += add; g[2] += rem
walk("HEAD", since)
def lines(rev):
    files = git("ls-tree", "-r", "--name-only", rev, "--", "src").split()
    return sum(git("show", f"{rev}:{f}").count("\n") for f in files if f.endswith(".rs"))
print(f"{'issue':>6} {'commits':>8} {'added':>8} {'removed':>8} {'net':>8}")
for k in sorted(groups):
    c, a, r = groups[k]
    print(f"{k:>6} {c:>8} {a:>8} {r:>8} {a - r:>+8}")
print(f"src lines: {lines(since)} at {since}, {lines('HEAD')} now")
PY

#!/usr/bin/env python3
"""The tree's layers, drawn and checked: which folder's code includes which.

    python3 tests/layering.py          check: exit 1 naming each include that points up, a
                                       folder over its size, or a type defined twice
    python3 tests/layering.py --draw   the folders as layers, bottom up, with their edges
    python3 tests/layering.py --dot    the same graph for Graphviz (dot -Tsvg)

Only non-test code counts (a folder's tests/ and fuzz/ may include anything). The allowed
edges are docs/design.md 1's rules written as data: a folder may include the folders listed
for it and nothing else.
"""
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# folder -> the folders its code may include (besides itself), bottom layer first.
H = "harness/"
ALLOWED = {
    "base": set(),
    "checker": {"base"},
    "locks": {"base"},
    "faults": {"base"},
    "workloads": {"base", "locks"},
    H + "scenario": {"base", "checker", "locks", "faults", "workloads"},
    H + "lab": {"base", "locks", "faults"},
    H + "trial": {"base", "checker", "locks", "faults", "workloads", H + "scenario", H + "lab"},
    H + "matrix": {"base", "checker", "locks", "faults", "workloads", H + "scenario", H + "lab",
                   H + "trial"},
    H + "hunt": {"base", "checker", "locks", "faults", "workloads", H + "scenario", H + "lab",
                 H + "trial"},
    H + "cli": {"base", "checker", "locks", "faults", "workloads", H + "scenario", H + "lab",
                H + "trial", H + "matrix", H + "hunt"},
}
# The top level as the design card draws it (docs/design.md 1): the roles, and beside them
# the shared base, the docs, tests, benches, examples and scenario files. A new top-level
# folder is a decision for the card first.
TOP_LEVEL = {"base", "locks", "workloads", "faults", "harness", "checker", "reports",
             "bench", "tests", "docs", "examples", "scenarios", "docker", ".ci"}
# Lines of non-test code a role folder may hold before it should split; locks/ and
# checker/ are sets of peers (one algorithm, one reader per file) and are not bounded, nor is
# a catalog/ of peers inside a folder (faults/catalog/: one descriptor per fault).
MAX_LINES = 3300
UNBOUNDED = {"locks", "checker"}
PEERS = {"catalog"}
# Types that must be defined once in the whole tree.
ONCE = ["Trial", "PlannedTrial", "TrialOutcome", "RunOptions", "LabCluster", "FaultOptions"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:harness/)?[a-z_]+)/', re.M)


def sources(folder):
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
        dirnames[:] = [d for d in dirnames if d not in ("tests", "fuzz", "testing")]
        for f in sorted(filenames):
            if f.endswith((".h", ".cc")):
                yield os.path.join(dirpath, f)


def graph():
    edges = collections.defaultdict(collections.Counter)  # folder -> {folder: includes}
    sizes = {}
    where = collections.defaultdict(list)  # (from, to) -> files
    for folder in ALLOWED:
        lines = 0
        for path in sources(folder):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if not PEERS & set(os.path.relpath(path, ROOT).split(os.sep)[1:-1]):
                lines += text.count("\n")
            for to in INCLUDE.findall(text):
                if to != folder and to in ALLOWED:
                    edges[folder][to] += 1
                    where[(folder, to)].append(os.path.relpath(path, ROOT))
        sizes[folder] = lines
    return edges, sizes, where


def problems():
    edges, sizes, where = graph()
    out = []
    for folder, tos in edges.items():
        for to in sorted(tos):
            if to not in ALLOWED[folder]:
                files = ", ".join(sorted(set(where[(folder, to)])))
                out.append(f"{folder}/ includes {to}/, which it may not ({files})")
    for folder, lines in sizes.items():
        if folder not in UNBOUNDED and lines > MAX_LINES:
            out.append(f"{folder}/ holds {lines} lines of non-test code (more than {MAX_LINES})")
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True)
    if tracked.returncode == 0:
        tops = {p.split("/")[0] for p in tracked.stdout.split() if "/" in p}
        for extra in sorted(tops - TOP_LEVEL):
            out.append(f"{extra}/ is a top-level folder the design card does not name")
        for missing in sorted(TOP_LEVEL - tops):
            out.append(f"{missing}/ is on the design card but not in the tree")
    for name in ONCE:
        defined = re.compile(r"^\s*(?:class|struct)\s+" + name + r"\b[^;]*$", re.M)
        files = [os.path.relpath(p, ROOT) for folder in ALLOWED for p in sources(folder)
                 if defined.search(open(p, encoding="utf-8").read())]
        if len(files) != 1:
            out.append(f"{name} is defined in {len(files)} files ({', '.join(files) or 'none'})")
    return out


def layers():
    """Folders grouped by depth: a folder sits one above the highest folder it includes."""
    depth = {}
    def d(folder):
        if folder not in depth:
            depth[folder] = 1 + max((d(t) for t in ALLOWED[folder]), default=-1)
        return depth[folder]
    for folder in ALLOWED:
        d(folder)
    by = collections.defaultdict(list)
    for folder, k in depth.items():
        by[k].append(folder)
    return [sorted(by[k]) for k in sorted(by)]


def draw():
    edges, sizes, _ = graph()
    rows = []
    for level, folders in reversed(list(enumerate(layers()))):
        cells = [f"{f}/ ({sizes[f]} lines)" for f in folders]
        rows.append(f"layer {level}: " + "   ".join(cells))
        for f in folders:
            tos = ", ".join(f"{t}/ x{n}" for t, n in sorted(edges[f].items()))
            rows.append(f"    {f}/ -> {tos or '(nothing)'}")
    return "\n".join(rows)


def dot():
    edges, sizes, _ = graph()
    out = ["digraph layers {", "  rankdir=BT; node [shape=box];"]
    for level, folders in enumerate(layers()):
        out.append("  { rank=same; " + " ".join(f'"{f}"' for f in folders) + " }")
    for f, tos in edges.items():
        for t, n in sorted(tos.items()):
            colour = "" if t in ALLOWED[f] else ' color="red"'
            out.append(f'  "{f}" -> "{t}" [label="{n}"{colour}];')
    out.append("}")
    return "\n".join(out)


def main(argv):
    if argv[1:] == ["--draw"]:
        print(draw())
        return 0
    if argv[1:] == ["--dot"]:
        print(dot())
        return 0
    if argv[1:]:
        print("usage: tests/layering.py [--draw | --dot]", file=sys.stderr)
        return 64
    found = problems()
    for p in found:
        print("layering: " + p)
    if not found:
        print(f"layering: {len(ALLOWED)} folders, every include points down")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

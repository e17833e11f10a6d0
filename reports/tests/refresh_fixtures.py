#!/usr/bin/python3
"""Brings the recorded fixture runs up to the current run-file format, without running Redis:

* history.jsonl gets the harness `run` start/end events a run now writes (declared faults and
  stuck threshold from the fixture's scenario.toml; start at the first event's instant so the
  report's times stay those of the recording), unless it has them already;
* results.json gets the judged fields of `locklab check --json history.jsonl` (the one judge,
  checker/verdict.h: verdict, verdict_reason, acquires, coverage, holds, episodes, ...), its run
  metadata (scenario, algorithm, seed, lab_lag, config, ...) kept.

    /usr/bin/python3 reports/tests/refresh_fixtures.py [--binary build/locklab] [RUN_DIR...]

Without RUN_DIR: every fixture run directory with a history (fixtures/*/ and the trials of
fixtures/matrix-letters/cells/). Their matrix.json is left alone (it is the harness's record)."""

import argparse
import glob
import json
import os
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The fields of results.json that checker::Judgement::ToJson writes (the rest is run metadata).
JUDGED = ("result", "result_letter", "verdict", "verdict_reason", "resource_verdict", "ops", "acquires", "mutual_exclusion",
          "resource", "liveness", "linearizable", "linearizability", "coverage", "first_violation",
          "first_violation_ms", "checks", "holds", "episodes")


def add_run_events(run_dir):
    path = os.path.join(run_dir, "history.jsonl")
    with open(path) as fh:
        events = [json.loads(ln) for ln in fh if ln.strip()]
    if any(e.get("process") == "harness" and e.get("f") == "run" for e in events):
        return False
    with open(os.path.join(run_dir, "scenario.toml"), "rb") as fh:
        sc = tomllib.load(fh)
    faults = [f["id"] for f in sc.get("faults", []) if f.get("id") not in (None, "none")]
    with open(os.path.join(run_dir, "results.json")) as fh:
        interrupted = bool(json.load(fh).get("interrupted", False))
    start = {"time_ns": min(e["time_ns"] for e in events), "process": "harness", "type": "info", "f": "run",
             "key": "start", "value": {"faults": faults, "stuck_after_ms": sc.get("stuck_after_ms", 0),
                                       "lin_time_budget_ms": 10000}}
    end = {"time_ns": max(e["time_ns"] for e in events), "process": "harness", "type": "info", "f": "run",
           "key": "end", "value": {"interrupted": interrupted, "client_exits": 0}}
    out = [start] + sorted(events, key=lambda e: e["index"]) + [end]
    with open(path + ".tmp", "w") as fh:
        for n, e in enumerate(out):
            e = {"index": n, **{k: v for k, v in e.items() if k != "index"}}
            fh.write(json.dumps(e, separators=(",", ":")) + "\n")
    os.replace(path + ".tmp", path)
    return True


def merge_judgement(run_dir, binary):
    p = subprocess.run([binary, "check", "--json", os.path.join(run_dir, "history.jsonl")],
                       capture_output=True, text=True, timeout=600)
    if p.returncode not in (0, 1, 2):
        sys.exit(f"{run_dir}: locklab check exited {p.returncode}: {p.stderr.strip()}")
    judged = {k: v for k, v in json.loads(p.stdout).items() if k in JUDGED}
    path = os.path.join(run_dir, "results.json")
    with open(path) as fh:
        old = json.load(fh)
    new, placed = {}, False
    for k, v in old.items():   # judged fields where the old ones were, metadata kept in place
        if k in JUDGED:
            if not placed:
                new.update(judged)
                placed = True
        else:
            new[k] = v
    if not placed:
        new.update(judged)
    with open(path + ".tmp", "w") as fh:
        json.dump(new, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    os.replace(path + ".tmp", path)
    return old.get("verdict"), new["verdict"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.environ.get("LOCKLAB_BINARY", os.path.join(ROOT, "build", "locklab")))
    ap.add_argument("run_dirs", nargs="*")
    a = ap.parse_args()
    dirs = a.run_dirs or sorted(os.path.dirname(h) for h in
                                glob.glob(os.path.join(HERE, "fixtures", "*", "history.jsonl")) +
                                glob.glob(os.path.join(HERE, "fixtures", "matrix-letters", "cells", "*", "*",
                                                       "history.jsonl")))
    for d in dirs:
        added = add_run_events(d)
        before, after = merge_judgement(d, a.binary)
        print(f"{os.path.relpath(d, HERE)}: {'run events added, ' if added else ''}verdict {before} -> {after}")


if __name__ == "__main__":
    main()

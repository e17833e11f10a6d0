#!/usr/bin/python3
"""locklab reports: plots and a self-contained index.html from the files of a run or a matrix.

    /usr/bin/python3 reports/report.py RUN_DIR            -> RUN_DIR/report/{timeline,latency}.png, index.html
    /usr/bin/python3 reports/report.py --matrix MATRIX_DIR -> MATRIX_DIR/report/{heatmap.png,index.html}
                                                             (and each trial's report when it is missing)

Reads run files only (history.jsonl, results.json, scenario.toml; matrix.json), never the live
system. Exit codes: 0 written; 64 usage; 65 a run file is missing or malformed (one line naming
the file); 70 an internal error (one line, no traceback).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import htmlreport  # noqa: E402
import plots  # noqa: E402
from runfiles import Run, RunError, load_json  # noqa: E402

USAGE = ("usage: report.py RUN_DIR | report.py --matrix MATRIX_DIR [--no-trials]\n"
         "  writes RUN_DIR/report/ (timeline.png, latency.png, index.html)\n"
         "  or MATRIX_DIR/report/ (heatmap.png, index.html linking each trial's report)")


def _write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def report_run(run_dir):
    """Writes RUN_DIR/report/. Returns (index.html path, run)."""
    run = Run(run_dir)
    out = os.path.join(run.dir, "report")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise RunError(f"{out}: cannot create ({e.strerror})")
    r = run.results or {}
    faults = r.get("faults")
    faults_text = " + ".join(map(str, faults)) if isinstance(faults, list) and faults else str(faults or "")
    title = f"{r.get('algorithm', os.path.basename(run.dir))}" + (f" under {faults_text}" if faults_text else "")
    notes = []
    if run.history.truncated_tail:
        notes.append("history.jsonl ends in a half-written line (the run was killed): it was ignored.")
    me = r.get("mutual_exclusion") if isinstance(r.get("mutual_exclusion"), dict) else None
    if me is not None:
        if me.get("overlapping_pairs") not in (None, run.pairs_total) or me.get("episodes") not in (None, len(run.episodes)):
            notes.append(f"The report counts {run.pairs_total} overlapping pairs in {len(run.episodes)} episodes "
                         f"but results.json says {me.get('overlapping_pairs')} in {me.get('episodes')}: "
                         "the history and the verdict disagree.")
    images = {"timeline": os.path.join(out, "timeline.png"), "latency": os.path.join(out, "latency.png")}
    plots.timeline(run, images["timeline"], title)
    plots.latency(run, images["latency"], title)
    index = os.path.join(out, "index.html")
    _write(index, htmlreport.run_page(run, images, notes))
    return index, run


def _trials_of(doc, path):
    if isinstance(doc, list):
        trials = doc
    elif isinstance(doc, dict):
        trials = next((doc[k] for k in ("trials", "runs", "results") if isinstance(doc.get(k), list)), None)
        if trials is None:
            raise RunError(f"{path}: expected a JSON array of trial results (or an object with \"trials\")")
    else:
        raise RunError(f"{path}: expected a JSON array of trial results")
    return [t for t in trials if isinstance(t, dict)]


def _faults_label(f):
    if isinstance(f, list):
        return "+".join(str(x) for x in f) or "none"
    return str(f) if f else "none"


def _resolve_run_dir(matrix_dir, t):
    rd = t.get("run_dir")
    cands = []
    if isinstance(rd, str) and rd:
        cands.append(rd if os.path.isabs(rd) else os.path.join(matrix_dir, rd))
        cands.append(os.path.join(matrix_dir, os.path.basename(os.path.dirname(rd.rstrip("/"))),
                                  os.path.basename(rd.rstrip("/"))))
    for c in cands:
        if os.path.isfile(os.path.join(c, "history.jsonl")):
            return os.path.abspath(c)
    return None


def report_matrix(matrix_dir, make_trials=True):
    matrix_dir = os.path.abspath(matrix_dir)
    if not os.path.isdir(matrix_dir):
        raise RunError(f"{matrix_dir}: no such matrix directory")
    mpath = os.path.join(matrix_dir, "matrix.json")
    trials = _trials_of(load_json(mpath), mpath)
    out = os.path.join(matrix_dir, "report")
    os.makedirs(out, exist_ok=True)
    locks, faults, cells, rows, notes = [], [], {}, [], []
    for t in trials:
        lk = str(t.get("algorithm", "?"))
        ft = _faults_label(t.get("faults"))
        verdict = str(t.get("verdict", "unknown"))
        if lk not in locks:
            locks.append(lk)
        if ft not in faults:
            faults.append(ft)
        c = cells.setdefault((lk, ft), {"violated": 0, "trials": 0, "unknown": 0, "verdict": "safe"})
        c["trials"] += 1
        c["violated"] += verdict == "violated"
        c["unknown"] += verdict not in ("violated", "safe")
        me = t.get("mutual_exclusion") if isinstance(t.get("mutual_exclusion"), dict) else {}
        res = t.get("resource") if isinstance(t.get("resource"), dict) else {}
        row = {"lock": lk, "faults": ft, "seed": t.get("seed", "?"), "verdict": verdict,
               "pairs": me.get("overlapping_pairs"), "lost": res.get("lost_updates"), "href": None}
        rd = _resolve_run_dir(matrix_dir, t)
        if rd is None:
            notes.append(f"trial {lk} / {ft} seed {row['seed']}: run directory {t.get('run_dir')} not found")
        else:
            idx = os.path.join(rd, "report", "index.html")
            if make_trials and not os.path.isfile(idx):
                try:
                    report_run(rd)
                except RunError as e:
                    notes.append(f"trial {lk} / {ft}: {e}")
            if os.path.isfile(idx):
                row["href"] = os.path.relpath(idx, out).replace(os.sep, "/")
        rows.append(row)
    for c in cells.values():
        c["verdict"] = "violated" if c["violated"] else "unknown" if c["unknown"] else "safe"
    heat = os.path.join(out, "heatmap.png")
    title = f"locklab matrix {os.path.basename(matrix_dir)}"
    plots.heatmap(cells, locks, faults, heat, title + ": fraction of trials violated")
    index = os.path.join(out, "index.html")
    _write(index, htmlreport.matrix_page(title, heat, locks, faults, cells, rows, notes))
    return index


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 64
    t0 = time.monotonic()
    try:
        if args[0] == "--matrix":
            rest = [a for a in args[1:] if a != "--no-trials"]
            if len(rest) != 1:
                print("report: --matrix needs exactly one MATRIX_DIR\n" + USAGE, file=sys.stderr)
                return 64
            index = report_matrix(rest[0], make_trials="--no-trials" not in args)
        else:
            if len(args) != 1 or args[0].startswith("-"):
                print(f"report: unexpected arguments {' '.join(args)}\n" + USAGE, file=sys.stderr)
                return 64
            index, _ = report_run(args[0])
    except RunError as e:
        print(f"report: {e}", file=sys.stderr)
        return 65
    except KeyboardInterrupt:
        print("report: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # one line, never a traceback
        where = args[-1]
        print(f"report: internal error on {where}: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        return 70
    print(f"report: {index} ({time.monotonic() - t0:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

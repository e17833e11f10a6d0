"""`python3 -m reports`: plots and a self-contained index.html from the files of a run or a matrix.

    python3 -m reports RUN_DIR            -> RUN_DIR/report/{timeline,latency}.png, index.html
    python3 -m reports --matrix MATRIX_DIR -> MATRIX_DIR/report/{heatmap.png,index.html}
                                              (and each trial's report when it is missing;
                                              --no-trials: the violated and stuck trials' only)
                                              and report/cells/*.html, one page a cell
    python3 -m reports --hunt HUNT_DIR [--corpus FILE|DIR]
                                           -> HUNT_DIR/hunt.html (and the failing run's report
                                              when it is missing); a HUNT_DIR given as RUN_DIR
                                              (it has hunt.json) is taken as --hunt
    python3 -m reports --history FILE --judged JSON --events JSONL --out PAGE.html
                                           -> PAGE.html: one history file's page (historypage.py);
                                              `locklab report FILE` judges the file and passes
                                              the judgement and its events

(python3: Debian's /usr/bin/python3, with the source directory on PYTHONPATH; see
harness/cli/report_command.cc.) Reads run files only (history.jsonl, results.json, scenario.toml;
matrix.json), never the live system. The verdict, counts and holds are the history's judgement
(`locklab check --json`, runfiles.py), never results.json's: a results.json that disagrees is
ignored for those fields, one line on stderr and a note on the page naming the field.
Exit codes: 0 written; 64 usage; 65 a run file is missing or malformed, or the judge refuses
the history (one line naming the file); 69 the locklab binary that judges the history is
missing or failed; 70 a report file could not be written (permission, read-only or full file
system) or an internal error (one line, no traceback). Library warnings (matplotlib's, numpy's)
never reach stderr.
"""

import errno
import multiprocessing
import os
import sys
import time
import warnings

from . import historypage, htmlreport, huntpage, matrixcells, plots, timeline
from .history import RunError, ToolError, WriteError, load_json
from .runfiles import Run, disagreement_line

# errno values that mean "this file system will not take the file": exit 70 like every file
# the lab writes (harness/lab/run_store.h). Anything else (a path through a file, a missing
# parent) is the run directory's shape: exit 65, as before.
WRITE_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG}

USAGE = ("usage: python3 -m reports RUN_DIR | python3 -m reports --matrix MATRIX_DIR [--no-trials]\n"
         "       python3 -m reports --hunt HUNT_DIR [--corpus FILE|DIR]   (or: hunt HUNT_DIR)\n"
         "  writes RUN_DIR/report/ (timeline.png, latency.png, index.html)\n"
         "  or MATRIX_DIR/report/ (heatmap.png, index.html linking every cell to its trials), and a\n"
         "  report for each trial that has none (--no-trials: only the violated and stuck ones)\n"
         "  or HUNT_DIR/hunt.html (the hunt's runs in time, finds, shrink steps, reproduction, the\n"
         "  minimal's story), making its failing run's report when it is missing")


def _make_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        cls = WriteError if e.errno in WRITE_ERRNOS else RunError
        raise cls(f"{path}: cannot create ({e.strerror})")


def _written(path, write):
    """write() makes `path`; any OSError is a WriteError naming it (exit 70)."""
    try:
        return write()
    except OSError as e:
        raise WriteError(f"{path}: cannot write ({e.strerror or e})")


def _write(path, text):
    def write():
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    _written(path, write)


def report_run(run_dir):
    """Writes RUN_DIR/report/. Returns (index.html path, run)."""
    run = Run(run_dir)
    out = os.path.join(run.dir, "report")
    _make_dir(out)
    r = run.results
    faults = r.get("faults")
    faults_text = " + ".join(map(str, faults)) if isinstance(faults, list) and faults else str(faults or "")
    title = f"{r.get('algorithm', os.path.basename(run.dir))}" + (f" under {faults_text}" if faults_text else "")
    notes = list(run.notes)
    if run.history.truncated_tail:
        notes.append("history.jsonl ends in a half-written line (the run was killed): it was ignored.")
    images = {"timeline": os.path.join(out, "timeline.png"), "latency": os.path.join(out, "latency.png")}
    _written(images["timeline"], lambda: timeline.timeline(run, images["timeline"], title))
    _written(images["latency"], lambda: plots.latency(run, images["latency"], title))
    index = os.path.join(out, "index.html")
    _write(index, htmlreport.run_page(run, images, notes))
    return index, run


def _trial_report(run_dir):
    """(index.html path, None) or (None, one-line error): one trial's report never costs the
    matrix its page."""
    try:
        return report_run(run_dir)[0], None
    except RunError as e:
        return None, str(e)
    except Exception as e:  # noqa: BLE001
        return None, f"internal error {type(e).__name__}: {e}".splitlines()[0]


def report_matrix(matrix_dir, make_trials=True):
    """Writes MATRIX_DIR/report/ (heatmap.png, index.html). Every violated or stuck trial gets
    its run report when it has none; make_trials: every other trial too (else `locklab report
    TRIAL_DIR` makes one on demand). Returns (index.html path, number of trial reports made)."""
    matrix_dir = os.path.abspath(matrix_dir)
    if not os.path.isdir(matrix_dir):
        raise RunError(f"{matrix_dir}: no such matrix directory")
    mpath = os.path.join(matrix_dir, "matrix.json")
    m = matrixcells.Matrix(matrix_dir, load_json(mpath), mpath)
    out = os.path.join(matrix_dir, "report")
    _make_dir(out)
    todo = [t for t in m.trials
            if t.run_dir is not None and t.report is None and (make_trials or m.needs_report(t))]
    # Trial reports are independent (each writes its own run directory's report/): one
    # process per core, so a quick matrix's ~100 violated trials cost half the time on 2 cores.
    workers = min(len(todo), os.cpu_count() or 1)
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            outcomes = pool.map(_trial_report, [t.run_dir for t in todo])
    else:
        outcomes = [_trial_report(t.run_dir) for t in todo]
    made = 0
    for t, (path, error) in zip(todo, outcomes):
        c = m.cells[t.cell]
        if error is None:
            t.report = path
            made += 1
        else:
            m.notes.append(f"trial {c.lock} / {c.fault} seed {t.seed}: no report: {error}")
    heat = os.path.join(out, "heatmap.png")
    title = f"locklab matrix {os.path.basename(matrix_dir)}"
    _written(heat, lambda: plots.heatmap(m, heat, title))
    index = os.path.join(out, "index.html")
    _write(index, htmlreport.matrix_page(title, m, out))
    pages = htmlreport.cell_pages(title, m, out)
    if pages:
        _make_dir(os.path.join(out, "cells"))
    for name, text in pages.items():
        _write(os.path.join(out, "cells", name), text)
    return index, made


def report_hunt(hunt_dir, corpus=None):
    """Writes HUNT_DIR/hunt.html, and the failing run's report when it has none (a hunt that
    was interrupted, or run with --no-report), and each find's trial's. Returns (hunt.html path, failing run's report
    made or None)."""
    hunt_dir = os.path.abspath(hunt_dir)
    if not os.path.isdir(hunt_dir):
        raise RunError(f"{hunt_dir}: no such hunt directory")
    h = huntpage.Hunt(hunt_dir)
    failing = h.failing_run()
    report, made = None, None
    if failing:
        report = os.path.join(failing, "report", "index.html")
        if not os.path.isfile(report):
            path, error = _trial_report(failing)
            report = made = path
            if error:
                print(f"report: {failing}: no report: {error}", file=sys.stderr)
    # each find's trial gets its report too: a find is a few runs at most, and its timeline is
    # what a reader opens next
    for r in h.find_runs():
        if r.run_dir and not r.report:
            path, error = _trial_report(r.run_dir)
            r.report = path
            if error:
                print(f"report: {r.run_dir}: no report: {error}", file=sys.stderr)
    out = os.path.join(hunt_dir, "hunt.html")
    _write(out, huntpage.hunt_page(h, report, h.corpus_entry(corpus)))
    return out, made


def report_history(args):
    """--history FILE --judged JSON --events JSONL --out PAGE.html (harness/cli/report_command.cc).
    Returns the page's path."""
    names = ("--history", "--judged", "--events", "--out")
    given = dict(zip(args[0::2], args[1::2]))
    if len(args) != 2 * len(names) or sorted(given) != sorted(names):
        raise UsageError("--history needs --judged, --events and --out (locklab report FILE passes them)")
    view = historypage.HistoryView(given["--history"], given["--judged"], given["--events"])
    out = os.path.abspath(given["--out"])
    _write(out, historypage.history_page(view))
    return out


class UsageError(Exception):
    """Arguments the package does not take (exit 64)."""


def main(argv):
    # This process is the report's own: no library warning reaches the user's terminal (the
    # figures also silence them where they are drawn, figstyle.styled, for in-process callers).
    warnings.simplefilter("ignore")
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 64
    if args[0] == "hunt" and len(args) > 1 and not os.path.isdir("hunt"):
        args = ["--hunt"] + args[1:]   # `python3 -m reports hunt HUNT_DIR`, the same as --hunt
    t0 = time.monotonic()
    extra = ""
    try:
        if args[0] == "--hunt" or (len(args) in (1, 3) and not args[0].startswith("-")
                                   and huntpage.is_hunt_dir(args[0])):
            rest = args[1:] if args[0] == "--hunt" else args
            corpus = None
            if len(rest) == 3 and rest[1] == "--corpus":
                corpus = rest[2]
                rest = rest[:1]
            if len(rest) != 1 or rest[0].startswith("-"):
                print("report: --hunt needs exactly one HUNT_DIR (and at most --corpus FILE|DIR)\n" + USAGE,
                      file=sys.stderr)
                return 64
            index, made = report_hunt(rest[0], corpus)
            if made:
                extra = f"the failing run's report made: {made}, "
        elif args[0] == "--history":
            index = report_history(args)
        elif args[0] == "--matrix":
            rest = [a for a in args[1:] if a != "--no-trials"]
            if len(rest) != 1:
                print("report: --matrix needs exactly one MATRIX_DIR\n" + USAGE, file=sys.stderr)
                return 64
            index, made = report_matrix(rest[0], make_trials="--no-trials" not in args)
            extra = f"{made} trial report{'' if made == 1 else 's'} made, "
        else:
            if len(args) != 1 or args[0].startswith("-"):
                print(f"report: unexpected arguments {' '.join(args)}\n" + USAGE, file=sys.stderr)
                return 64
            index, run = report_run(args[0])
            if run.ignored:
                print(f"report: {disagreement_line(run.results_path, run.ignored)}", file=sys.stderr)
    except UsageError as e:
        print(f"report: {e}", file=sys.stderr)
        return 64
    except WriteError as e:
        print(f"report: {e}", file=sys.stderr)
        return 70
    except ToolError as e:
        print(f"report: {e}", file=sys.stderr)
        return 69
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
    print(f"report: {index} ({extra}{time.monotonic() - t0:.2f} s)")
    return 0


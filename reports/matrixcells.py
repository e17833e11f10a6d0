"""A matrix directory as the report shows it: cells with the letters and marks of matrix.md,
each with its trials and where their run directories and reports are.

The letters come from matrix.json's "cells" (written by harness/matrix/matrix.cc WriteMatrix, the same
fields matrix.md is printed from), never re-judged here:

    verdict   S | V | L | ? | - | n/a  the cell's letter (-: some of its trials never ran)
    rS        verdict V and resource S  (holders overlapped, the resource stayed intact: fencing)
    ~         untrusted_timing > 0     (the lab itself ran late in a trial)
    \u2260X        matches false            (X: expected, or "r" + expected_resource)
    \u2717         regressed, matches not false (a cell no expectation pins hit --fail-on)

A trial's letter is its "trial_records" entry's "letter" (V, L, S or ?, as its cell counted it),
else its results.json's "result_letter" (reports/results.py: the lab's one table of results);
a trial that records neither is "?". Only a matrix.json without "cells" (a bare list of trial
results) has its cells derived from the trials here, by the rule WriteMatrix uses.
"""

import os

from . import results as result_table
from .history import RunError

TRIAL_LETTERS = ("S", "V", "L", "?")

# One legend for the page (and the PNG): the wording of matrix.md's own key, plus the marks.
LEGEND = [
    ("S", "safe: every trial was judged and no two clients held the lock at once"),
    ("V", "violated: in at least one trial two clients held the lock at once"),
    ("L", "stuck (liveness): no overlap, but clients waited with nobody holding the lock"),
    ("?", "unknown: a trial could not be judged (its reason is in the cell's tooltip and the trials table)"),
    ("rS", "after V: the holders overlapped but the resource stayed intact (fencing rejected the stale writes)"),
    ("~", "the lab itself ran late in a trial (more than a tenth of the TTL): timing not to be trusted"),
    ("-", "not run: the matrix was interrupted before some of the cell's trials ran"),
    ("\u2260X", "the cell disagrees with the expectation X (rX: the resource expectation); it fails the run"),
    ("\u2717", "regressed: no expectation pins the cell and its verdict is in --fail-on; it fails the run"),
    ("k/n", "violated trials / trials; @t: median time to the first violation"),
    ("n/a", "the fault does not apply to this lock (why: in the tooltip)"),
]

# A cell the matrix did not run this time (quick mode leaves some of a driver row's faults
# out): matrix.json's cell "status": "not_run" with the "command" that runs it; a matrix.json
# written before that field says so only in why_not ("quick mode runs driver rows under ...").
NOT_RUN_LEGEND = ("skipped by this matrix (quick mode), not inapplicable: the fault applies to the lock; "
                  "the cell's tooltip says how to run it")



def short_lock(lock):
    """A row's label: a driver by its file's name without the extension ("driver: redis_py_lock"),
    any other lock as it is."""
    if lock.startswith("driver:"):
        name = os.path.basename(lock[len("driver:"):].rstrip("/")) or lock
        return "driver: " + (os.path.splitext(name)[0] or name)
    return lock


def faults_label(f):
    if isinstance(f, list):
        return "+".join(str(x) for x in f) or "none"
    return str(f) if f else "none"


def trial_reason(results, ran=True, letter=None):
    """One line on why a trial has no verdict (empty for judged trials). letter: the trial's
    letter as the lab recorded it (None: derived from results)."""
    if not isinstance(results, dict):
        return "no results.json: the trial did not run to the end (its log is under cells/)"
    if (letter if letter is not None else result_table.of(results)) != "?" and ran:
        return ""
    for k in ("verdict_reason", "error", "history_error"):
        if isinstance(results.get(k), str) and results[k]:
            return results[k].splitlines()[0]
    if results.get("client_exits"):
        return f"{results['client_exits']} client(s) exited unexpectedly"
    if not ran:
        return "the trial's run failed (infrastructure; its log is under cells/)"
    return "no reason recorded"


def _counter(d, k):
    v = d.get(k)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def coverage_text(cov):
    """results.json "coverage" in one line: per fault its windows opened/closed/armed/reached,
    and whether the fault bit. The checker's shape is a list of per-fault entries with their
    one-line "summary"; older dict shapes are read too. Absent or odd -> ""."""
    if isinstance(cov, list):
        parts = []
        for x in cov:
            if isinstance(x, dict) and isinstance(x.get("summary"), str):
                bit = x.get("bit")
                parts.append(x["summary"] + ("" if not isinstance(bit, bool) else ", bit" if bit else ", did not bite"))
        return "; ".join(parts)
    if not isinstance(cov, dict):
        return ""
    parts = []
    per = cov.get("faults") if isinstance(cov.get("faults"), (dict, list)) else cov
    items = per.items() if isinstance(per, dict) else ((x.get("fault", x.get("id", "?")), x) for x in per if isinstance(x, dict))
    for name, d in items:
        if not isinstance(d, dict):
            continue
        nums = [f"{k} {_counter(d, k)}" for k in ("opened", "closed", "armed", "reached") if _counter(d, k) is not None]
        bit = d.get("bit")
        if not nums and not isinstance(bit, bool):
            continue
        if isinstance(bit, bool):
            nums.append("bit" if bit else "did not bite")
        parts.append(f"{name}: " + ", ".join(nums))
    if isinstance(cov.get("bit"), bool):
        parts.append("fault bit" if cov["bit"] else "fault did not bite")
    return "; ".join(parts)


def coverage_bit(cov):
    """True/False when coverage says whether the fault bit, else None."""
    if isinstance(cov, list):
        bits = [x["bit"] for x in cov if isinstance(x, dict) and isinstance(x.get("bit"), bool)]
        return any(bits) if bits else None
    if not isinstance(cov, dict):
        return None
    if isinstance(cov.get("bit"), bool):
        return cov["bit"]
    per = cov.get("faults") if isinstance(cov.get("faults"), dict) else cov
    bits = [d["bit"] for d in per.values() if isinstance(d, dict) and isinstance(d.get("bit"), bool)]
    return any(bits) if bits else None


def cell_marks(c):
    """The marks matrix.md prints after a cell's letter, from the cell's matrix.json fields."""
    marks = []
    v = c.get("verdict")
    if v == "n/a":
        return marks
    if v == "V" and c.get("resource") == "S":
        marks.append("rS")
    if c.get("matches") is False:
        exp = c.get("expected") or ""
        marks.append("\u2260" + (exp if exp else "r" + str(c.get("expected_resource") or "")))
    elif c.get("regressed") is True:
        marks.append("\u2717")
    if (c.get("untrusted_timing") or 0) > 0:
        marks.append("~")
    return marks


def cell_parts(c):
    """The cell as matrix.md writes it (without the bold), in two parts: the letter with rS,
    and the rest: ('V rS', '1/1 @2.3s \u2260S ~'), ('n/a', '')."""
    v = c.get("verdict", "?")
    if v == "n/a":
        return "n/a", ""
    marks = cell_marks(c)
    head = v + (" rS" if "rS" in marks else "")
    tail = [f"{c.get('violated', 0)}/{c.get('trials', 0)}"]
    m = c.get("median_first_violation_ms")
    if isinstance(m, (int, float)) and not isinstance(m, bool) and m >= 0:
        tail.append(f"@{m / 1000:.1f}s")
    not_run = _counter(c, "not_run")
    if not_run:
        tail.append(f"({not_run} not run)")
    tail += [k for k in marks if k != "rS"]
    return head, " ".join(tail)


def cell_text(c):
    """'V rS 1/1 @2.3s \u2260S ~', 'S 0/1', 'n/a': matrix.md's cell without the bold."""
    return " ".join(x for x in cell_parts(c) if x)


def resolve_run_dir(matrix_dir, rd):
    """A trial's run directory: as recorded, else the same cells/NAME/STAMP under this matrix
    directory (a moved or copied matrix)."""
    if not isinstance(rd, str) or not rd:
        return None
    rd = rd.rstrip("/")
    stamp, name = os.path.basename(rd), os.path.basename(os.path.dirname(rd))
    cands = [rd if os.path.isabs(rd) else os.path.join(matrix_dir, rd),
             os.path.join(matrix_dir, "cells", name, stamp),
             os.path.join(matrix_dir, name, stamp)]
    for c in cands:
        if os.path.isfile(os.path.join(c, "history.jsonl")) or os.path.isfile(os.path.join(c, "results.json")):
            return os.path.abspath(c)
    return None


class Trial:
    def __init__(self, n, cell, index, results, ran, seed=None, letter=None):
        self.n = n                # position in the whole matrix
        self.cell = cell          # index into Matrix.cells
        self.index = index        # 0-based trial number within its cell
        self.results = results if isinstance(results, dict) else None
        self.ran = ran
        r = self.results or {}
        self.seed = r.get("seed", seed)
        if letter in TRIAL_LETTERS:
            self.letter = letter  # as the lab counted the trial in its cell
        else:
            self.letter = result_table.of(self.results) if ran else "?"
        self.reason = trial_reason(self.results, ran, self.letter)
        self.coverage = coverage_text(r.get("coverage"))
        self.bit = coverage_bit(r.get("coverage"))
        self.run_dir = None       # absolute, when found
        self.report = None        # absolute path of its report/index.html, when made

    @property
    def verdict_word(self):
        return result_table.word(self.letter)


class Cell:
    def __init__(self, lock, fault, fields):
        self.lock, self.fault = lock, fault
        self.fields = fields      # matrix.json's cell object (or one derived the same way)
        self.letter = fields.get("verdict", "?")
        if self.letter not in result_table.letters():
            self.letter = "?"
        self.marks = cell_marks(fields)
        self.head, self.tail = cell_parts(fields)
        self.text = cell_text(fields)
        self.trials = []          # Trial objects, in trial order

    @property
    def why_not(self):
        return self.fields.get("why_not", "")

    @property
    def not_run(self):
        """Skipped by this matrix (not "not applicable"): status "not_run", or, in an older
        matrix.json, an n/a whose why_not says quick mode left it out."""
        if self.fields.get("status") == "not_run":
            return True
        return self.letter == "n/a" and str(self.why_not).startswith("quick mode")

    @property
    def command(self):
        """The command that runs a cell that was not run ("" when matrix.json gives none)."""
        c = self.fields.get("command")
        return c if isinstance(c, str) else ""

    def lead_trial(self):
        """The trial a click on the cell opens: the first one showing the cell's verdict."""
        for t in self.trials:
            if t.letter == self.letter:
                return t
        return self.trials[0] if self.trials else None

    def reasons(self):
        return [t.reason for t in self.trials if t.reason]


class Matrix:
    def __init__(self, matrix_dir, doc, path):
        self.dir = os.path.abspath(matrix_dir)
        self.doc = doc if isinstance(doc, dict) else {}
        self.cells, self.trials = [], []
        self.locks, self.faults = [], []
        self.notes = []
        if isinstance(doc, dict) and isinstance(doc.get("cells"), list) and \
                all(isinstance(c, dict) and "algorithm" in c and "verdict" in c for c in doc["cells"]) and doc["cells"]:
            self._from_cells(doc, path)
        else:
            self._derive(self._trial_list(doc, path))
        for t in self.trials:
            if t.results is None:
                continue
            t.run_dir = resolve_run_dir(self.dir, t.results.get("run_dir"))
            if t.run_dir is None:
                c = self.cells[t.cell]
                self.notes.append(f"trial {c.lock} / {c.fault} seed {t.seed}: run directory "
                                  f"{t.results.get('run_dir')} not found")
            elif os.path.isfile(os.path.join(t.run_dir, "report", "index.html")):
                t.report = os.path.join(t.run_dir, "report", "index.html")

    @staticmethod
    def _trial_list(doc, path):
        if isinstance(doc, list):
            trials = doc
        elif isinstance(doc, dict):
            trials = next((doc[k] for k in ("trials", "runs", "results") if isinstance(doc.get(k), list)), None)
            if trials is None:
                raise RunError(f"{path}: expected a JSON array of trial results (or an object with \"trials\")")
        else:
            raise RunError(f"{path}: expected a JSON array of trial results")
        return [t for t in trials if isinstance(t, dict)]

    def _add(self, cell):
        if cell.lock not in self.locks:
            self.locks.append(cell.lock)
        if cell.fault not in self.faults:
            self.faults.append(cell.fault)
        self.cells.append(cell)

    def _from_cells(self, doc, path):
        plan = doc.get("plan") if isinstance(doc.get("plan"), dict) else {}
        for cj in doc["cells"]:
            self._add(Cell(str(cj.get("algorithm", "?")), str(cj.get("faults", "?")), cj))
        # plan order (rows, columns) when given: the order of matrix.md
        for attr, key in (("locks", "locks"), ("faults", "faults")):
            order = plan.get(key)
            if isinstance(order, list) and set(map(str, order)) >= set(getattr(self, attr)):
                setattr(self, attr, [str(x) for x in order if str(x) in set(getattr(self, attr))])
        results = doc.get("trials") if isinstance(doc.get("trials"), list) else []
        records = doc.get("trial_records")
        if isinstance(records, list):
            for r in records:
                if not isinstance(r, dict) or not isinstance(r.get("cell"), int) or not 0 <= r["cell"] < len(self.cells):
                    continue
                at = r.get("results", -1)
                res = results[at] if isinstance(at, int) and 0 <= at < len(results) else None
                t = Trial(r.get("n", len(self.trials)), r["cell"], r.get("trial", 0), res,
                          bool(r.get("ran", res is not None)), r.get("seed"), r.get("letter"))
                self.trials.append(t)
                self.cells[r["cell"]].trials.append(t)
        else:
            # no records: match trials to cells by lock and fault set
            index = {(c.lock, c.fault): i for i, c in enumerate(self.cells)}
            for n, res in enumerate(x for x in results if isinstance(x, dict)):
                i = index.get((str(res.get("algorithm", "?")), faults_label(res.get("faults"))))
                if i is None:
                    continue
                t = Trial(n, i, len(self.cells[i].trials), res, True)
                self.trials.append(t)
                self.cells[i].trials.append(t)
        for c in self.cells:
            c.trials.sort(key=lambda t: t.index)

    def _derive(self, results):
        """Cells from bare trial results, by WriteMatrix's rule (harness/matrix/matrix.cc)."""
        index = {}
        for n, res in enumerate(results):
            key = (str(res.get("algorithm", "?")), faults_label(res.get("faults")))
            if key not in index:
                index[key] = len(self.cells)
                self._add(Cell(key[0], key[1], {}))
            c = self.cells[index[key]]
            t = Trial(n, index[key], len(c.trials), res, True)
            self.trials.append(t)
            c.trials.append(t)
        for c in self.cells:
            n = len(c.trials)
            count = {k: sum(t.letter == k for t in c.trials) for k in result_table.letters()}
            rv = [t.results.get("resource_verdict", "unknown") for t in c.trials]
            firsts = sorted(t.results["first_violation_ms"] for t in c.trials
                            if isinstance(t.results.get("first_violation_ms"), (int, float)))
            f = {"algorithm": c.lock, "faults": c.fault,
                 "verdict": "V" if count["V"] else "L" if count["L"] else "S" if count["S"] == n and n else "?",
                 "resource": "V" if "violated" in rv else "S" if rv.count("safe") == n and n else "?",
                 "trials": n, "violated": count["V"], "stuck": count["L"], "safe": count["S"],
                 "unknown": count["?"],
                 "untrusted_timing": sum(1 for t in c.trials if isinstance(t.results.get("lab_lag"), dict)
                                         and t.results["lab_lag"].get("timing_trusted", True) is False)}
            if firsts:
                f["median_first_violation_ms"] = firsts[len(firsts) // 2]
            c.fields = f
            c.letter, c.marks, c.text = f["verdict"], cell_marks(f), cell_text(f)
            c.head, c.tail = cell_parts(f)

    def cell(self, lock, fault):
        return next((c for c in self.cells if c.lock == lock and c.fault == fault), None)

    def needs_report(self, t):
        """Violated and stuck trials get their run report with the matrix's own report."""
        return t.letter in ("V", "L")

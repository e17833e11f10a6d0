"""Reading a locklab run directory: history.jsonl (streamed), results.json, scenario.toml.

Everything the report shows is derived here from the run files, never from the live system
and never from the algorithm id. The judged facts (the verdict and its reason, the counts,
coverage, hold intervals with the crash rule applied, overlap episodes) are the one judge's
(checker/verdict.h JudgeHistory, the same for `locklab run`, `matrix` and `check`) on the
run's history.jsonl, asked through `locklab check --json` every time: results.json is never
trusted for them. A results.json whose judged fields disagree with the history's judgement
(doctored, or written by an older checker) is ignored for those fields, and the page and
`Run.ignored` say which field and what it said. Fields the judge does not own (options,
config, lab_lag and timing_trusted, interrupted, client_exits, history_error, run_dir, the
scenario) are results.json's, as written.

From an episode and the judged holds the report derives only which holds were in it and which
pairs intersected (for drawing). Fault windows are read from the history: nemesis
`start`/`stop` pairs per fault id, healed first-in first-out, open windows ending at the end of
the history. Events are ordered by (time_ns, index).

history.jsonl itself is read by history.py (streamed into columns).
"""

import bisect
import functools
import json
import os
import subprocess
import tempfile

import numpy as np

from . import faultstyle
from .history import LOCK_FS, NEMESIS, T_INVOKE, RunError, ToolError, load_history, load_json, load_text


# --------------------------------------------------------------------------------------------
# The checker's judged facts: holds and overlap episodes


class Hold:
    __slots__ = ("process", "key", "start", "end", "open_at_end", "acquire_index", "order")

    def __init__(self, process, key, start, end, open_at_end=False, acquire_index=-1, order=0):
        self.process = process
        self.key = key
        self.start = start
        self.end = end
        self.open_at_end = open_at_end
        self.acquire_index = acquire_index
        self.order = order   # position in the checker's list (sorted by key, start, process)


class Window:
    __slots__ = ("fault", "start", "end", "detail", "open_at_end")

    def __init__(self, fault, start, detail):
        self.fault = fault
        self.start = start
        self.end = -1
        self.detail = detail if isinstance(detail, dict) else {}
        self.open_at_end = False


class Episode:
    __slots__ = ("number", "key", "start", "end", "processes", "holds", "pairs")

    def __init__(self, key, start, end, processes):
        self.number = 0
        self.key = key
        self.start = start
        self.end = end
        self.processes = processes  # as exported
        self.holds = []   # every hold of the key active during the episode
        self.pairs = []   # (hold_a, hold_b, start, end): holds of two clients intersecting


def targets_of(detail):
    """Client ids a nemesis value names: {"targets":[1,2]} or {"process":3} (like the checker)."""
    out = []
    if not isinstance(detail, dict):
        return out
    ts = detail.get("targets")
    if isinstance(ts, list):
        out.extend(x for x in ts if isinstance(x, int) and not isinstance(x, bool))
    p = detail.get("process")
    if isinstance(p, int) and not isinstance(p, bool):
        out.append(p)
    return out


def compute_windows(h):
    """Fault windows: nemesis start/stop pairs per fault id, healed first-in first-out; a
    window never stopped ends at the end of the history."""
    start_code = h.f_code("start")
    stop_code = h.f_code("stop")
    windows, open_w = [], {}
    end_of_history = int(h.t[-1])
    sel = np.nonzero((h.proc == NEMESIS) & np.isin(h.f, [start_code, stop_code]))[0]
    for i in sel.tolist():
        fault = h.key_names[int(h.key[i])]
        tm = int(h.t[i])
        if int(h.f[i]) == start_code:
            open_w.setdefault(fault, []).append(len(windows))
            windows.append(Window(fault, tm, h.value(i)))
        else:
            stack = open_w.get(fault)
            if stack:
                windows[stack.pop(0)].end = tm
    for w in windows:
        if w.end < 0:
            w.end = end_of_history
            w.open_at_end = True
    return windows


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def holds_from_judgement(j, where):
    """results.json "holds" (or `locklab check --json`'s) as Hold objects, in their order."""
    raw = j.get("holds")
    if not isinstance(raw, list):
        raise RunError(f"{where}: \"holds\" is not a list")
    out = []
    for n, x in enumerate(raw):
        if not (isinstance(x, dict) and _int(x.get("process")) and isinstance(x.get("key"), str)
                and _int(x.get("start_ns")) and _int(x.get("end_ns"))):
            raise RunError(f"{where}: holds[{n}] is malformed")
        ai = x.get("acquire_index")
        out.append(Hold(x["process"], x["key"], x["start_ns"], x["end_ns"], bool(x.get("open_at_end")),
                        ai if _int(ai) else -1, n))
    return out


def episodes_from_judgement(j, holds, where):
    """results.json "episodes" as Episode objects (time order, numbered from 1), each with the
    exported holds active during it and the intersecting pairs of holds of two clients.

    The checker exports an episode as (key, start, end, processes); the holds of an episode are
    those of its key that intersect it (every such hold was active in the checker's sweep), and
    its pairs the intersecting holds of different clients among them (a pair's intersection lies
    inside exactly one episode), so the counts equal mutual_exclusion.overlapping_pairs."""
    raw = j.get("episodes")
    if not isinstance(raw, list):
        raise RunError(f"{where}: \"episodes\" is not a list")
    eps = []
    for n, x in enumerate(raw):
        if not (isinstance(x, dict) and isinstance(x.get("key"), str) and _int(x.get("start_ns"))
                and _int(x.get("end_ns"))):
            raise RunError(f"{where}: episodes[{n}] is malformed")
        procs = x.get("processes")
        eps.append(Episode(x["key"], x["start_ns"], x["end_ns"],
                           sorted(p for p in procs if _int(p)) if isinstance(procs, list) else []))
    eps.sort(key=lambda e: (e.start, e.key))
    by_key = {}
    for ep in eps:
        by_key.setdefault(ep.key, []).append(ep)
    for key, kes in by_key.items():
        kes.sort(key=lambda e: e.start)  # one key's episodes are disjoint: ends sorted too
        starts = [e.start for e in kes]
        ends = [e.end for e in kes]
        for hd in holds:
            if hd.key != key or hd.end <= hd.start:
                continue
            # episodes with start < hold end and end > hold start
            for ep in kes[bisect.bisect_right(ends, hd.start):bisect.bisect_left(starts, hd.end)]:
                ep.holds.append(hd)
    pairs_total = 0
    for n, ep in enumerate(eps, 1):
        ep.number = n
        ep.holds.sort(key=lambda hd: (hd.start, hd.order))
        active = []
        for hd in ep.holds:
            active = [a for a in active if a.end > hd.start]
            for a in active:
                if a.process != hd.process:
                    ep.pairs.append((a, hd, max(a.start, hd.start), min(a.end, hd.end)))
            active.append(hd)
        pairs_total += len(ep.pairs)
    return eps, pairs_total


def has_judged_holds(results):
    return isinstance(results, dict) and "holds" in results and "episodes" in results


# The fields of results.json the judge owns (Judgement::ToJson, checker/verdict.cc): the
# report takes them from the history's judgement, whatever results.json says. A key the judge
# adds later is taken from its answer as well (everything in it but check's own keys).
JUDGED_FIELDS = ("verdict", "verdict_reason", "resource_verdict", "ops", "acquires", "mutual_exclusion",
                 "resource", "liveness", "linearizable", "linearizability", "coverage", "first_violation",
                 "first_violation_ms", "checks", "holds", "episodes")
CHECK_OWN_FIELDS = ("file", "format", "events", "exit")

# The judged facts a reader acts on, compared between results.json and the judgement: a
# disagreement on any of them is named (field path, what the file says, what the judge says).
COMPARED_FIELDS = (("verdict",), ("resource_verdict",), ("ops",), ("mutual_exclusion", "holds"),
                   ("mutual_exclusion", "overlapping_pairs"), ("mutual_exclusion", "episodes"),
                   ("mutual_exclusion", "overlap_ms"), ("resource", "lost_updates"),
                   ("resource", "stale_writes_accepted"), ("resource", "stale_writes_rejected"),
                   ("resource", "acknowledged_writes"), ("liveness", "stuck"), ("linearizable",),
                   ("acquires", "ok"), ("first_violation_ms",))


def _lookup(d, path):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return _ABSENT
        d = d[p]
    return d


_ABSENT = object()


def _same(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))   # a float written and read back
    return a == b


def disagreements(file_results, judged):
    """[(field, says, judged)] for the compared fields results.json states and the judge
    answers differently ("mutual_exclusion.overlapping_pairs", 0, 75). A field results.json
    leaves out (an older run) disagrees with nothing; one the judge leaves out is absent."""
    out = []
    if not isinstance(file_results, dict):
        return out
    for path in COMPARED_FIELDS:
        says = _lookup(file_results, path)
        if says is _ABSENT:
            continue
        j = _lookup(judged, path)
        if j is _ABSENT or not _same(says, j):
            out.append((".".join(path), says, None if j is _ABSENT else j))
    return out


def _word(x):
    return json.dumps(x) if not isinstance(x, str) else x


def disagreement_line(results_path, ignored):
    """One line: "RUN/results.json: field 'verdict': says safe, the history judges violated"
    (and how many more fields disagree)."""
    field, says, judged = ignored[0]
    more = f" (and {len(ignored) - 1} more field{'s' if len(ignored) > 2 else ''})" if len(ignored) > 1 else ""
    return (f"{results_path}: field '{field}': says {_word(says)}, the history judges {_word(judged)}{more}; "
            "the report shows the history's judgement")


def locklab_binary():
    """$LOCKLAB_BINARY when set (`locklab report` sets it to itself), else build/locklab of this
    source tree; None if not executable."""
    b = os.environ.get("LOCKLAB_BINARY")
    if not b:
        b = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "locklab")
    return b if os.access(b, os.X_OK) else None


@functools.lru_cache(maxsize=4)
def lab_list(binary):
    """`binary list --json`, parsed once per binary: the lab's catalogue (locks, faults, results,
    ...), which faultstyle.py and results.py read their tables from. ToolError (one line) when
    there is no binary or it does not answer with a JSON object."""
    if binary is None:
        raise ToolError("no locklab binary to ask `locklab list --json` (build build/locklab or set LOCKLAB_BINARY)")
    try:
        p = subprocess.run([binary, "list", "--json"], capture_output=True, text=True, timeout=60,
                           errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"`{binary} list --json` failed: {e}".splitlines()[0]) from None
    try:
        doc = json.loads(p.stdout) if p.returncode == 0 else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise ToolError(f"`{binary} list --json` gave no catalogue (exit {p.returncode})")
    return doc


def judge_history(history):
    """The judgement of a history by `locklab check --json` (the one judge, checker/verdict.h):
    its verdict, counts, coverage, holds and episodes. A history the judge refuses is RunError
    (exit 65, check's own line); no binary, or one that fails to answer, is ToolError (69)."""
    binary = locklab_binary()
    if binary is None:
        raise ToolError(f"{history.path}: no locklab binary to judge the history with (build build/locklab "
                        "or set LOCKLAB_BINARY)")
    path, tmp = history.path, None
    if history.truncated_tail:
        # A killed run's half-written last line: the judge gets the complete lines only
        # (check drops it too, but says so on stderr).
        with open(path, "rb") as fh:
            data = fh.read()
        fd, tmp = tempfile.mkstemp(prefix="locklab-report-", suffix=".jsonl")
        with os.fdopen(fd, "wb") as out:
            out.write(data[:data.rfind(b"\n") + 1])
        path = tmp
    try:
        p = subprocess.run([binary, "check", "--json", path], capture_output=True, text=True, timeout=900,
                           errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"{history.path}: `{binary} check --json` failed: {e}".splitlines()[0])
    finally:
        if tmp:
            os.unlink(tmp)
    err = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
    if p.returncode == 65:   # the judge refuses the history: its one line names file, line, field
        raise RunError(err[len("locklab check: "):] if err.startswith("locklab check: ") else err)
    try:
        j = json.loads(p.stdout) if p.returncode in (0, 1, 2) else None
    except (ValueError, RecursionError):
        j = None
    if not has_judged_holds(j):
        how = f"killed by signal {-p.returncode}" if p.returncode < 0 else err
        raise ToolError(f"{history.path}: `locklab check --json` gave no judgement: {how}")
    return {k: v for k, v in j.items() if k not in CHECK_OWN_FIELDS}


def merge_judgement(file_results, judged):
    """results.json's own fields (options, lab_lag, interrupted, ...) with every judged field
    replaced by the judgement's (a judged field the judge leaves out is dropped)."""
    merged = {k: v for k, v in (file_results or {}).items() if k not in JUDGED_FIELDS and k not in judged}
    merged.update(judged)
    return merged


class LinOp:
    """One operation of linearizability's "unplaceable" export: process, f, key, invoke and
    completion times (ns, the history's clock), outcome and value."""
    __slots__ = ("process", "f", "key", "invoke", "complete", "outcome", "value")

    def __init__(self, process, f, key, invoke, complete, outcome, value):
        self.process, self.f, self.key = process, f, key
        self.invoke, self.complete, self.outcome, self.value = invoke, complete, outcome, value


class Unplaceable:
    """linearizability.unplaceable: the first operation no order of the history can place
    (op), how many operations before it were placed (prefix_ops), the operations it conflicts
    with (conflicts) and the checker's sentence about it."""
    __slots__ = ("op", "prefix_ops", "conflicts", "sentence", "source")

    def __init__(self, op, prefix_ops, conflicts, sentence, source):
        self.op, self.prefix_ops, self.conflicts = op, prefix_ops, conflicts
        self.sentence, self.source = sentence, source


def _lin_op(x):
    """A LinOp from {"process","f","key","invoke_ns","complete_ns","outcome","value"}, or None
    when the object lacks what drawing it needs (a process and an invoke time)."""
    if not isinstance(x, dict) or not _int(x.get("process")) or not _int(x.get("invoke_ns")):
        return None
    done = x.get("complete_ns")
    return LinOp(x["process"], str(x.get("f") or "operation"), str(x.get("key") or ""), x["invoke_ns"],
                 done if _int(done) and done >= x["invoke_ns"] else None,
                 str(x.get("outcome") or "unknown"), x.get("value"))


def unplaceable_of(judged, file_results):
    """The judge's linearizability.unplaceable, as an Unplaceable, or None.

    A judge that does not export it yet (an older binary) leaves results.json's, taken only
    when the judge itself found the lock history not linearizable: it explains a verdict the
    history earned, never makes one. Malformed or absent: None (older results.json)."""
    def raw_of(doc):
        lin = doc.get("linearizability") if isinstance(doc, dict) else None
        return lin.get("unplaceable") if isinstance(lin, dict) else None
    raw, source = raw_of(judged), "judge"
    if raw is None:
        lock = _lookup(judged, ("linearizability", "lock", "verdict"))
        if lock != "invalid":
            return None
        raw, source = raw_of(file_results), "results.json"
    if not isinstance(raw, dict):
        return None
    op = _lin_op(raw.get("op"))
    if op is None:
        return None
    conflicts = [c for c in map(_lin_op, raw.get("conflicts") or []) if c is not None] \
        if isinstance(raw.get("conflicts"), list) else []
    prefix = raw.get("prefix_ops")
    sentence = raw.get("sentence")
    return Unplaceable(op, prefix if _int(prefix) else None, conflicts,
                       sentence.strip() if isinstance(sentence, str) and sentence.strip() else None, source)


class Run:
    """Everything the report needs from one run directory.

    results: results.json's own fields with the history's judgement in place of its judged
    ones (the judgement alone when there is no results.json); file_results: results.json as
    written (None when missing); ignored: [(field, says, judged)] where the two differ."""

    def __init__(self, run_dir):
        self.dir = os.path.abspath(run_dir)
        if not os.path.isdir(self.dir):
            raise RunError(f"{run_dir}: no such run directory")
        self.history = load_history(os.path.join(self.dir, "history.jsonl"))
        self.results_path = os.path.join(self.dir, "results.json")
        self.file_results = load_json(self.results_path, required=False)
        if self.file_results is not None and not isinstance(self.file_results, dict):
            raise RunError(f"{self.results_path}: expected a JSON object")
        self.scenario_text = load_text(os.path.join(self.dir, "scenario.toml"))
        h = self.history
        self.t0 = int(h.t[0])
        self.t_end = int(h.t[-1])
        self.notes = []   # one line each, shown at the top of the page
        # One judge: the history is judged again, every time; results.json never decides
        # the verdict, the counts or what is drawn.
        self.judged = judge_history(h)
        self.holds_source = "history.jsonl"
        self.ignored = disagreements(self.file_results, self.judged)
        if self.ignored:
            self.notes.append(f"{self.results_path} disagrees with the judgement of history.jsonl (the one judge, "
                              "`locklab check`) and was ignored for: "
                              + "; ".join(f"'{f}' says {_word(s)}, the history judges {_word(j)}"
                                          for f, s, j in self.ignored)
                              + ". Everything judged on this page is the history's.")
        self.results = merge_judgement(self.file_results, self.judged)
        where = "locklab check --json " + h.path
        self.holds = holds_from_judgement(self.judged, where)
        self.episodes, self.pairs_total = episodes_from_judgement(self.judged, self.holds, where)
        self.windows = compute_windows(h)
        self.clients = sorted(set(int(p) for p in np.unique(h.proc) if p >= 0))
        self.lock_keys = sorted(set(hd.key for hd in self.holds)) or self._lock_keys_fallback()
        self.unplaceable = unplaceable_of(self.judged, self.file_results)

    def _lock_keys_fallback(self):
        h = self.history
        codes = [h.f_code(f) for f in LOCK_FS if h.f_code(f) >= 0]
        if not codes:
            return []
        m = np.isin(h.f, codes)
        return sorted(set(h.key_names[k] for k in np.unique(h.key[m])))

    def sec(self, t_ns):
        """Seconds since the first event of the history."""
        return (t_ns - self.t0) / 1e9

    @property
    def duration_s(self):
        return self.sec(self.t_end)

    def result(self, *path, default=None):
        cur = self.results
        for p in path:
            if not isinstance(cur, dict) or p not in cur:
                return default
            cur = cur[p]
        return cur

    def crash_times(self):
        """(process, time_ns) of every start of a fault that kills the client it hits (its
        descriptor's trait kills_client)."""
        out = []
        for w in self.windows:
            if faultstyle.trait(w.fault, "kills_client"):
                for p in targets_of(w.detail):
                    out.append((p, w.start))
        return out

    def windows_at(self, t_ns):
        return [w for w in self.windows if w.start <= t_ns <= w.end]

    def ops(self, f_names, procs_only=True):
        """Indices (sorted order) of events whose f is in f_names (client processes only)."""
        h = self.history
        codes = [h.f_code(f) for f in f_names if h.f_code(f) >= 0]
        if not codes:
            return np.zeros(0, dtype=np.int64)
        m = np.isin(h.f, codes)
        if procs_only:
            m &= h.proc >= 0
        return np.nonzero(m)[0]

    def completed_ops(self, f_names):
        """Pairs (invoke_i, complete_i) per client and f, matching each completion with the
        open invoke of that process and f (Jepsen semantics: one outstanding op per process and
        f). Returns numpy arrays inv_t, done_t, type, proc, and the completion's event index."""
        h = self.history
        sel = self.ops(f_names)
        pending = {}
        inv_t, done_t, typ, proc, ci = [], [], [], [], []
        tl = h.t[sel].tolist()
        pl = h.proc[sel].tolist()
        yl = h.type[sel].tolist()
        fl = h.f[sel].tolist()
        kl = h.key[sel].tolist()
        for j, i in enumerate(sel.tolist()):
            k = (pl[j], fl[j], kl[j])
            if yl[j] == T_INVOKE:
                pending[k] = tl[j]
            else:
                st = pending.pop(k, None)
                if st is None:
                    continue
                inv_t.append(st)
                done_t.append(tl[j])
                typ.append(yl[j])
                proc.append(pl[j])
                ci.append(i)
        return (np.array(inv_t, dtype=np.int64), np.array(done_t, dtype=np.int64),
                np.array(typ, dtype=np.int8), np.array(proc, dtype=np.int64),
                np.array(ci, dtype=np.int64))
